// Issue #11: crafted archives that used to take the whole process down (out of heap, gigabytes of
// ArrayBuffers, 20 s of work) are refused at once with an error naming the limit they exceed, in
// bounded memory; work stays linear (tags share one layer list). Each case here failed on the
// code before the limits (src/core/limits.ts): a crash, a multi-GB allocation, or no refusal.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../../../../lab/fixtures.ts';
import { dockerTagBomb, ociIndexBomb, zstdRleBomb, zstdWindowBomb } from '../../../../../lab/hostile.ts';
import { ArchiveError, readArchiveIndex } from '../../../../../src/core/archives/format/readIndex.ts';
import type { ArchiveCompression } from '../../../../../src/shared/archiveSuffixes.ts';
import { Lz4FrameDecoder } from '../../../../../src/core/archives/format/lz4.ts';
import { HoldfastError } from '../../../../../src/core/errors.ts';
import { readLocalArchive } from '../../../../../src/core/usecases/import/localArchive.ts';
import { chunked, compressWith, packTar } from '../../../../support/archives.ts';

const MiB = 1024 * 1024;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-hostile-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * How far memory rose during a test: the kernel's peak RSS (a synchronous decode blocks every
 * timer, so sampling would miss it) and, at the end, ArrayBuffers (allocated outside the JS heap,
 * often untouched and so not resident: a 2 GB window shows here, not in RSS). The peak is the
 * process's: the tests with the tightest bounds come first in this file (a fresh worker per file).
 */
/**
 * Memory this operation grew the process by: the highest RSS sampled while it ran (not the
 * worker's lifetime peak, which earlier test files in the same worker may have set) and the
 * growth of ArrayBuffers, which hold decoder windows outside the JS heap.
 */
function watchMemory(): { stop: () => number } {
  const base = process.memoryUsage();
  let peak = base.rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  return {
    stop: () => {
      clearInterval(timer);
      const now = process.memoryUsage();
      peak = Math.max(peak, now.rss);
      return Math.max(peak - base.rss, now.arrayBuffers - base.arrayBuffers);
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<ArchiveError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'expected an ArchiveError').toBeInstanceOf(ArchiveError);
  return e as ArchiveError;
}

const read = (data: Buffer, compression: ArchiveCompression = 'none', extra: { expansionGraceBytes?: number } = {}) =>
  readArchiveIndex(chunked(data, 1 << 20), { compression, ...extra });

describe('a file that ends early', () => {
  it('through readLocalArchive: REFUSED as truncated, saying how to get a whole file (ctr export --local)', async () => {
    const whole = await packTar([{ name: 'a.json', data: '{}' }, { name: 'b.bin', data: Buffer.alloc(4000, 1) }]);
    const file = join(dir, 'cut.tar');
    await writeFile(file, whole.subarray(0, 1500));
    const e = await readLocalArchive(file).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).code).toBe('REFUSED');
    expect((e as HoldfastError).message).toMatch(/^cut\.tar was refused: truncated: /);
    expect((e as HoldfastError).hint).toMatch(/^Nothing was sent\. The file ends early: copy it again.*ctr images export.*--local/);
  });
});

describe('zstd: the decoder never allocates a window past the limit, and bombs stop', () => {
  it('the 806-byte ~2 GB-window frame: refused through readLocalArchive at once, no window allocated', async () => {
    const file = join(dir, 'window.tar.zst');
    await writeFile(file, zstdWindowBomb());
    const mem = watchMemory();
    const e = await readLocalArchive(file).catch((x: unknown) => x);
    expect(mem.stop()).toBeLessThan(128 * MiB); // the declared window is ~2 GB
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).message).toContain('window.tar.zst was refused: unsupported: k3s cannot import it: its zstd frame declares a 1.9 GiB window');
  });

  it('a 9-byte single-segment header cut inside its content size: truncated, not a 2 GB allocation', async () => {
    // Frame_Content_Size field of 8 bytes, only 4 present: a decoder filling the rest with zeros
    // would size its window at 0x7f000000 bytes.
    const cut = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, (3 << 6) | 0x20, 0x00, 0x00, 0x00, 0x7f]);
    const mem = watchMemory();
    const e = await refusal(read(cut, 'zstd'));
    expect(mem.stop()).toBeLessThan(128 * MiB); // the declared window is ~2 GB
    expect(e.reason).toBe('truncated');
    expect(e.message).toBe('truncated: the zstd stream ends inside a frame header');
  });

  it('an RLE block claiming more than zstd allows (2 MiB from 4 bytes) is corrupt', async () => {
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 10 << 3]);
    const v = ((2 * MiB - 1) << 3) | (1 << 1) | 1;
    const block = Buffer.from([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, 0]);
    const e = await refusal(read(Buffer.concat([header, block]), 'zstd'));
    expect(e.reason).toBe('corrupt');
  });

  it('8 KB of RLE blocks in one chunk (256 MiB of zeros) decode with back-pressure: bounded memory', { timeout: 60_000 }, async () => {
    const bomb = zstdRleBomb(2_048);
    const mem = watchMemory();
    const e = await refusal(readArchiveIndex(Readable.from([bomb]), { compression: 'zstd' }));
    expect(mem.stop()).toBeLessThan(128 * MiB);
    // Under the grace of archive.expansionGraceBytes: read to the end, where it holds no image.
    expect(e.reason).toBe('not-an-image-archive');
  });

  it('past the grace, more than archive.expansionRatio times its size: refused naming the limit', async () => {
    const e = await refusal(read(zstdRleBomb(4_096), 'zstd', { expansionGraceBytes: 64 * MiB }));
    expect(e.limit).toBe('archive.expansionRatio');
    expect(e.message).toMatch(/^too large: the zstd stream decompresses to more than 1,000 times its size \([\d,]+ bytes from 16,390\), over the limit archive\.expansionRatio \(1,000:1\)$/);
  });
});

describe('docker-save: 40,000 RepoTags × 40,000 Layers in a ~0.5 MB archive', () => {
  it('is refused naming the limit, without building a layer list per tag', async () => {
    const bomb = await dockerTagBomb(40_000, 40_000);
    expect(bomb.length).toBeLessThan(600_000);
    const mem = watchMemory();
    const e = await refusal(read(bomb));
    expect(mem.stop()).toBeLessThan(256 * MiB);
    expect(e.reason).toBe('over-limit');
    expect(e.limit).toBe('archive.references');
    expect(e.message).toBe('too large: manifest.json names more than 10,000 images (40,000 by entry 1), over the limit archive.references (10,000)');
  });

  it('as many tags as allowed, each with one layer list: the tags share it', async () => {
    const ok = await dockerTagBomb(10_000, 20);
    const index = await read(ok);
    expect(index.images).toHaveLength(10_000);
    expect(index.images[0]!.platforms[0]!.layers).toHaveLength(20);
    expect(index.images[9_999]!.platforms).toBe(index.images[0]!.platforms);
  });

  it('few tags, too many layers each: archive.layersPerImage', async () => {
    const e = await refusal(read(await dockerTagBomb(2, 1_001)));
    expect(e.limit).toBe('archive.layersPerImage');
    expect(e.message).toContain('t:0 has 1,001 layers');
  });

  it('tags × layers over the product bound: archive.expandedEntries', async () => {
    const e = await refusal(read(await dockerTagBomb(1_000, 300)));
    expect(e.limit).toBe('archive.expandedEntries');
    expect(e.message).toMatch(/^too large: the images manifest\.json lists expand to more than 250,000 platform and layer records/);
  });

  it('through readLocalArchive (CLI upload, app import, POST /api/local.inspect): REFUSED naming the limit', async () => {
    const file = join(dir, 'tags.tar');
    await writeFile(file, await dockerTagBomb(40_000, 40_000));
    const e = await readLocalArchive(file).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).code).toBe('REFUSED');
    expect((e as HoldfastError).message).toContain('tags.tar was refused: too large: manifest.json names more than 10,000 images');
    expect((e as HoldfastError).message).toContain('over the limit archive.references (10,000)');
  });
});

describe('OCI: 5 nested indexes × 40 entries in a ~50 KB archive', () => {
  it('is refused naming archive.expandedEntries, in bounded memory', async () => {
    const bomb = await ociIndexBomb(5, 40);
    expect(bomb.length).toBeLessThan(60_000);
    const mem = watchMemory();
    const e = await refusal(read(bomb));
    expect(mem.stop()).toBeLessThan(256 * MiB);
    expect(e.limit).toBe('archive.expandedEntries');
    expect(e.message).toContain('the images index.json lists expand to more than 250,000 platform and layer records');
  });

  it('the same shape, small: every nested platform is listed', async () => {
    const index = await read(await ociIndexBomb(3, 4));
    expect(index.images).toHaveLength(4);
    expect(index.images[0]!.platforms).toHaveLength(16);
    expect(index.images[0]!.platforms[0]).toMatchObject({ platform: 'linux/amd64', missing: [] });
  });

  it('nested deeper than archive.indexDepth', async () => {
    const e = await refusal(read(await ociIndexBomb(7, 1)));
    expect(e.limit).toBe('archive.indexDepth');
    expect(e.message).toMatch(/^too large: image indexes are nested more than 4 deep at sha256:[0-9a-f]{64}, over the limit archive\.indexDepth \(4\)$/);
  });

  it('one nested index with more entries than archive.indexEntries', async () => {
    const e = await refusal(read(await ociIndexBomb(2, 1_001)));
    expect(e.limit).toBe('archive.indexEntries');
  });
});

describe('tar members', () => {
  it('more than archive.members members', { timeout: 60_000 }, async () => {
    // 100,001 empty members: one 512-byte header repeated (51 MB), then the end-of-archive blocks.
    const one = (await packTar([{ name: 'f', data: '' }])).subarray(0, 512);
    const blocks = [...Array.from({ length: 100_001 }, () => one), Buffer.alloc(1024)];
    const e = await refusal(read(Buffer.concat(blocks)));
    expect(e.limit).toBe('archive.members');
    expect(e.message).toBe('too large: the archive has more than 100,000 tar members, over the limit archive.members (100,000)');
  });

  it('a member name longer than archive.memberNameBytes (through a pax header)', async () => {
    const e = await refusal(read(await packTar([{ name: `${'d/'.repeat(2_100)}x`, data: 'x' }])));
    expect(e.limit).toBe('archive.memberNameBytes');
    expect(e.message).toContain("a tar member's name is 4,201 bytes long");
  });
});

describe('lz4: a zero-length block decodes the same wherever a read splits it', () => {
  it('every split of a real lz4 archive with a stored empty block inserted', async () => {
    const { tar: plain } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/z:1', layerBytes: 4096 }] });
    const z = await compressWith(plain, 'lz4', ['lz4', '-q', '-c', '-B4']);
    const flg = z[4]!;
    const descriptor = 4 + 2 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0) + 1;
    expect(flg & 0x10, 'no block checksums: an empty block needs none').toBe(0);
    const withEmpty = Buffer.concat([z.subarray(0, descriptor), Buffer.from([0, 0, 0, 0x80]), z.subarray(descriptor)]);
    const decode = (a: Buffer, b: Buffer): string => {
      const d = new Lz4FrameDecoder();
      const out: Buffer[] = [];
      d.push(a, (x) => out.push(x));
      d.push(b, (x) => out.push(x));
      d.end((x) => out.push(x));
      return Buffer.concat(out).toString('base64');
    };
    const want = plain.toString('base64');
    for (let split = 0; split <= descriptor + 12; split++) {
      expect(decode(withEmpty.subarray(0, split), withEmpty.subarray(split)), `split at ${split}`).toBe(want);
    }
    // The split the report found: the read ends right after the empty block's size field.
    const index = await readArchiveIndex(Readable.from([withEmpty.subarray(0, descriptor + 4), withEmpty.subarray(descriptor + 4)]), { compression: 'lz4' });
    expect(index.images.map((i) => i.name)).toEqual(['docker.io/library/z:1']);
  });
});
