// Fuzz of the archive readers (issue #11): thousands of mutated image archives of every format
// and compression — bit flips, cuts, splices and oversize fields in the compressed bytes and in
// the tar, random JSON shapes in manifest.json / index.json / blobs, broken links, plus the crafted
// bombs — through readArchiveIndex (what every archive in a node's images dir goes through) and
// readLocalArchive (before an upload). 0 crashes: every outcome is an index or an
// ArchiveError / HoldfastError, never a TypeError, a RangeError, a hang or a runaway allocation.
// Memory stays under a stated ceiling. Fixed seed and count; one line of figures is printed.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, MT } from '../../../lab/fixtures.ts';
import { dockerTagBomb, ociIndexBomb, zstdRleBomb, zstdWindowBomb } from '../../../lab/hostile.ts';
import type { ArchiveCompression } from '../../../src/shared/archiveSuffixes.ts';
import { ArchiveError, readArchiveIndex } from '../../../src/core/archives/format/readIndex.ts';
import { xxh32 } from '../../../src/core/archives/format/xxh32.ts';
import { HoldfastError } from '../../../src/core/errors.ts';
import { readLocalArchive } from '../../../src/core/usecases/import/localArchive.ts';
import { limit } from '../../../src/core/limits.ts';
import { chunked, compressWith, packTar, unpackTar, type TarEntry } from '../../support/archives.ts';
import { mutateBytes, randomJson, Rng } from './random.ts';

const SEED = 0x5eed11;
const CASES = 2_400;
/** What the whole run may add to RSS + ArrayBuffers at its peak, and keep at its end. */
const PEAK_CEILING = 384 * 2 ** 20;
const END_CEILING = 256 * 2 ** 20;

const COMPRESSIONS: ArchiveCompression[] = ['none', 'gzip', 'zstd', 'bzip2', 'lz4'];
const SUFFIX: Record<ArchiveCompression, string> = { none: '.tar', gzip: '.tar.gz', zstd: '.tar.zst', bzip2: '.tar.bz2', lz4: '.tar.lz4' };
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

interface Seed {
  label: string;
  data: Buffer;
  compression: ArchiveCompression;
}

let dir: string;
const seeds: Seed[] = [];
const hostile: Seed[] = [];
const bases: { label: string; members: TarEntry[] }[] = [];
const hints: string[] = [MT.ociIndex, MT.ociManifest, MT.ociConfig, MT.dockerManifest, 'application/vnd.docker.distribution.manifest.list.v2+json', '1.0.0', 'linux', 'amd64', 'arm64', 'unknown', 'attestation-manifest'];

/** zstd without a compressor: one frame of raw blocks (128 KiB window, no checksum). */
function zstdRaw(data: Buffer): Buffer {
  const out: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3])];
  const step = 128 * 1024;
  for (let off = 0; off < data.length || off === 0; off += step) {
    const part = data.subarray(off, off + step);
    const last = off + step >= data.length;
    const v = (part.length << 3) | (last ? 1 : 0);
    out.push(Buffer.from([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff]), part);
    if (data.length === 0) break;
  }
  return Buffer.concat(out);
}

/** lz4 without a compressor: one frame of stored blocks (4 MiB max, no checksums). */
function lz4Stored(data: Buffer): Buffer {
  const flg = 0x60;
  const bd = 0x70;
  const out: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, flg, bd, (xxh32(Buffer.from([flg, bd])) >>> 8) & 0xff])];
  const step = 4 * 1024 * 1024;
  for (let off = 0; off < data.length; off += step) {
    const part = data.subarray(off, off + step);
    const size = Buffer.alloc(4);
    size.writeUInt32LE((part.length | 0x80000000) >>> 0);
    out.push(size, part);
  }
  out.push(Buffer.alloc(4));
  return Buffer.concat(out);
}

/** In-process compression, so thousands of tar-level mutations need no child process. */
function compressQuick(rng: Rng, t: Buffer): { data: Buffer; compression: ArchiveCompression } {
  switch (rng.int(4)) {
    case 0:
      return { data: t, compression: 'none' };
    case 1:
      return { data: gzipSync(t, { level: 1 }), compression: 'gzip' };
    case 2:
      return { data: zstdRaw(t), compression: 'zstd' };
    default:
      return { data: lz4Stored(t), compression: 'lz4' };
  }
}

/** A tar-level mutation of a real archive's members (JSON shapes, links, names, duplicates). */
function mutateMembers(rng: Rng, members: TarEntry[]): TarEntry[] {
  const m = members.map((e) => ({ ...e }));
  const meta = m.filter((e) => /(^|\/)(manifest|index)\.json$|\.json$|^blobs\//.test(e.name));
  const n = 1 + rng.int(3);
  for (let i = 0; i < n; i++) {
    const target = rng.pick(meta.length ? meta : m);
    switch (rng.int(9)) {
      case 0:
      case 1:
        target.data = JSON.stringify(randomJson(rng, hints)); // a random shape where metadata was
        break;
      case 2: {
        // keep the shape, change one value (a digest, a type, a count) in place
        const text = String(target.data);
        const at = rng.int(Math.max(1, text.length));
        target.data = text.slice(0, at) + JSON.stringify(randomJson(rng, hints)).slice(0, 40) + text.slice(at + rng.int(20));
        break;
      }
      case 3: {
        // a blob with new JSON content, renamed to its digest, and index.json pointing at it
        const body = JSON.stringify(randomJson(rng, hints));
        const hex = sha(body);
        m.push({ name: `blobs/sha256/${hex}`, data: body });
        hints.push(`sha256:${hex}`);
        const idx = m.find((e) => e.name === 'index.json');
        if (idx) {
          idx.data = JSON.stringify({
            schemaVersion: 2,
            manifests: [{ mediaType: rng.pick([MT.ociIndex, MT.ociManifest, 'x']), digest: `sha256:${hex}`, size: body.length, annotations: { 'io.containerd.image.name': 'registry.local/f:1' } }],
          });
        }
        break;
      }
      case 4:
        m.splice(m.indexOf(target), 1); // a member gone
        break;
      case 5:
        m.push({ ...target }); // the same member twice
        break;
      case 6:
        m.push({ name: rng.pick(['manifest.json', 'index.json', target.name, 'l']), type: rng.pick(['symlink', 'link'] as const), linkname: rng.pick(['../../etc/passwd', '/abs', target.name, 'x/../y', 'manifest.json']) });
        break;
      case 7:
        target.name = rng.pick(['/abs', '../up', './' + target.name, target.name + '/', 'a//b', target.name.toUpperCase()]);
        break;
      default:
        m.push({ name: rng.pick(['oci-layout', 'repositories', 'x.json']), data: JSON.stringify(randomJson(rng, hints)) });
    }
  }
  return m;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-fuzz-ar-'));
  const specs = [
    { label: 'docker', format: 'docker' as const, images: [{ name: 'docker.io/library/a:1', layerBytes: 300 }, { name: 'registry.local/b:2', layerBytes: 200 }] },
    { label: 'oci', format: 'oci' as const, images: [{ name: 'docker.io/library/c:1', layerBytes: 300 }] },
    { label: 'oci-multi', format: 'oci' as const, images: [{ name: 'ghcr.io/o/m:1', platforms: ['linux/amd64', 'linux/arm64'], layerBytes: 200 }] },
  ];
  for (const s of specs) {
    const { tar: t } = await buildImageArchive({ format: s.format, images: s.images });
    const members = await unpackTar(t);
    bases.push({ label: s.label, members });
    for (const e of members) {
      hints.push(e.name);
      if (e.name.startsWith('blobs/sha256/')) hints.push('sha256:' + e.name.slice(13));
    }
    for (const c of COMPRESSIONS) seeds.push({ label: `${s.label}.${c}`, data: await compressWith(t, c), compression: c });
    seeds.push({ label: `${s.label}.lz4-legacy`, data: await compressWith(t, 'lz4', ['lz4', '-q', '-c', '-l']), compression: 'lz4' });
    seeds.push({ label: `${s.label}.lz4-linked`, data: await compressWith(t, 'lz4', ['lz4', '-q', '-c', '-B4', '-BD', '-BX']), compression: 'lz4' });
    seeds.push({ label: `${s.label}.zstd-long27`, data: await compressWith(t, 'zstd', ['zstd', '-q', '-c', '--long=27', '-']), compression: 'zstd' });
    const half = Math.floor(t.length / 2);
    seeds.push({
      label: `${s.label}.zstd-2frames`,
      data: Buffer.concat([await compressWith(t.subarray(0, half), 'zstd'), await compressWith(t.subarray(half), 'zstd', ['zstd', '-q', '-c', '--check', '-'])]),
      compression: 'zstd',
    });
    seeds.push({ label: `${s.label}.gzip-2members`, data: Buffer.concat([gzipSync(t.subarray(0, half)), gzipSync(t.subarray(half))]), compression: 'gzip' });
  }
  hostile.push(
    { label: 'tag-bomb', data: await dockerTagBomb(40_000, 40_000), compression: 'none' },
    { label: 'tag-bomb.gz', data: gzipSync(await dockerTagBomb(20_000, 30_000)), compression: 'gzip' },
    { label: 'index-bomb', data: await ociIndexBomb(5, 40), compression: 'none' },
    { label: 'index-bomb.zst', data: zstdRaw(await ociIndexBomb(5, 40)), compression: 'zstd' },
    { label: 'window-bomb', data: zstdWindowBomb(), compression: 'zstd' },
    { label: 'cut-header', data: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x7f]), compression: 'zstd' },
    { label: 'rle-bomb', data: zstdRleBomb(64), compression: 'zstd' },
    { label: 'lz4-empty-blocks', data: Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, (xxh32(Buffer.from([0x60, 0x70])) >>> 8) & 0xff]), Buffer.from([0, 0, 0, 0x80, 0, 0, 0, 0x80]), Buffer.alloc(4)]), compression: 'lz4' },
  );
  // Warm up (module loading, JIT, the bzip2 child) so the figures see the fuzzing itself.
  for (const s of seeds.slice(0, COMPRESSIONS.length)) await readArchiveIndex(chunked(s.data), { compression: s.compression });
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const allowed = (e: unknown): boolean => e instanceof ArchiveError || e instanceof HoldfastError;

describe('fuzz: archive readers', () => {
  it(`${CASES} mutated archives of every format and compression: 0 crashes, memory under the ceiling`, { timeout: 300_000 }, async () => {
    const rng = new Rng(SEED);
    const started = Date.now();
    const before = process.memoryUsage();
    const crashes: string[] = [];
    const outcomes = new Map<string, number>();
    const count = (k: string): void => void outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    let peakAfter = 0;

    for (let i = 0; i < CASES; i++) {
      const kind = rng.int(40);
      let data: Buffer;
      let compression: ArchiveCompression;
      let label: string;
      if (kind < 18) {
        const s = rng.pick(seeds);
        data = mutateBytes(rng, s.data);
        if (rng.chance(0.3)) data = mutateBytes(rng, data);
        ({ compression, label } = { compression: s.compression, label: `bytes of ${s.label}` });
      } else if (kind < 33) {
        const b = rng.pick(bases);
        ({ data, compression } = compressQuick(rng, await packTar(mutateMembers(rng, b.members))));
        label = `members of ${b.label} (${compression})`;
      } else if (kind < 38) {
        const b = rng.pick(bases);
        ({ data, compression } = compressQuick(rng, mutateBytes(rng, await packTar(b.members))));
        label = `tar bytes of ${b.label} (${compression})`;
      } else {
        const h = rng.pick(hostile);
        ({ data, compression } = h);
        label = `hostile ${h.label}`;
      }
      const viaFile = rng.chance(0.08);
      // Reads split anywhere, down to single bytes for small inputs (at most ~300 reads a case).
      const chunk = Math.max(rng.pick([1, 7, 512, 4096, 65536, 1 << 20]), Math.ceil(data.length / 300));
      try {
        if (viaFile) {
          const file = join(dir, `case-${i}${SUFFIX[compression]}`);
          await writeFile(file, data);
          const a = await readLocalArchive(file);
          expect(a.images.length).toBeGreaterThan(0);
          await rm(file);
        } else {
          const index = await readArchiveIndex(chunked(data, chunk), {
            compression,
            verifyBlobs: rng.chance(0.5),
            unimportable: rng.chance(0.5) ? 'describe' : 'reject',
          });
          // What a node's scan caches and the UI receives stays within the bounds.
          expect(index.images.length).toBeLessThanOrEqual(limit('archive.references'));
          expect(JSON.stringify(index).length).toBeLessThan(64 * 2 ** 20);
        }
        count('index');
      } catch (e) {
        if (allowed(e)) count(e instanceof ArchiveError ? e.reason : (e as HoldfastError).code);
        else crashes.push(`case ${i} (${label}, chunks of ${chunk}${viaFile ? ', via a file' : ''}): ${e instanceof Error ? `${e.name}: ${e.message}\n${e.stack?.split('\n').slice(1, 3).join('\n')}` : String(e)}`);
      }
      if (i % 200 === 0) {
        const m = process.memoryUsage();
        peakAfter = Math.max(peakAfter, m.rss + m.arrayBuffers);
      }
    }
    const after = process.memoryUsage();
    const peakRss = process.resourceUsage().maxRSS * 1024;
    const base = before.rss + before.arrayBuffers;
    const end = after.rss + after.arrayBuffers;
    const peak = Math.max(peakRss, peakAfter, end);
    console.log(
      `archive fuzz: ${CASES} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, ${crashes.length} crashes, outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}, ` +
        `RSS+ArrayBuffers ${(base / 2 ** 20).toFixed(0)} → ${(end / 2 ** 20).toFixed(0)} MiB, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB (ceilings +${PEAK_CEILING / 2 ** 20} peak, +${END_CEILING / 2 ** 20} at the end)`,
    );
    expect(crashes).toEqual([]);
    // The mutations reach the resolvers, not only the decoders.
    expect(outcomes.get('index') ?? 0).toBeGreaterThan(50);
    expect(outcomes.get('over-limit') ?? 0).toBeGreaterThan(10);
    expect(peak - base).toBeLessThan(PEAK_CEILING);
    expect(end - base).toBeLessThan(END_CEILING);
  });
});
