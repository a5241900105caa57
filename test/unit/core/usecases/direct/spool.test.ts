// Direct delivery's local source (src/core/usecases/direct/spool.ts): archives of every kind and
// compression become image trees whose every blob is spooled to a file holding exactly the bytes
// its digest names; docker-save archives get the manifests containerd's importer writes; chunked
// hauls, unsupported layouts and corrupt or hostile archives are refused and leave nothing behind.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../../../../lab/fixtures.ts';
import { writeLayeredArchive, type LayeredImage } from '../../../../../lab/layered.ts';
import { packTar, prng, type TarEntry } from '../../../../../lab/tar.ts';
import { compressWith, unpackTar } from '../../../../support/archives.ts';
import { ArchiveError } from '../../../../../src/core/archives/format/errors.ts';
import { HoldfastError } from '../../../../../src/core/errors.ts';
import type { ArchiveCompression } from '../../../../../src/shared/archiveSuffixes.ts';
import type { BundleImage, BundleIndex, BundleManifest, SpooledBundle } from '../../../../../src/core/usecases/direct/bundle.ts';
import { ROOTS, spoolBundle, spoolsByName, ZARF_IMAGES } from '../../../../../src/core/usecases/direct/spool.ts';
import { SignatureMembers } from '../../../../../src/core/signatures/archive.ts';
import { localDiffId } from '../../../../../src/core/usecases/direct/diffId.ts';
import { readLocalArchive } from '../../../../../src/core/usecases/import/localArchive.ts';
import { ociDeclaredSizeLie, tarHeaderClaiming, withJunkMember } from '../../../../../lab/hostile.ts';

const COMPRESSIONS: ArchiveCompression[] = ['none', 'gzip', 'zstd', 'bzip2', 'lz4'];
const SUFFIX: Record<ArchiveCompression, string> = { none: '.tar', gzip: '.tar.gz', zstd: '.tar.zst', bzip2: '.tar.bz2', lz4: '.tar.lz4' };
const sha = (b: Buffer | string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const hex = (d: string): string => d.slice(7);

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-spool-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A fresh directory per archive, and its own spool directory. */
async function place(name: string, data: Buffer): Promise<{ file: string; spool: string }> {
  const d = join(dir, `case-${n++}`);
  await mkdir(d);
  const file = join(d, name);
  await writeFile(file, data);
  return { file, spool: join(d, 'spool') };
}

async function spool(name: string, data: Buffer): Promise<SpooledBundle> {
  const { file, spool: s } = await place(name, data);
  return spoolBundle(file, { dir: s });
}

/** Every spooled file holds exactly the bytes its digest names. */
async function expectFilesMatchDigests(b: SpooledBundle): Promise<void> {
  expect(b.files.size).toBeGreaterThan(0);
  for (const [digest, file] of b.files) expect(sha(await readFile(file)), file).toBe(digest);
}

/** Every blob a tree references that the archive holds is in `files`, at its descriptor's size. */
async function expectTreeSpooled(b: SpooledBundle, node: BundleManifest | BundleIndex): Promise<void> {
  if ('index' in node) {
    expect(b.files.has(node.index.digest)).toBe(true);
    for (const e of node.entries) if (e.manifest) await expectTreeSpooled(b, e.manifest);
    return;
  }
  for (const blob of [node.manifest, node.config, ...node.layers]) {
    const f = b.files.get(blob.digest);
    expect(f, blob.digest).toBeDefined();
    expect((await readFile(f!)).length).toBe(blob.size);
  }
}

/**
 * `p` fails as the upload and the import refuse an archive (localArchive.ts archiveRefusal): REFUSED
 * naming the file, "Nothing was sent" in the hint, caused by an ArchiveError of this reason whose
 * message says this.
 */
async function refusal(p: Promise<unknown>, reason: ArchiveError['reason'], message: RegExp): Promise<void> {
  const outcome = await p.then(
    () => 'resolved',
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(HoldfastError);
  expect(outcome).toMatchObject({ code: 'REFUSED', message: expect.stringMatching(/^\S+ was refused: /), hint: expect.stringMatching(/^Nothing was sent\./) });
  const cause = (outcome as HoldfastError).cause;
  expect(cause).toBeInstanceOf(ArchiveError);
  expect(cause).toMatchObject({ reason, message: expect.stringMatching(message) });
}

const byName = (b: SpooledBundle, name: string): BundleImage => {
  const img = b.images.find((i) => i.names.includes(name));
  expect(img, `image ${name} in ${JSON.stringify(b.images.map((i) => i.names))}`).toBeDefined();
  return img!;
};

describe('docker-save and OCI archives, every compression', () => {
  for (const compression of COMPRESSIONS) {
    it(`docker-save (${compression}): containerd's manifest digests, names, exact bytes`, async () => {
      const { tar, images } = await buildImageArchive({
        format: 'docker',
        images: [{ name: 'docker.io/library/app:1.0' }, { name: 'registry.local:5000/team/tool:2', layerBytes: 4096 }],
      });
      const b = await spool('images' + SUFFIX[compression], await compressWith(tar, compression));
      try {
        expect(b.kind).toBe('docker');
        expect(b.images).toHaveLength(2);
        for (const w of images) {
          const img = byName(b, w.name);
          const t = img.target as BundleManifest;
          // lab/fixtures.ts computes the digest containerd's importer records for this archive
          expect(t.manifest.digest).toBe(w.digest);
          expect(t.config.digest).toBe(w.configDigest);
          expect(t.config.mediaType).toBe('application/vnd.docker.container.image.v1+json');
          expect(t.layers.map((l) => [l.digest, l.mediaType])).toEqual([[w.platforms[0]!.layerDigest, 'application/vnd.docker.image.rootfs.diff.tar.gzip']]);
          expect(t.platform).toEqual({ os: 'linux', architecture: 'amd64' });
          await expectTreeSpooled(b, t);
        }
        await expectFilesMatchDigests(b);
      } finally {
        await b.dispose();
      }
    });

    it(`OCI layout (${compression}): single- and multi-platform trees, names as k3s gives them`, async () => {
      const { tar, images } = await buildImageArchive({
        format: 'oci',
        images: [{ name: 'docker.io/library/app:1.0' }, { name: 'registry.local/multi:3', platforms: ['linux/amd64', 'linux/arm64/v8'] }],
      });
      const b = await spool('images' + SUFFIX[compression], await compressWith(tar, compression));
      try {
        expect(b.kind).toBe('oci');
        const single = byName(b, 'docker.io/library/app:1.0').target as BundleManifest;
        expect(single.manifest).toEqual({ digest: images[0]!.digest, size: expect.any(Number), mediaType: 'application/vnd.oci.image.manifest.v1+json' });
        expect(single.platform).toEqual({ os: 'linux', architecture: 'amd64' });
        const multi = byName(b, 'registry.local/multi:3').target as BundleIndex;
        expect(multi.index.digest).toBe(images[1]!.digest);
        expect(multi.entries.map((e) => [e.descriptor.platform, e.descriptor.attestation, (e.manifest as BundleManifest).config.digest])).toEqual(
          images[1]!.platforms.map((p) => {
            const [os, architecture, variant] = p.platform.split('/');
            return [variant ? { os, architecture, variant } : { os, architecture }, false, p.configDigest];
          }),
        );
        await expectTreeSpooled(b, multi);
        await expectFilesMatchDigests(b);
        // index.json and oci-layout are no blobs of any image: not kept
        expect(b.files.size).toBe(1 * 3 + 1 + 2 * 3);
      } finally {
        await b.dispose();
      }
    });
  }
});

/** A docker-save archive with one layer stored as `layer` (its bytes as given). */
async function dockerSave(layer: Buffer, tag = 'docker.io/library/raw:1'): Promise<{ tar: Buffer; config: Buffer }> {
  const config = Buffer.from(JSON.stringify({ architecture: 'arm64', os: 'linux', variant: 'v8', rootfs: { type: 'layers', diff_ids: [] } }));
  const tar = await packTar(
    [
      { name: `${hex(sha(config))}.json`, data: config },
      { name: 'abc/layer.tar', data: layer },
      { name: 'manifest.json', data: JSON.stringify([{ Config: `${hex(sha(config))}.json`, RepoTags: [tag], Layers: ['abc/layer.tar'] }]) },
    ],
    { parentDirs: true },
  );
  return { tar, config };
}

describe('docker-save manifests as containerd writes them', () => {
  const cases: [string, (t: Buffer) => Promise<Buffer>, string][] = [
    ['uncompressed', async (t) => t, 'application/vnd.docker.image.rootfs.diff.tar'],
    ['gzip', async (t) => gzipSync(t), 'application/vnd.docker.image.rootfs.diff.tar.gzip'],
    // containerd's importer knows one compressed layer type: a zstd layer is tagged tar.gzip too
    ['zstd', (t) => compressWith(t, 'zstd'), 'application/vnd.docker.image.rootfs.diff.tar.gzip'],
    // and bzip2 is not among the compressions it detects: plain tar
    ['bzip2', (t) => compressWith(t, 'bzip2'), 'application/vnd.docker.image.rootfs.diff.tar'],
  ];
  for (const [what, compress, mediaType] of cases) {
    it(`a ${what} layer: the exact manifest bytes, key order and all`, async () => {
      const layer = await compress(await packTar([{ name: 'hf/x.bin', data: prng(what, 3000) }]));
      const { tar, config } = await dockerSave(layer);
      const b = await spool('raw.tar', tar);
      try {
        const t = byName(b, 'docker.io/library/raw:1').target as BundleManifest;
        const expected =
          `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",` +
          `"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"${sha(config)}","size":${config.length}},` +
          `"layers":[{"mediaType":"${mediaType}","digest":"${sha(layer)}","size":${layer.length}}]}`;
        expect((await readFile(b.files.get(t.manifest.digest)!)).toString()).toBe(expected);
        expect(t.manifest).toEqual({ digest: sha(expected), size: expected.length, mediaType: 'application/vnd.docker.distribution.manifest.v2+json' });
        expect(t.platform).toEqual({ os: 'linux', architecture: 'arm64', variant: 'v8' });
        await expectFilesMatchDigests(b);
      } finally {
        await b.dispose();
      }
    });
  }

  it('tags of one entry name one image; familiar tags are normalised; untagged entries are left out', async () => {
    const layer = gzipSync(await packTar([{ name: 'a', data: 'a' }]));
    const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux' }));
    const other = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', created: 'x' }));
    const tar = await packTar([
      { name: 'c.json', data: config },
      { name: 'o.json', data: other },
      { name: 'l/layer.tar', data: layer },
      { name: 'link/layer.tar', type: 'symlink', linkname: '../l/layer.tar' },
      {
        name: 'manifest.json',
        data: JSON.stringify([
          { Config: 'c.json', RepoTags: ['app:1', 'quay.io/x/app:1'], Layers: ['link/layer.tar'] },
          { Config: 'o.json', RepoTags: null, Layers: ['l/layer.tar'] },
        ]),
      },
    ]);
    const b = await spool('tags.tar', tar);
    try {
      expect(b.images.map((i) => i.names)).toEqual([['docker.io/library/app:1', 'quay.io/x/app:1']]);
      const t = b.images[0]!.target as BundleManifest;
      expect(t.layers[0]!.digest).toBe(sha(layer));
      // the untagged entry's config is no image's blob: not kept
      expect(b.files.has(sha(other))).toBe(false);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });
});

// ---- Zarf and Hauler ------------------------------------------------------------------------

const SIG = (d: string): string => `sha256-${hex(d)}.sig`;

/** A layered OCI layout's members, with index.json's entries rewritten by `annotate`. */
async function layout(images: { name: string; seed: string }[], annotate: (img: LayeredImage, i: number) => Record<string, string>[]): Promise<{ entries: TarEntry[]; written: LayeredImage[] }> {
  const file = join(dir, `layered-${n++}.tar`);
  const written = await writeLayeredArchive(
    file,
    images.map((i) => ({ name: i.name, layers: [{ seed: 'base', bytes: 2048 }, { seed: i.seed, bytes: 1024 }] })),
  );
  const members = await unpackTar(await readFile(file));
  const entries: TarEntry[] = members.map((m) => {
    if (m.name !== 'index.json') return m;
    const manifests = written.flatMap((img, i) =>
      annotate(img, i).map((annotations) => ({ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: img.manifest.digest, size: img.manifest.size, annotations })),
    );
    return { name: m.name, data: JSON.stringify({ schemaVersion: 2, manifests }) };
  });
  return { entries, written };
}

describe('Zarf packages', () => {
  it('reads the OCI layout under images/, names from base.name, cosign signatures and package files left out', async () => {
    const { entries, written } = await layout(
      [
        { name: 'nginx:1.25', seed: 'nginx' },
        { name: 'ghcr.io/stefanprodan/podinfo:6.4.0', seed: 'podinfo' },
      ],
      (img, i) =>
        i === 0
          ? [{ 'org.opencontainers.image.base.name': 'nginx:1.25' }, { 'org.opencontainers.image.base.name': `docker.io/library/nginx:${SIG(img.manifest.digest)}` }]
          : [{ 'org.opencontainers.image.base.name': 'ghcr.io/stefanprodan/podinfo:6.4.0' }],
    );
    const tar = await packTar([
      { name: 'components/app.tar', data: prng('component', 5000) },
      ...entries.map((e) => ({ ...e, name: `images/${e.name}` })),
      { name: 'checksums.txt', data: 'x' },
      { name: 'zarf.yaml', data: 'kind: ZarfPackageConfig\nmetadata:\n  name: demo\n' },
    ]);
    const b = await spool('zarf-package-demo-amd64-1.0.0.tar.zst', await compressWith(tar, 'zstd'));
    try {
      expect(b.kind).toBe('zarf');
      expect(b.images.map((i) => i.names)).toEqual([['docker.io/library/nginx:1.25'], ['ghcr.io/stefanprodan/podinfo:6.4.0']]);
      for (const [i, img] of b.images.entries()) {
        const t = img.target as BundleManifest;
        expect(t.manifest.digest).toBe(written[i]!.manifest.digest);
        expect(t.layers.map((l) => l.digest)).toEqual(written[i]!.layers.map((l) => l.digest));
        await expectTreeSpooled(b, t);
      }
      expect(b.files.has(sha(prng('component', 5000)))).toBe(false);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });

  it("hands each member to a second sink in the same read: the signature check gets the package's layout", async () => {
    const { entries, written } = await layout([{ name: 'nginx:1.25', seed: 'nginx-sig' }], (img) => [
      { 'org.opencontainers.image.base.name': 'nginx:1.25' },
      { 'org.opencontainers.image.base.name': `docker.io/library/nginx:${SIG(img.manifest.digest)}` },
    ]);
    const tar = await packTar([{ name: 'zarf.yaml', data: 'kind: ZarfPackageConfig\n' }, ...entries.map((e) => ({ ...e, name: `images/${e.name}` }))]);
    const { file, spool: s } = await place('zarf-package-sig-amd64-1.0.0.tar.zst', await compressWith(tar, 'zstd'));
    const members = new SignatureMembers('zarf-package-sig-amd64-1.0.0.tar.zst', ROOTS);
    const b = await spoolBundle(file, { dir: s, memberSink: members.sink });
    try {
      const sigs = await members.layout(ZARF_IMAGES);
      expect(sigs.tagged(SIG(written[0]!.manifest.digest)).map((e) => e.digest)).toEqual([written[0]!.manifest.digest]);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });

  it('refuses an OCI layout under images/ without zarf.yaml, naming what it is not', async () => {
    const { entries } = await layout([{ name: 'a:1', seed: 'a' }], () => [{ 'org.opencontainers.image.base.name': 'a:1' }]);
    const tar = await packTar(entries.map((e) => ({ ...e, name: `images/${e.name}` })));
    const { file, spool: s } = await place('odd.tar', tar);
    await refusal(spoolBundle(file, { dir: s }), 'unsupported', /OCI layout under images\/ but no zarf\.yaml/);
    expect(await readdir(s)).toEqual([]);
  });
});

describe('Hauler hauls', () => {
  it('a single-chunk haul: image kinds named by io.containerd.image.name; signatures, files and charts left out', async () => {
    const { entries, written } = await layout(
      [
        { name: 'busybox:1', seed: 'busybox' },
        { name: 'rancher/k3s:v1', seed: 'k3s' },
        { name: 'signature:1', seed: 'sig' },
      ],
      (img, i) =>
        i === 0
          ? [{ kind: 'dev.hauler/image', 'io.containerd.image.name': 'index.docker.io/library/busybox:1', 'org.opencontainers.image.ref.name': 'library/busybox:1' }]
          : i === 1
            ? [{ kind: 'dev.cosignproject.cosign/image', 'org.opencontainers.image.ref.name': 'rancher/k3s:v1' }]
            : // hauler names a signature by the image it signs
              [{ kind: 'dev.hauler/sigs', 'io.containerd.image.name': 'index.docker.io/library/busybox:1', 'org.opencontainers.image.ref.name': `library/busybox:${SIG(img.manifest.digest)}` }],
    );
    // a file artifact: a manifest whose config is no image config
    const cfg = Buffer.from('{}');
    const payload = Buffer.from('hello');
    const fileManifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.content.hauler.file.config.v1+json', digest: sha(cfg), size: cfg.length },
        layers: [{ mediaType: 'application/vnd.content.hauler.file.layer.v1', digest: sha(payload), size: payload.length }],
      }),
    );
    const patched = entries.map((e) => {
      if (e.name !== 'index.json') return e;
      const idx = JSON.parse(String(e.data)) as { manifests: object[] };
      idx.manifests.push({ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: sha(fileManifest), size: fileManifest.length, annotations: { kind: 'dev.hauler/image', 'io.containerd.image.name': 'hauler/notes.txt:latest' } });
      return { name: e.name, data: JSON.stringify(idx) };
    });
    const tar = await packTar([
      ...patched,
      ...[cfg, payload, fileManifest].map((d) => ({ name: `blobs/sha256/${hex(sha(d))}`, data: d })),
      // hauler store save also writes a docker-save manifest.json: the OCI layout wins, as in containerd
      { name: 'manifest.json', data: '[]' },
    ]);
    const b = await spool('haul.tar.zst', await compressWith(tar, 'zstd'));
    try {
      expect(b.kind).toBe('hauler');
      expect(b.images.map((i) => i.names)).toEqual([['docker.io/library/busybox:1'], ['docker.io/rancher/k3s:v1']]);
      expect((b.images[0]!.target as BundleManifest).manifest.digest).toBe(written[0]!.manifest.digest);
      expect(b.files.has(sha(fileManifest))).toBe(false);
      expect(b.files.has(written[2]!.manifest.digest)).toBe(false);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });

  it('refuses a chunked haul: a chunk beside its siblings, and a lone chunk cut from the stream', async () => {
    const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/app:1', layerBytes: 200_000 }] });
    const zst = await compressWith(tar, 'zstd');
    const half = Math.floor(zst.length / 2);
    const d = join(dir, `chunks-${n++}`);
    await mkdir(d);
    await writeFile(join(d, 'haul_0.tar.zst'), zst.subarray(0, half));
    await writeFile(join(d, 'haul_1.tar.zst'), zst.subarray(half));
    const message = /haul_0\.tar\.zst is one chunk of a Hauler haul saved with --chunk-size; join the chunks first \(hauler store load every chunk, then hauler store save without --chunk-size\)/;
    await refusal(spoolBundle(join(d, 'haul_0.tar.zst'), { dir: join(d, 'spool') }), 'unsupported', message);

    const lone = await place('haul_1.tar.zst', zst.subarray(half));
    await refusal(spoolBundle(lone.file, { dir: lone.spool }), 'unsupported', /haul_1\.tar\.zst is one chunk of a Hauler haul/);
    expect(await readdir(lone.spool)).toEqual([]);
  });
});

// ---- OCI trees --------------------------------------------------------------------------------

describe('OCI trees', () => {
  it('keeps a missing platform manifest as an entry with manifest null, and attestations flagged', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'registry.local/multi:1', platforms: ['linux/amd64', 'linux/arm64'] }] });
    const arm = images[0]!.platforms[1]!.manifestDigest;
    const members = await unpackTar(tar);
    const idxMember = members.find((m) => m.name === `blobs/sha256/${hex(images[0]!.digest)}`)!;
    const idx = JSON.parse(idxMember.data.toString()) as { manifests: object[] };
    const att = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: sha('{}'), size: 2 }, layers: [] }));
    idx.manifests.push({ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: sha(att), size: att.length, platform: { os: 'unknown', architecture: 'unknown' }, annotations: { 'vnd.docker.reference.type': 'attestation-manifest' } });
    const newIdx = Buffer.from(JSON.stringify(idx));
    const rebuilt = members
      .filter((m) => m.name !== `blobs/sha256/${hex(arm)}` && m.name !== idxMember.name)
      .map((m) => (m.name === 'index.json' ? { name: m.name, data: m.data.toString().replace(images[0]!.digest, sha(newIdx)).replace(/"size":\d+,"annotations"/, `"size":${newIdx.length},"annotations"`) } : m));
    rebuilt.push({ name: `blobs/sha256/${hex(sha(newIdx))}`, data: newIdx }, { name: `blobs/sha256/${hex(sha(att))}`, data: att }, { name: `blobs/sha256/${hex(sha('{}'))}`, data: Buffer.from('{}') });
    const b = await spool('partial.tar', await packTar(rebuilt));
    try {
      const t = byName(b, 'registry.local/multi:1').target as BundleIndex;
      expect(t.index.digest).toBe(sha(newIdx));
      expect(t.entries.map((e) => [e.descriptor.digest, e.descriptor.attestation, e.manifest === null])).toEqual([
        [images[0]!.platforms[0]!.manifestDigest, false, false],
        [arm, false, true],
        [sha(att), true, false],
      ]);
      expect(b.files.has(arm)).toBe(false);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });

  it('a name two entries claim stays with the later one, as containerd leaves it', async () => {
    const { entries, written } = await layout(
      [
        { name: 'a:1', seed: 'a' },
        { name: 'b:1', seed: 'b' },
      ],
      (_img, i) => (i === 0 ? [{ 'io.containerd.image.name': 'registry.local/x:1' }, { 'io.containerd.image.name': 'registry.local/a:1' }] : [{ 'io.containerd.image.name': 'registry.local/x:1' }]),
    );
    const b = await spool('twice.tar', await packTar(entries));
    try {
      expect(b.images.map((i) => [i.names, (i.target as BundleManifest).manifest.digest])).toEqual([
        [['registry.local/a:1'], written[0]!.manifest.digest],
        [['registry.local/x:1'], written[1]!.manifest.digest],
      ]);
    } finally {
      await b.dispose();
    }
  });

  it('leaves unnamed index.json entries out', async () => {
    const { entries } = await layout(
      [
        { name: 'a:1', seed: 'a' },
        { name: 'b:1', seed: 'b' },
      ],
      (_img, i) => (i === 0 ? [{ 'io.containerd.image.name': 'registry.local/a:1' }] : [{}]),
    );
    const b = await spool('unnamed.tar', await packTar(entries));
    try {
      expect(b.images.map((i) => i.names)).toEqual([['registry.local/a:1']]);
    } finally {
      await b.dispose();
    }
  });
});

// ---- refusals, hostile archives, progress, cancel -------------------------------------------------

describe('corrupt and hostile archives', () => {
  it('a blob whose bytes do not match its digest fails, and the spool is removed', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/app:1' }] });
    const layerName = `blobs/sha256/${hex(images[0]!.platforms[0]!.layerDigest)}`;
    const members = await unpackTar(tar);
    const bad = await packTar(members.map((m) => (m.name === layerName ? { name: m.name, data: Buffer.concat([m.data.subarray(0, -1), Buffer.from([m.data.at(-1)! ^ 1])]) } : m)));
    const { file, spool: s } = await place('bad.tar.gz', gzipSync(bad));
    await refusal(spoolBundle(file, { dir: s }), 'corrupt', new RegExp(`blob ${layerName} does not match its digest`));
    expect(await readdir(s)).toEqual([]);
  });

  it('a descriptor whose size is not the blob size fails', async () => {
    const { tar, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/app:1' }] });
    const members = await unpackTar(tar);
    const edited = members.map((m) => (m.name === 'index.json' ? { name: m.name, data: m.data.toString().replace(/"size":\d+/, '"size":7') } : m));
    const { file, spool: s } = await place('size.tar', await packTar(edited));
    await refusal(spoolBundle(file, { dir: s }), 'corrupt', new RegExp(`blob ${images[0]!.digest} is \\d+ bytes, but a descriptor says 7`));
  });

  it('a member climbing out of the archive is refused before anything is written', async () => {
    const tar = await packTar([{ name: '../evil', data: 'x' }, { name: 'manifest.json', data: '[]' }]);
    const { file, spool: s } = await place('evil.tar', tar);
    await refusal(spoolBundle(file, { dir: s }), 'unsafe-path', /climbs out of the archive/);
    expect(await readdir(s)).toEqual([]);
    expect(await readdir(join(s, '..'))).toEqual(['evil.tar', 'spool']);
  });

  it('a text file under an archive name is no image archive', async () => {
    const { file, spool: s } = await place('notes.tar', Buffer.from('<html>404 Not Found</html>\n'));
    await refusal(spoolBundle(file, { dir: s }), 'not-an-image-archive', /starts with/);
  });
});

describe('progress, cancel, dispose', () => {
  it('reports progress up to the file size, and dispose removes the spool', async () => {
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1', layerBytes: 300_000 }] });
    const data = await compressWith(tar, 'gzip');
    const { file, spool: s } = await place('p.tar.gz', data);
    const seen: [number, number][] = [];
    const b = await spoolBundle(file, { dir: s, onProgress: (r, t) => seen.push([r, t]) });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toEqual([data.length, data.length]);
    expect(seen.every(([r], i) => i === 0 || r >= seen[i - 1]![0])).toBe(true);
    expect((await readdir(s)).length).toBe(1);
    await b.dispose();
    expect(await readdir(s)).toEqual([]);
  });

  it('an aborted read rejects with the abort reason and leaves no spool', async () => {
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1', layerBytes: 2_000_000 }] });
    const { file, spool: s } = await place('big.tar', tar);
    const ac = new AbortController();
    const p = spoolBundle(file, { dir: s, signal: ac.signal, onProgress: (r) => r > 100_000 && ac.abort(new Error('cancelled by test')) });
    await expect(p).rejects.toThrow('cancelled by test');
    expect(await readdir(s)).toEqual([]);
  });
});

// ---- issue #51: what reaches the local disk, one verdict for both paths ----------------------

/** Bytes and files in a directory tree, now. */
function usage(d: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (p: string): void => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const full = join(p, e.name);
      if (e.isDirectory()) walk(full);
      else {
        files++;
        bytes += statSync(full).size;
      }
    }
  };
  if (existsSync(d)) walk(d);
  return { bytes, files };
}

/** Spools `file`, sampling the spool directory's size at every progress step: the most it held. */
async function spoolPeak(file: string, s: string): Promise<{ bundle: SpooledBundle | null; error: unknown; peakBytes: number; peakFiles: number }> {
  let peakBytes = 0;
  let peakFiles = 0;
  const sample = (): void => {
    const u = usage(s);
    peakBytes = Math.max(peakBytes, u.bytes);
    peakFiles = Math.max(peakFiles, u.files);
  };
  return spoolBundle(file, { dir: s, onProgress: sample }).then(
    (bundle) => (sample(), { bundle, error: null, peakBytes, peakFiles }),
    (error: unknown) => ({ bundle: null, error, peakBytes, peakFiles }),
  );
}

describe('the spool holds only blobs an image uses (#51)', () => {
  it('spoolsByName: blobs, docker-save layers and small JSON; nothing else', () => {
    const blob = `blobs/sha256/${'a'.repeat(64)}`;
    expect(spoolsByName(blob, 5 * 2 ** 30)).toBe(true);
    expect(spoolsByName(`images/${blob}`, 10)).toBe(true);
    expect(spoolsByName(`abc/${'b'.repeat(64)}/layer.tar`, 2 ** 30)).toBe(true);
    expect(spoolsByName(`${'c'.repeat(64)}.tar`, 2 ** 30)).toBe(true);
    expect(spoolsByName(`${'c'.repeat(64)}.json`, 3000)).toBe(true);
    expect(spoolsByName('index.json', 300)).toBe(true);
    expect(spoolsByName('junk.json', 5 * 2 ** 20)).toBe(false); // over archive.jsonMemberBytes: no config
    expect(spoolsByName('junk.bin', 10)).toBe(false);
    expect(spoolsByName(`other/${blob}`, 10)).toBe(false);
    expect(spoolsByName(`blobs/sha256/${'a'.repeat(63)}`, 10)).toBe(false);
    expect(spoolsByName('components/app.tar', 10)).toBe(false);
  });

  // Uncompressed, so that each progress step (64 KiB read) is sampled while the member streams
  // past; compressed junk is measured on a lab node's tmpfs (test/integration/direct.test.ts).
  for (const [format, compression] of [['docker', 'none'], ['oci', 'none']] as const) {
    it(`a ${format} archive with a 24 MiB member no image uses: never written`, async () => {
      const { tar } = await buildImageArchive({ format, images: [{ name: 'docker.io/library/app:1', layerBytes: 8192 }] });
      const { file, spool: s } = await place(`junk-${format}${SUFFIX[compression]}`, await compressWith(await withJunkMember(tar, 24 * 2 ** 20), compression));
      const { bundle, error, peakBytes } = await spoolPeak(file, s);
      expect(error).toBeNull();
      try {
        expect(bundle!.images.map((i) => i.names)).toEqual([['docker.io/library/app:1']]);
        // The image's blobs are a few KiB; today's code wrote the 24 MiB member too.
        expect(peakBytes).toBeLessThan(64 * 1024);
        await expectFilesMatchDigests(bundle!);
      } finally {
        await bundle?.dispose();
      }
    });
  }

  it('a docker-save layer under a name no blob has is still spooled (read again once the manifest names it)', async () => {
    const layer = gzipSync(await packTar([{ name: 'hf/odd.bin', data: prng('odd', 3000) }]));
    const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }));
    const tar = await packTar([
      { name: 'weird-name', data: layer },
      { name: 'cfg.json', data: config },
      { name: 'manifest.json', data: JSON.stringify([{ Config: 'cfg.json', RepoTags: ['odd:1'], Layers: ['weird-name'] }]) },
    ]);
    const b = await spool('odd.tar', tar);
    try {
      const t = byName(b, 'docker.io/library/odd:1').target as BundleManifest;
      await expectTreeSpooled(b, t);
      await expectFilesMatchDigests(b);
    } finally {
      await b.dispose();
    }
  });

  for (const named of ['plain', 'blob'] as const) {
    it(`over archive.members (${named} names): refused with the limit named, and no file was created for the members read`, async () => {
      const entries: TarEntry[] = Array.from({ length: 100_001 }, (_, i) => {
        const data = String(i);
        return { name: named === 'plain' ? `f${i}` : `blobs/sha256/${hex(sha(data))}`, data };
      });
      const { file, spool: s } = await place(`many-${named}.tar`, await packTar(entries));
      const { error, peakFiles } = await spoolPeak(file, s);
      expect(error).toBeInstanceOf(HoldfastError);
      expect(error).toMatchObject({ code: 'REFUSED', message: expect.stringMatching(/over the limit archive\.members \(100,000\)/) });
      // Today's code created a spool file per member before the count ran out.
      expect(peakFiles).toBe(0);
      expect(await readdir(s)).toEqual([]);
    }, 120_000);
  }

  it('the spool directory is 0700 and its files 0600', async () => {
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1', layerBytes: 200_000 }] });
    const b = await spool('mode.tar', tar);
    try {
      const root = dirname(dirname([...b.files.values()][0]!));
      expect(statSync(root).mode & 0o777).toBe(0o700);
      for (const f of b.files.values()) expect(statSync(f).mode & 0o777, f).toBe(0o600);
    } finally {
      await b.dispose();
    }
  });
});

describe('one verdict for an archive, upload/import or --direct (#51)', () => {
  const cases: [string, () => Promise<Buffer>, RegExp][] = [
    ['a layer declared 1 TiB for a small blob', () => ociDeclaredSizeLie('docker.io/library/lie:1'), /corrupt: blob sha256:[a-f0-9]{64} is \d+ bytes, but a descriptor says 1099511627776/],
    ['a member climbing out', () => packTar([{ name: '../evil', data: 'x' }, { name: 'manifest.json', data: '[]' }]), /climbs out of the archive/],
    ['a text file', async () => Buffer.from('<html>404 Not Found</html>\n'), /not an image archive/],
    ['a tar header declaring 500 GiB', () => tarHeaderClaiming(), /truncated: the tar archive ends in the middle of member manifest\.json/],
  ];
  for (const [what, build, message] of cases) {
    it(`${what}: the same REFUSED error, message and hint from both`, async () => {
      const { file, spool: s } = await place('verdict.tar', await build());
      const viaInspect = await readLocalArchive(file).then(() => null, (e: unknown) => e);
      const viaSpool = await spoolBundle(file, { dir: s }).then(() => null, (e: unknown) => e);
      expect(viaInspect).toBeInstanceOf(HoldfastError);
      expect(viaSpool).toBeInstanceOf(HoldfastError);
      const info = (e: unknown) => (e as HoldfastError).toInfo();
      expect(info(viaSpool)).toEqual(info(viaInspect));
      expect(info(viaSpool)).toMatchObject({ code: 'REFUSED', message: expect.stringMatching(message), hint: expect.stringMatching(/^Nothing was sent\./) });
      expect(await readdir(s)).toEqual([]);
    });
  }
});

describe("a layer's diff ID worked out locally", () => {
  for (const how of ['none', 'gzip', 'zstd'] as const) {
    it(`${how}: the sha256 of the uncompressed tar`, async () => {
      const layerTar = await packTar([{ name: 'hf/x.bin', data: prng(`diff-${how}`, 100_000) }]);
      const { file } = await place(`layer-${how}`, await compressWith(layerTar, how));
      expect(await localDiffId(file)).toBe(sha(layerTar));
    });
  }
});
