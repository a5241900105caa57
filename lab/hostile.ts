// Hostile image archives for tests: the crafted files of issue #11, small on disk and enormous
// (or endless) once naively expanded. Test tooling only, like the rest of lab/.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { MT } from './fixtures.ts';
import { packTar, prng } from './tar.ts';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/**
 * A docker-save archive whose one manifest.json entry has `tags` RepoTags and `layers` Layers
 * (all the same tiny layer file): about 400 KB for 40,000 × 40,000, and a naive reader that gives
 * each tag its own copy of the layer list builds 1.6 billion layer records.
 */
export async function dockerTagBomb(tags = 40_000, layers = 40_000): Promise<Buffer> {
  const config = JSON.stringify({ os: 'linux', architecture: 'amd64', rootfs: { type: 'layers', diff_ids: [] } });
  const cfgName = `${sha(config)}.json`;
  const manifest = JSON.stringify([
    { Config: cfgName, RepoTags: Array.from({ length: tags }, (_, i) => `t:${i}`), Layers: Array.from({ length: layers }, () => 'l') },
  ]);
  return packTar([
    { name: 'l', data: 'x' },
    { name: cfgName, data: config },
    { name: 'manifest.json', data: manifest },
  ]);
}

/**
 * An OCI layout whose index.json lists `fanout` entries pointing to the same index, which lists
 * `fanout` entries pointing to the next, `depth` indexes deep in all (index.json counted), down to
 * one manifest: about 51 KB for 5 × 40, and 40^5 ≈ 10^8 platform records when fully expanded.
 */
export async function ociIndexBomb(depth = 5, fanout = 40): Promise<Buffer> {
  const config = JSON.stringify({ os: 'linux', architecture: 'amd64', rootfs: { type: 'layers', diff_ids: [] } });
  const layer = Buffer.from('layer');
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MT.ociManifest,
    config: { mediaType: MT.ociConfig, digest: `sha256:${sha(config)}`, size: config.length },
    layers: [{ mediaType: MT.ociLayerGzip, digest: `sha256:${sha(layer)}`, size: layer.length }],
  });
  const blobs: { name: string; data: Buffer | string }[] = [
    { name: `blobs/sha256/${sha(config)}`, data: config },
    { name: `blobs/sha256/${sha(layer)}`, data: layer },
    { name: `blobs/sha256/${sha(manifest)}`, data: manifest },
  ];
  let child: { mediaType: string; digest: string; size: number } = { mediaType: MT.ociManifest, digest: `sha256:${sha(manifest)}`, size: manifest.length };
  for (let level = 1; level < depth; level++) {
    const index = JSON.stringify({ schemaVersion: 2, mediaType: MT.ociIndex, manifests: Array.from({ length: fanout }, () => child) });
    blobs.push({ name: `blobs/sha256/${sha(index)}`, data: index });
    child = { mediaType: MT.ociIndex, digest: `sha256:${sha(index)}`, size: index.length };
  }
  const top = Array.from({ length: fanout }, (_, i) => ({ ...child, annotations: { 'io.containerd.image.name': `registry.local/bomb:${i}` } }));
  return packTar([
    { name: 'oci-layout', data: JSON.stringify({ imageLayoutVersion: '1.0.0' }) },
    ...blobs,
    { name: 'index.json', data: JSON.stringify({ schemaVersion: 2, mediaType: MT.ociIndex, manifests: top }) },
  ]);
}

/**
 * The 806-byte .tar.zst of the report: one zstd frame declaring a 1.875 GiB window (exponent 20,
 * mantissa 7: the most fzstd accepts), then one raw last block of 'a's. A decoder that trusts the
 * header allocates the whole window before reading a byte of data.
 */
export function zstdWindowBomb(): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (20 << 3) | 7]);
  const body = Buffer.alloc(806 - header.length - 3, 0x61);
  const raw = (body.length << 3) | 1;
  return Buffer.concat([header, Buffer.from([raw & 0xff, (raw >> 8) & 0xff, 0]), body]);
}

/**
 * A zstd stream of `blocks` RLE blocks of zeros: each 4-byte block decodes to 128 KiB (32,768×).
 * One frame with a 1 MiB window and no checksum.
 */
export function zstdRleBomb(blocks: number): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (10 << 3) | 0]);
  const size = 128 * 1024;
  const block = (last: boolean): Buffer => {
    const v = (size << 3) | (1 << 1) | (last ? 1 : 0); // Block_Type 1 = RLE
    return Buffer.from([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, 0x00]);
  };
  const out: Buffer[] = [header];
  for (let i = 0; i < blocks; i++) out.push(block(i === blocks - 1));
  return Buffer.concat(out);
}

/**
 * An image archive with one member no image uses, `junkBytes` of zeros named `name` (issue #51:
 * a 4 GiB junk member made `import --direct` write 3.8 GiB to local disk before "ok").
 */
export async function withJunkMember(imageTar: Buffer, junkBytes: number, name = 'junk.bin'): Promise<Buffer> {
  const junk = await packTar([{ name, data: Buffer.alloc(junkBytes) }]);
  // packTar ends a tar with exactly two zero blocks: without them, the image's members follow.
  return Buffer.concat([junk.subarray(0, junk.length - 1024), imageTar]);
}

/** A gzip-compressed layer tar holding one file of `bytes` pseudo-random bytes, and its diff ID. */
function layerOf(seed: string, bytes: number): Promise<{ tar: Buffer; gz: Buffer }> {
  return packTar([{ name: `hf/${seed}.bin`, data: prng(seed, bytes) }]).then((t) => ({ tar: t, gz: gzipSync(t) }));
}

/**
 * One OCI image `name` whose manifest declares its layer `declared` bytes long (default 1 TiB)
 * while the blob holds a few hundred: a descriptor that lies about its blob's size.
 */
export async function ociDeclaredSizeLie(name: string, declared = 2 ** 40): Promise<Buffer> {
  const layer = await layerOf(`lie-${name}`, 64);
  const config = JSON.stringify({ os: 'linux', architecture: 'amd64', rootfs: { type: 'layers', diff_ids: [`sha256:${sha(layer.tar)}`] } });
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MT.ociManifest,
    config: { mediaType: MT.ociConfig, digest: `sha256:${sha(config)}`, size: config.length },
    layers: [{ mediaType: MT.ociLayerGzip, digest: `sha256:${sha(layer.gz)}`, size: declared }],
  });
  return packTar([
    { name: 'oci-layout', data: JSON.stringify({ imageLayoutVersion: '1.0.0' }) },
    { name: `blobs/sha256/${sha(config)}`, data: config },
    { name: `blobs/sha256/${sha(layer.gz)}`, data: layer.gz },
    { name: `blobs/sha256/${sha(manifest)}`, data: manifest },
    {
      name: 'index.json',
      data: JSON.stringify({
        schemaVersion: 2,
        mediaType: MT.ociIndex,
        manifests: [{ mediaType: MT.ociManifest, digest: `sha256:${sha(manifest)}`, size: manifest.length, annotations: { 'io.containerd.image.name': name } }],
      }),
    },
  ]);
}

/**
 * Two docker-save archives whose configs name the same diff ID: `good` (tagged `name`), whose
 * layer is that diff ID's, and `bad` (tagged `badName`), whose layer holds other bytes. On a node
 * that unpacked `good`, the snapshot `bad`'s config names already exists.
 */
export async function dockerDiffIdLie(name: string, badName: string): Promise<{ good: Buffer; bad: Buffer; diffId: string }> {
  const real = await layerOf(`diffid-${name}`, 4096);
  const other = await layerOf(`diffid-other-${name}`, 4096);
  const diffId = `sha256:${sha(real.tar)}`;
  const save = (tag: string, layer: Buffer, created: string): Promise<Buffer> => {
    const config = JSON.stringify({ os: 'linux', architecture: 'amd64', created, rootfs: { type: 'layers', diff_ids: [diffId] } });
    return packTar(
      [
        { name: `${sha(config)}.json`, data: config },
        { name: `${sha(layer)}/layer.tar`, data: layer },
        { name: 'manifest.json', data: JSON.stringify([{ Config: `${sha(config)}.json`, RepoTags: [tag], Layers: [`${sha(layer)}/layer.tar`] }]) },
      ],
      { parentDirs: true },
    );
  };
  return { good: await save(name, real.gz, '2026-01-01T00:00:00Z'), bad: await save(badName, other.gz, '2026-01-02T00:00:00Z'), diffId };
}

/**
 * A tar whose one member's header declares `declared` bytes (base-256, as GNU tar writes sizes
 * over 8 GiB; default 500 GiB) while the file ends after a few: a cut-off or lying archive.
 */
export async function tarHeaderClaiming(declared = 500 * 2 ** 30, name = 'manifest.json'): Promise<Buffer> {
  const tar = Buffer.from(await packTar([{ name, data: '[]' }]));
  const size = Buffer.alloc(12);
  size[0] = 0x80;
  size.writeBigUInt64BE(BigInt(declared), 4);
  size.copy(tar, 124);
  tar.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += tar[i]!;
  tar.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return tar;
}
