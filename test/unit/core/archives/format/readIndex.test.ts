import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, writeImageArchive, type WrittenImage } from '../../../../../lab/fixtures.ts';
import type { ArchiveCompression } from '../../../../../src/shared/archiveSuffixes.ts';
import { ArchiveError, configDigestFor, readArchiveIndex, type ArchiveIndex } from '../../../../../src/core/archives/format/readIndex.ts';
import { chunked, compressWith, noise, packTar, repackTar, type TarEntry } from '../../../../support/archives.ts';

const COMPRESSIONS: ArchiveCompression[] = ['none', 'gzip', 'zstd', 'bzip2', 'lz4'];
const sha = (b: Buffer | string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-archives-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (data: Buffer, compression: ArchiveCompression, opts: { maxJsonBytes?: number } = {}): Promise<ArchiveIndex> =>
  readArchiveIndex(chunked(data), { compression, ...opts });

async function expectArchiveError(p: Promise<unknown>, reason: ArchiveError['reason'], message?: RegExp): Promise<ArchiveError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'expected an ArchiveError').toBeInstanceOf(ArchiveError);
  const ae = e as ArchiveError;
  expect(ae.reason, ae.message).toBe(reason);
  if (message) expect(ae.message).toMatch(message);
  return ae;
}

function expectMatchesFixture(index: ArchiveIndex, written: WrittenImage[], format: 'docker' | 'oci'): void {
  expect(index.format).toBe(format);
  expect(index.images.map((i) => i.name)).toEqual(written.map((w) => w.name));
  for (const [i, w] of written.entries()) {
    const img = index.images[i]!;
    expect(img.targetDigest).toBe(format === 'oci' ? w.digest : null);
    expect(img.platforms.map((p) => p.platform)).toEqual(w.platforms.map((p) => p.platform));
    for (const [j, wp] of w.platforms.entries()) {
      const p = img.platforms[j]!;
      expect(p.configDigest).toBe(wp.configDigest);
      expect(p.manifestDigest).toBe(format === 'oci' ? wp.manifestDigest : null);
      expect(p.layers.map((l) => l.digest)).toEqual([wp.layerDigest]);
      expect(p.layers[0]!.size).toBeGreaterThan(0);
      expect(p.missing).toEqual([]);
    }
  }
}

describe('readArchiveIndex: every format × every compression (lab fixtures)', () => {
  for (const format of ['docker', 'oci'] as const) {
    for (const compression of COMPRESSIONS) {
      it(`${format} ${compression}`, async () => {
        const file = join(dir, `${format}-${compression}.archive`);
        const images =
          format === 'oci'
            ? [{ name: 'docker.io/library/app:1.0' }, { name: 'registry.local:5000/x/multi:2', platforms: ['linux/amd64', 'linux/arm64', 'linux/arm/v7'] }]
            : [{ name: 'docker.io/library/app:1.0' }, { name: 'docker.io/user/tool:3', layerBytes: 4096 }];
        const { images: written } = await writeImageArchive(file, { format, compression, images });
        const index = await readArchiveIndex(createReadStream(file), { compression });
        expectMatchesFixture(index, written, format);
        expect(index.uncompressedBytes % 512).toBe(0);
        expect(index.members).toBeGreaterThan(3);
      });
    }
  }
});

describe('readArchiveIndex: archives compressed by the real CLIs from a plain tar', () => {
  const variants: [ArchiveCompression, string[]][] = [
    ['lz4', ['lz4', '-z', '-q', '-c']],
    ['lz4', ['lz4', '-q', '-c', '-B4', '-BD']],
    ['lz4', ['lz4', '-q', '-c', '--content-size']],
    ['zstd', ['zstd', '-q', '-c', '-19']],
    ['bzip2', ['bzip2', '-c']],
    ['gzip', ['gzip', '-c', '-9']],
  ];
  let plain: { tar: Buffer; images: WrittenImage[] };
  beforeAll(async () => {
    plain = await buildImageArchive({
      format: 'oci',
      images: [
        { name: 'docker.io/library/web:1', layerBytes: 200 * 1024 },
        { name: 'ghcr.io/o/multi:1', platforms: ['linux/amd64', 'linux/arm64'], layerBytes: 100 * 1024 },
      ],
    });
  });
  it.each(variants)('%s %j', async (compression, argv) => {
    const z = await compressWith(plain.tar, compression, argv);
    const index = await read(z, compression);
    expectMatchesFixture(index, plain.images, 'oci');
    expect(index.uncompressedBytes).toBe(plain.tar.length);
  });
});

describe('readArchiveIndex: OCI specifics', () => {
  it('multi-platform index: platforms, manifests and configDigestFor', async () => {
    const { tar, images } = await buildImageArchive({
      format: 'oci',
      images: [{ name: 'docker.io/library/multi:1', platforms: ['linux/amd64', 'linux/arm64', 'linux/arm/v7'] }],
    });
    const index = await read(tar, 'none');
    const img = index.images[0]!;
    expect(img.targetMediaType).toBe('application/vnd.oci.image.index.v1+json');
    expect(img.refName).toBe('1');
    const byPlatform = Object.fromEntries(images[0]!.platforms.map((p) => [p.platform, p.configDigest]));
    expect(configDigestFor(img, { os: 'linux', architecture: 'amd64' })).toBe(byPlatform['linux/amd64']);
    expect(configDigestFor(img, { os: 'linux', architecture: 'arm64', variant: 'v8' })).toBe(byPlatform['linux/arm64']);
    expect(configDigestFor(img, { os: 'linux', architecture: 'arm', variant: 'v7' })).toBe(byPlatform['linux/arm/v7']);
    expect(configDigestFor(img, { os: 'linux', architecture: 's390x' })).toBeNull();
  });

  it('single-platform image: configDigestFor falls back to the only platform', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/one:1', platforms: ['linux/arm64'] }] });
    const img = (await read(tar, 'none')).images[0]!;
    expect(configDigestFor(img, { os: 'linux', architecture: 'amd64' })).toBe(images[0]!.configDigest);
  });

  async function editIndex(edit: (index: { manifests: Record<string, unknown>[] }) => void, extra: TarEntry[] = []): Promise<Buffer> {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/app:1' }] });
    const repacked = await repackTar(tar, (name, data) => {
      if (name !== 'index.json') return { name, data };
      const idx = JSON.parse(data.toString()) as { manifests: Record<string, unknown>[] };
      edit(idx);
      return { name, data: JSON.stringify(idx) };
    });
    return extra.length ? repackTar(Buffer.concat([repacked.subarray(0, repacked.length - 1024), await packTar(extra)]), (n, d) => ({ name: n, data: d })) : repacked;
  }

  it('names as k3s stores them: containerd annotation, else the ref.name verbatim (a bare tag too), else none', async () => {
    const tar = await editIndex((idx) => {
      const base = idx.manifests[0]!;
      const ann = (a: Record<string, string>) => ({ ...base, annotations: a });
      idx.manifests = [
        ann({ 'io.containerd.image.name': 'docker.io/library/app:1', 'org.opencontainers.image.ref.name': '1' }),
        ann({ 'org.opencontainers.image.ref.name': 'registry.local:5000/app:2' }),
        ann({ 'org.opencontainers.image.ref.name': '3.0' }),
        ann({ 'org.opencontainers.image.ref.name': 'app:4' }),
        ann({}),
      ];
    });
    const index = await read(tar, 'none');
    expect(index.images.map((i) => [i.name, i.refName])).toEqual([
      ['docker.io/library/app:1', '1'],
      ['registry.local:5000/app:2', 'registry.local:5000/app:2'],
      ['3.0', '3.0'],
      ['app:4', 'app:4'],
      [null, undefined],
    ]);
  });

  it('skips attestation manifests (unknown/unknown) inside an index', async () => {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/att:1', platforms: ['linux/amd64', 'linux/arm64'] }] });
    // Rewrite the nested index to add an attestation entry; the index digest changes, so fix index.json too.
    let oldDigest = '';
    let newBlob: Buffer | null = null;
    const step1 = await repackTar(tar, (name, data) => {
      const text = data.toString();
      if (name.startsWith('blobs/') && text.includes('"manifests"')) {
        const idx = JSON.parse(text) as { manifests: Record<string, unknown>[] };
        idx.manifests.push({
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: sha('not here'),
          size: 8,
          platform: { os: 'unknown', architecture: 'unknown' },
          annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
        });
        newBlob = Buffer.from(JSON.stringify(idx));
        oldDigest = 'sha256:' + name.slice('blobs/sha256/'.length);
        return { name: `blobs/sha256/${sha(newBlob).slice(7)}`, data: newBlob };
      }
      return { name, data };
    });
    const fixed = await repackTar(step1, (name, data) =>
      name === 'index.json' ? { name, data: data.toString().replace(oldDigest, sha(newBlob!)).replace(/"size":\d+/, `"size":${newBlob!.length}`) } : { name, data },
    );
    const img = (await read(fixed, 'none')).images[0]!;
    expect(img.platforms.map((p) => p.platform)).toEqual(['linux/amd64', 'linux/arm64']);
  });

  it('a missing layer of one platform is reported as data; the archive still reads', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/part:1', platforms: ['linux/amd64', 'linux/arm64'] }] });
    const armLayer = images[0]!.platforms[1]!.layerDigest;
    const cut = await repackTar(tar, (name, data) => (name === `blobs/sha256/${armLayer.slice(7)}` ? null : { name, data }));
    const img = (await read(cut, 'none')).images[0]!;
    expect(img.platforms[0]!.missing).toEqual([]);
    expect(img.platforms[1]!.missing).toEqual([armLayer]);
  });

  it('throws missing-blob when no platform is complete', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/gone:1' }] });
    const cut = await repackTar(tar, (name, data) => (name === `blobs/sha256/${images[0]!.platforms[0]!.layerDigest.slice(7)}` ? null : { name, data }));
    await expectArchiveError(read(cut, 'none'), 'missing-blob', /^missing blob: no image in the archive is complete/);
  });

  it('a missing target manifest is reported on the image', async () => {
    const { tar, images } = await buildImageArchive({
      format: 'oci',
      images: [{ name: 'docker.io/library/ok:1' }, { name: 'docker.io/library/nomanifest:1' }],
    });
    const target = images[1]!.digest;
    const cut = await repackTar(tar, (name, data) => (name === `blobs/sha256/${target.slice(7)}` ? null : { name, data }));
    const index = await read(cut, 'none');
    expect(index.images[1]!.platforms[0]!.missing).toEqual([target]);
    expect(index.images[1]!.platforms[0]!.configDigest).toBe('');
    expect(configDigestFor(index.images[1]!, { os: 'linux', architecture: 'amd64' })).toBeNull();
  });

  it('an oci-layout wins over manifest.json (docker save ≥ 25 writes both), as in containerd', async () => {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/both:1' }] });
    const both = await repackTar(tar, (name, data) => ({ name, data }));
    const withManifest = await repackTar(both, (name, data) => (name === 'oci-layout' ? { name, data } : { name, data }));
    const extra = await packTar([{ name: 'manifest.json', data: '[]' }]);
    const merged = await repackTar(Buffer.concat([withManifest.subarray(0, withManifest.length - 1024), extra]), (n, d) => ({ name: n, data: d }));
    expect((await read(merged, 'none')).format).toBe('oci');
  });

  it('a blob whose bytes do not match its name is corrupt', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/bad:1' }] });
    const cfg = images[0]!.configDigest.slice(7);
    const bad = await repackTar(tar, (name, data) => (name === `blobs/sha256/${cfg}` ? { name, data: data.toString().replace('amd64', 'arm64') } : { name, data }));
    // The config is only parsed when the index gives no platform, so use verifyBlobs to catch it.
    const e = await readArchiveIndex(chunked(bad), { compression: 'none', verifyBlobs: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ArchiveError);
    expect((e as ArchiveError).reason).toBe('corrupt');
  });
});

describe('readArchiveIndex: docker save specifics', () => {
  const config = (arch: string, variant?: string) => JSON.stringify({ os: 'linux', architecture: arch, ...(variant ? { variant } : {}), rootfs: { type: 'layers', diff_ids: [] } });

  it('several images and tags, untagged images, symlinked layers, metadata last', async () => {
    const c1 = config('amd64');
    const c2 = config('arm64', 'v8');
    const layerA = noise(10_000, 1);
    const layerB = noise(20_000, 2);
    const h1 = sha(c1).slice(7);
    const h2 = sha(c2).slice(7);
    const tar = await packTar([
      { name: 'aaaa/layer.tar', data: layerA },
      { name: 'bbbb/layer.tar', data: layerB },
      // docker save dedups a layer shared by two images with a relative symlink
      { name: 'cccc/layer.tar', type: 'symlink', linkname: '../aaaa/layer.tar' },
      { name: `${h1}.json`, data: c1 },
      { name: `blobs/sha256/${h2}`, data: c2 },
      { name: 'repositories', data: '{}' },
      {
        name: 'manifest.json',
        data: JSON.stringify([
          { Config: `${h1}.json`, RepoTags: ['app:1.0', 'app:latest', 'user/app:2', 'registry.local:5000/x/y:2'], Layers: ['aaaa/layer.tar', 'bbbb/layer.tar'] },
          { Config: `blobs/sha256/${h2}`, RepoTags: null, Layers: ['cccc/layer.tar'] },
        ]),
      },
    ]);
    for (const compression of ['none', 'gzip'] as const) {
      const index = await read(await compressWith(tar, compression), compression);
      expect(index.format).toBe('docker');
      expect(index.images.map((i) => i.name)).toEqual([
        'docker.io/library/app:1.0',
        'docker.io/library/app:latest',
        'docker.io/user/app:2',
        'registry.local:5000/x/y:2',
        null,
      ]);
      const first = index.images[0]!;
      expect(first.targetDigest).toBeNull();
      expect(first.platforms).toEqual([
        {
          platform: 'linux/amd64',
          manifestDigest: null,
          configDigest: sha(c1),
          layers: [
            { digest: sha(layerA), size: layerA.length },
            { digest: sha(layerB), size: layerB.length },
          ],
          missing: [],
        },
      ]);
      const untagged = index.images[4]!;
      expect(untagged.platforms[0]!.platform).toBe('linux/arm64/v8');
      expect(untagged.platforms[0]!.layers).toEqual([{ digest: sha(layerA), size: layerA.length }]);
      expect(configDigestFor(untagged, { os: 'linux', architecture: 'arm64' })).toBe(sha(c2));
    }
  });

  it('a missing layer fails the whole archive, as containerd does for docker-save', async () => {
    const c = config('amd64');
    const tar = await packTar([
      { name: `${sha(c).slice(7)}.json`, data: c },
      { name: 'manifest.json', data: JSON.stringify([{ Config: `${sha(c).slice(7)}.json`, RepoTags: ['a:1'], Layers: ['nope/layer.tar'] }]) },
    ]);
    await expectArchiveError(read(tar, 'none'), 'missing-blob', /layer nope\/layer.tar of a:1/);
  });

  it('a config that does not hash to its name is corrupt', async () => {
    const c = config('amd64');
    const tar = await packTar([
      { name: `${'0'.repeat(64)}.json`, data: c },
      { name: 'manifest.json', data: JSON.stringify([{ Config: `${'0'.repeat(64)}.json`, RepoTags: ['a:1'], Layers: [] }]) },
    ]);
    await expectArchiveError(read(tar, 'none'), 'corrupt', /does not match its digest/);
  });

  it('an invalid RepoTag is corrupt (containerd refuses the archive)', async () => {
    const c = config('amd64');
    const h = sha(c).slice(7);
    const tar = await packTar([
      { name: `${h}.json`, data: c },
      { name: 'manifest.json', data: JSON.stringify([{ Config: `${h}.json`, RepoTags: ['Bad:Tag:x'], Layers: [] }]) },
    ]);
    await expectArchiveError(read(tar, 'none'), 'corrupt', /invalid reference/);
  });

  it('metadata larger than maxJsonBytes is reported, not silently skipped', async () => {
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1' }] });
    await expectArchiveError(read(tar, 'none', { maxJsonBytes: 64 }), 'unsupported', /larger than the metadata size limit/);
  });
});

describe('readArchiveIndex: broken and hostile archives', () => {
  let tar: Buffer;
  beforeAll(async () => {
    ({ tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1', layerBytes: 64 * 1024 }] }));
  });

  it.each(COMPRESSIONS)('%s: cut short → truncated, naming where', async (compression) => {
    const z = await compressWith(tar, compression);
    for (const cut of [1, Math.floor(z.length / 2)]) {
      const e = await expectArchiveError(read(z.subarray(0, z.length - cut), compression), 'truncated');
      expect(e.message).toMatch(/^truncated: /);
      if (compression !== 'none') expect(e.message).toContain(compression);
    }
  });

  it('random bytes named .tar.gz → corrupt', async () => {
    await expectArchiveError(read(noise(50_000, 5), 'gzip'), 'corrupt', /^corrupt: this is not gzip data/);
  });

  it('random bytes named .tar → corrupt: not a tar', async () => {
    await expectArchiveError(read(noise(50_000, 5), 'none'), 'corrupt', /does not contain a tar archive/);
  });

  it('a zstd file named .tar → corrupt, saying it is zstd', async () => {
    await expectArchiveError(read(await compressWith(tar, 'zstd'), 'none'), 'corrupt', /zstd-compressed/);
  });

  it('a valid tar without manifest.json or index.json → not-an-image-archive', async () => {
    const plain = await packTar([{ name: 'hello.txt', data: 'hi' }, { name: 'etc/x.json', data: '{}' }]);
    await expectArchiveError(read(plain, 'none'), 'not-an-image-archive', /neither manifest.json nor index.json/);
  });

  it('blobs without manifest.json or index.json → truncated: an OCI archive cut at a member boundary', async () => {
    // What ctr's transfer-service export left once: the blobs, and not the index, manifest.json
    // and oci-layout it writes last (a valid tar, so only the layout tells that it is short).
    const blob = Buffer.from('{"schemaVersion":2}');
    const digest = createHash('sha256').update(blob).digest('hex');
    const plain = await packTar([{ name: 'blobs/', type: 'directory' }, { name: 'blobs/sha256/', type: 'directory' }, { name: `blobs/sha256/${digest}`, data: blob }]);
    await expectArchiveError(read(plain, 'none'), 'truncated', /blobs but neither manifest.json nor index.json/);
  });

  it('index.json without oci-layout → not-an-image-archive (containerd requires the layout file)', async () => {
    const plain = await packTar([{ name: 'index.json', data: '{"manifests":[]}' }]);
    await expectArchiveError(read(plain, 'none'), 'not-an-image-archive', /no oci-layout/);
  });

  it('an empty file → truncated', async () => {
    await expectArchiveError(read(Buffer.alloc(0), 'none'), 'truncated', /empty/);
  });

  it.each([
    ['../../etc/passwd', /climbs out/],
    ['a/../../b', /climbs out/],
    ['/etc/passwd', /absolute/],
  ])('member %s → unsafe-path', async (name, msg) => {
    // tar-stream's pack keeps names verbatim, so these reach the reader as written.
    const evil = await packTar([{ name, data: 'root:x:0:0' }, ...manifestOnly()]);
    await expectArchiveError(read(evil, 'none'), 'unsafe-path', msg);
  });

  it.each([
    ['symlink', 'x/link', '../../etc/shadow'],
    ['symlink', 'link', '/etc/shadow'],
    ['link', 'hard', '../outside'],
  ] as const)('%s %s → %s is unsafe-path', async (type, name, linkname) => {
    const evil = await packTar([{ name, type, linkname }, ...manifestOnly()]);
    await expectArchiveError(read(evil, 'none'), 'unsafe-path', /points (outside|to the absolute)/);
  });

  it('a symlink that stays inside the archive is fine', async () => {
    const ok = await packTar([{ name: 'a/b', type: 'symlink', linkname: '../c' }, { name: 'c', data: 'x' }, ...manifestOnly()]);
    await expectArchiveError(read(ok, 'none'), 'not-an-image-archive');
  });

  function manifestOnly(): TarEntry[] {
    return [{ name: 'readme', data: 'not an image' }];
  }
});

describe('readArchiveIndex: streaming', () => {
  it('metadata after a large blob is found (manifest.json last), with small chunks', async () => {
    const { tar, images } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/big:1', layerBytes: 3 * 1024 * 1024 }] });
    const index = await readArchiveIndex(chunked(tar, 7919), { compression: 'none' });
    expect(index.images[0]!.platforms[0]!.configDigest).toBe(images[0]!.configDigest);
    expect(index.images[0]!.platforms[0]!.layers[0]!.digest).toBe(images[0]!.platforms[0]!.layerDigest);
  });

  it('an aborted read rejects and destroys the source', async () => {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/a:1' }] });
    const ac = new AbortController();
    const src = chunked(tar, 512);
    const p = readArchiveIndex(src, { compression: 'none', signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(src.destroyed).toBe(true);
  });

  it('a source that closes early is truncated, not a hang', async () => {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/a:1' }] });
    // Gives the first half, then stalls like a dropped SSH channel, then closes.
    let sent = false;
    const src = new Readable({
      read() {
        if (!sent) this.push(tar.subarray(0, tar.length >> 1));
        sent = true;
      },
    });
    const p = readArchiveIndex(src, { compression: 'none' });
    setTimeout(() => src.destroy(), 20);
    await expectArchiveError(p, 'truncated', /closed before the end/);
  });
});
