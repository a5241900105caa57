// OCI archives of images that share layers, like the versions of one app built on one base:
// each image has the shared base layer(s) it names plus one layer of its own, with exact,
// known blob sizes (payloads are pseudo-random, so gzip barely changes them). lab/fixtures.ts
// builds single-layer images; disk and GC tests need shared blobs to tell an image's size from
// what deleting it frees. Test tooling only.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar, prng } from './tar.ts';

const MT = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

const sha256 = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

export interface Blob {
  digest: string;
  size: number;
}

export interface LayerSpec {
  /** Same seed and bytes → the same layer blob in every image that names it. */
  seed: string;
  bytes: number;
}

export interface LayeredImageSpec {
  name: string;
  /** Shared layers first (the base), then the image's own. */
  layers: LayerSpec[];
  /** The config's `created` (build time). */
  created?: string;
}

export interface LayeredImage {
  name: string;
  manifest: Blob;
  config: Blob;
  layers: Blob[];
  /** Every blob of the image: manifest, config, layers. */
  blobs: Blob[];
}

async function layer(spec: LayerSpec): Promise<{ blob: Blob; data: Buffer; diffId: string }> {
  const t = await packTar([{ name: `hf/${spec.seed}.bin`, data: prng(spec.seed, spec.bytes) }]);
  const data = gzipSync(t, { level: 1 });
  return { blob: { digest: sha256(data), size: data.length }, data, diffId: sha256(t) };
}

/** The OCI annotations an index entry gets: by default a containerd/k3s import's names. */
export type Annotate = (img: LayeredImageSpec) => Record<string, string>;

const importNames: Annotate = (img) => ({ 'io.containerd.image.name': img.name, 'org.opencontainers.image.ref.name': img.name.slice(img.name.lastIndexOf(':') + 1) });

/** Writes an uncompressed OCI-layout archive holding `images`; returns every blob's digest and size. */
export async function writeLayeredArchive(file: string, images: LayeredImageSpec[]): Promise<LayeredImage[]> {
  const { entries, images: out } = await layeredLayout(images);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, await packTar(entries));
  return out;
}

/** The tar members of an OCI layout holding `images` (index entries annotated by `annotate`). */
export async function layeredLayout(images: LayeredImageSpec[], annotate: Annotate = importNames): Promise<{ entries: { name: string; data: Buffer }[]; images: LayeredImage[] }> {
  const blobs = new Map<string, Buffer>();
  const index: object[] = [];
  const out: LayeredImage[] = [];
  for (const img of images) {
    const layers = await Promise.all(img.layers.map(layer));
    for (const l of layers) blobs.set(l.blob.digest, l.data);
    const config = Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        created: img.created ?? '1970-01-01T00:00:00Z',
        config: { Labels: { 'io.holdfast.lab.image': img.name } },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      }),
    );
    const configBlob = { digest: sha256(config), size: config.length };
    blobs.set(configBlob.digest, config);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MT.manifest,
        config: { mediaType: MT.config, ...configBlob },
        layers: layers.map((l) => ({ mediaType: MT.layer, ...l.blob })),
      }),
    );
    const manifestBlob = { digest: sha256(manifest), size: manifest.length };
    blobs.set(manifestBlob.digest, manifest);
    index.push({ mediaType: MT.manifest, ...manifestBlob, annotations: annotate(img) });
    const ls = layers.map((l) => l.blob);
    out.push({ name: img.name, manifest: manifestBlob, config: configBlob, layers: ls, blobs: [manifestBlob, configBlob, ...ls] });
  }
  const entries = [
    { name: 'oci-layout', data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) },
    ...[...blobs].map(([d, data]) => ({ name: `blobs/sha256/${d.slice(7)}`, data })),
    { name: 'index.json', data: Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MT.index, manifests: index })) },
  ];
  return { entries, images: out };
}
