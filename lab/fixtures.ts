// Tiny, deterministic image archives for tests (no registry is reachable in the lab).
//
// - `docker`: docker-save layout (manifest.json with RepoTags, <hex>.json configs, <hex>/layer.tar
//   layers stored gzip'd). containerd builds the manifest itself on import; we compute the exact
//   same bytes (see dockerManifestBytes) so the returned digest is the one containerd records.
// - `oci`: OCI image layout (oci-layout, index.json, blobs/sha256/...). index.json entries carry
//   `io.containerd.image.name` (full name) and `org.opencontainers.image.ref.name` (tag).
//   More than one platform → a nested OCI index with one manifest per platform.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { runBuffer } from './exec.ts';
import { packTar, prng } from './tar.ts';

export type ArchiveFormat = 'docker' | 'oci';
export type ArchiveCompression = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'lz4';

export interface FixtureImageSpec {
  /** Full reference, e.g. docker.io/library/app:1.0 */
  name: string;
  /** Default ['linux/amd64']; more than one → OCI index with a manifest per platform (oci only). */
  platforms?: string[];
  /** Content seed; same seed (and platform, layerBytes) → same blobs → same digests. Default: name. */
  seed?: string;
  /** Size of the pseudo-random payload file in the layer. Default 1024. */
  layerBytes?: number;
}

export interface WriteImageArchiveOptions {
  format: ArchiveFormat;
  compression?: ArchiveCompression;
  images: FixtureImageSpec[];
}

export interface WrittenImage {
  name: string;
  /** Target digest: the manifest digest (single platform) or the index digest (multi-platform). */
  digest: string;
  /** Config digest of linux/amd64, or of the first platform. */
  configDigest: string;
  /** Per platform: manifest digest, config digest, layer digest. */
  platforms: { platform: string; manifestDigest: string; configDigest: string; layerDigest: string }[];
}

export interface WriteImageArchiveResult {
  images: WrittenImage[];
}

export const MT = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;


export const sha256 = (b: Buffer | string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const hex = (digest: string): string => digest.slice('sha256:'.length);

interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

function parsePlatform(p: string): Platform {
  const [os, architecture, variant] = p.split('/');
  if (!os || !architecture) throw new Error(`bad platform ${JSON.stringify(p)} (want os/arch[/variant])`);
  return variant ? { os, architecture, variant } : { os, architecture };
}

/** Tag part of a reference (what containerd puts in org.opencontainers.image.ref.name). */
export function refTag(name: string): string {
  const at = name.indexOf('@');
  const base = at >= 0 ? name.slice(0, at) : name;
  const colon = base.lastIndexOf(':');
  if (colon > base.lastIndexOf('/')) return base.slice(colon + 1);
  return name;
}

interface Blob {
  digest: string;
  data: Buffer;
}

interface BuiltPlatform {
  platform: string;
  parsed: Platform;
  layer: Blob;
  config: Blob;
  ociManifest: Blob;
  dockerManifestDigest: string;
}

async function buildPlatform(seed: string, platform: string, layerBytes: number): Promise<BuiltPlatform> {
  const parsed = parsePlatform(platform);
  const layerTar = await packTar([
    { name: 'hf/seed.txt', data: Buffer.from(`${seed}\n${platform}\n`) },
    { name: 'hf/data.bin', data: prng(`${seed}\0${platform}`, layerBytes) },
  ], { parentDirs: true });
  const diffId = sha256(layerTar);
  // Stored (level 0) for large layers: random bytes do not compress either way, and level 6 took ~10 s
  // for a 320 MiB layer (small fixtures keep the bytes, and digests, they always had).
  const layerData = gzipSync(layerTar, { level: layerBytes > 1024 * 1024 ? 0 : 6 });
  const layer = { digest: sha256(layerData), data: layerData };
  const configObj = {
    architecture: parsed.architecture,
    os: parsed.os,
    ...(parsed.variant ? { variant: parsed.variant } : {}),
    created: '1970-01-01T00:00:00Z',
    config: {
      Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      Cmd: ['/hf/seed.txt'],
      Labels: { 'io.holdfast.fixture.seed': seed },
    },
    rootfs: { type: 'layers', diff_ids: [diffId] },
    history: [{ created: '1970-01-01T00:00:00Z', created_by: 'holdfast lab fixture' }],
  };
  const configData = Buffer.from(JSON.stringify(configObj));
  const config = { digest: sha256(configData), data: configData };
  const ociManifestData = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MT.ociManifest,
      config: { mediaType: MT.ociConfig, digest: config.digest, size: config.data.length },
      layers: [{ mediaType: MT.ociLayerGzip, digest: layer.digest, size: layer.data.length }],
    }),
  );
  return {
    platform,
    parsed,
    layer,
    config,
    ociManifest: { digest: sha256(ociManifestData), data: ociManifestData },
    dockerManifestDigest: sha256(dockerManifestBytes(config, layer)),
  };
}

/**
 * The manifest containerd 1.6/1.7 writes when importing a docker-save archive
 * (images/archive/importer.go: Go json.Marshal of {schemaVersion, mediaType, config, layers},
 * descriptor fields in the order mediaType, digest, size).
 */
function dockerManifestBytes(config: Blob, layer: Blob): Buffer {
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MT.dockerManifest,
      config: { mediaType: MT.dockerConfig, digest: config.digest, size: config.data.length },
      layers: [{ mediaType: MT.dockerLayerGzip, digest: layer.digest, size: layer.data.length }],
    }),
  );
}

async function compress(data: Buffer, how: ArchiveCompression): Promise<Buffer> {
  switch (how) {
    case 'none':
      return data;
    case 'gzip':
      return gzipSync(data, { level: 6 });
    case 'zstd':
      return runBuffer(['zstd', '-q', '-c', '-'], { input: data });
    case 'bzip2':
      return runBuffer(['bzip2', '-c'], { input: data });
    case 'lz4':
      return runBuffer(['lz4', '-q', '-c'], { input: data });
  }
}

/** Builds the (uncompressed) archive tar in memory. */
export async function buildImageArchive(opts: WriteImageArchiveOptions): Promise<{ tar: Buffer; images: WrittenImage[] }> {
  if (opts.images.length === 0) throw new Error('writeImageArchive: no images');
  const blobs = new Map<string, Buffer>(); // digest → data, deduplicated
  const put = (b: Blob): void => {
    blobs.set(b.digest, b.data);
  };
  const images: WrittenImage[] = [];
  const ociIndexEntries: object[] = [];
  const dockerEntries: { Config: string; RepoTags: string[]; Layers: string[] }[] = [];

  for (const spec of opts.images) {
    const platforms = spec.platforms && spec.platforms.length > 0 ? spec.platforms : ['linux/amd64'];
    const seed = spec.seed ?? spec.name;
    const built: BuiltPlatform[] = [];
    for (const p of platforms) built.push(await buildPlatform(seed, p, spec.layerBytes ?? 1024));
    const main = built.find((b) => b.platform === 'linux/amd64') ?? built[0]!;
    const annotations = {
      'io.containerd.image.name': spec.name,
      'org.opencontainers.image.ref.name': refTag(spec.name),
    };

    if (opts.format === 'docker') {
      if (built.length > 1) {
        throw new Error(
          `writeImageArchive: docker-save format holds one manifest per image; use format 'oci' for multi-platform ${spec.name}`,
        );
      }
      const b = built[0]!;
      dockerEntries.push({
        Config: `${hex(b.config.digest)}.json`,
        RepoTags: [spec.name],
        Layers: [`${hex(b.layer.digest)}/layer.tar`],
      });
      blobs.set(`docker-config:${b.config.digest}`, b.config.data);
      blobs.set(`docker-layer:${b.layer.digest}`, b.layer.data);
      images.push({
        name: spec.name,
        digest: b.dockerManifestDigest,
        configDigest: b.config.digest,
        platforms: [
          { platform: b.platform, manifestDigest: b.dockerManifestDigest, configDigest: b.config.digest, layerDigest: b.layer.digest },
        ],
      });
      continue;
    }

    for (const b of built) {
      put(b.layer);
      put(b.config);
      put(b.ociManifest);
    }
    let target: { mediaType: string; digest: string; size: number; platform?: Platform };
    if (built.length === 1) {
      const b = built[0]!;
      target = { mediaType: MT.ociManifest, digest: b.ociManifest.digest, size: b.ociManifest.data.length, platform: b.parsed };
    } else {
      const indexData = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MT.ociIndex,
          manifests: built.map((b) => ({
            mediaType: MT.ociManifest,
            digest: b.ociManifest.digest,
            size: b.ociManifest.data.length,
            platform: b.parsed,
          })),
        }),
      );
      const idx = { digest: sha256(indexData), data: indexData };
      put(idx);
      target = { mediaType: MT.ociIndex, digest: idx.digest, size: indexData.length };
    }
    ociIndexEntries.push({ ...target, annotations });
    images.push({
      name: spec.name,
      digest: target.digest,
      configDigest: main.config.digest,
      platforms: built.map((b) => ({
        platform: b.platform,
        manifestDigest: b.ociManifest.digest,
        configDigest: b.config.digest,
        layerDigest: b.layer.digest,
      })),
    });
  }

  const entries: { name: string; data: Buffer }[] = [];
  if (opts.format === 'oci') {
    entries.push({ name: 'oci-layout', data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) });
    for (const [digest, data] of blobs) entries.push({ name: `blobs/sha256/${hex(digest)}`, data });
    entries.push({
      name: 'index.json',
      data: Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MT.ociIndex, manifests: ociIndexEntries })),
    });
  } else {
    for (const [key, data] of blobs) {
      const digest = key.slice(key.indexOf(':') + 1);
      if (key.startsWith('docker-config:')) entries.push({ name: `${hex(digest)}.json`, data });
      else entries.push({ name: `${hex(digest)}/layer.tar`, data });
    }
    entries.push({ name: 'manifest.json', data: Buffer.from(JSON.stringify(dockerEntries)) });
  }
  return { tar: await packTar(entries, { parentDirs: true }), images };
}

/** Writes a docker-save or OCI-layout archive of tiny deterministic images to `file`. */
export async function writeImageArchive(file: string, opts: WriteImageArchiveOptions): Promise<WriteImageArchiveResult> {
  const { tar: data, images } = await buildImageArchive(opts);
  const out = await compress(data, opts.compression ?? 'none');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, out);
  return { images };
}
