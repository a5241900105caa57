// The manifest containerd's importer writes for one docker-save entry (core/images/archive/
// importer.go, the same on 1.7 and 2.x): Go's json.Marshal of {schemaVersion, mediaType, config,
// layers}, descriptors as mediaType, digest, size. Direct delivery writes these exact bytes, so an
// image has one digest whether `ctr images import`, k3s or Holdfast put it on the node.
import { createHash } from 'node:crypto';
import type { BundleBlob } from './bundle';

export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
export const DOCKER_LAYER = 'application/vnd.docker.image.rootfs.diff.tar';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/**
 * The layer media type containerd gives a docker-save layer from its first bytes: gzip or zstd
 * (a zstd frame or a skippable frame) → `…tar.gzip` (zstd too: the importer knows no other
 * compressed type), anything else (plain tar, empty, bzip2, …) → `…tar`.
 */
export function dockerLayerMediaType(head: Uint8Array): string {
  const b = (i: number): number => head[i] ?? -1;
  const gzip = b(0) === 0x1f && b(1) === 0x8b && b(2) === 0x08;
  const zstd = b(0) === 0x28 && b(1) === 0xb5 && b(2) === 0x2f && b(3) === 0xfd;
  // Skippable frame: little-endian magic 0x184D2A50..0x184D2A5F, and containerd wants 8 bytes.
  const skippable = head.length >= 8 && (b(0) & 0xf0) === 0x50 && b(1) === 0x2a && b(2) === 0x4d && b(3) === 0x18;
  return gzip || zstd || skippable ? DOCKER_LAYER_GZIP : DOCKER_LAYER;
}

/** The manifest bytes and its descriptor. Strings here are digests and media types: nothing Go would escape differently. */
export function dockerManifest(config: { digest: string; size: number }, layers: BundleBlob[]): { bytes: Buffer; blob: BundleBlob } {
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: DOCKER_MANIFEST,
      config: { mediaType: DOCKER_CONFIG, digest: config.digest, size: config.size },
      layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
    }),
  );
  const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
  return { bytes, blob: { digest, size: bytes.length, mediaType: DOCKER_MANIFEST } };
}
