// The technician's local archives for the import tests: real files in a throwaway folder, so the
// real service inspects them (core/usecases/import/localArchive), uploads them to the fake nodes
// (core/upload over test/doubles/node.ts's SFTP) and the nodes' fake k3s imports what is in them.
//   telemetry-2.5.tar.gz          docker save, gzip: telemetry-agent:2.5.0 and telemetry-sidecar:1.3
//   site-apps-2.4.tar.gz          docker save, gzip: site-apps:2.4
//   nginx-ctr-export.tar          OCI layout of nginx:1.27.3 from `ctr images export` of one
//                                 platform: its index lists linux/arm64, whose blobs are not in it
//   k3s-airgap-images-arm64.tar.zst  OCI layout, zstd: three arm64 images
//   broken.tar.gz                 a gzip stream cut short
//   notes.tar.xz                  a suffix k3s does not import
import { createCipheriv, createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { tarEntry, zstdStored } from './node';

// The same bytes on every run and in every process (seeded noise, not random): the README's
// screenshot shows the same paths and digests, and two test processes write identical files.
export const BUNDLES = path.join(os.tmpdir(), 'holdfast-e2e-bundles-1'); // bump the number when the bundles change
/** The full path of a bundle by file name. */
export const bundle = (name: string): string => path.join(BUNDLES, name);

const MIB = 1024 * 1024;
const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
/** `n` bytes that do not compress, the same for the same seed (AES-CTR keystream). */
const noise = (n: number, seed: string) => createCipheriv('aes-128-ctr', createHash('sha256').update(seed).digest().subarray(0, 16), Buffer.alloc(16)).update(Buffer.alloc(n));

interface Img {
  name: string;
  architecture: string;
  /** Bytes of its one layer (random: an archive that does not compress). */
  layerBytes: number;
}

const config = (im: Img) => json({ architecture: im.architecture, os: 'linux', created: '2025-03-01T00:00:00Z', config: { Labels: { 'org.opencontainers.image.title': im.name } }, rootfs: { type: 'layers', diff_ids: [] } });

/** `docker save` (classic layout): <id>.json configs, <id>/layer.tar layers, manifest.json last. */
function dockerSave(images: Img[]): Buffer {
  const parts: Buffer[] = [];
  const manifest = images.map((im) => {
    const cfg = config(im);
    const layer = noise(im.layerBytes, im.name);
    const id = hex(cfg);
    parts.push(tarEntry(`${id}.json`, cfg), tarEntry(`${hex(layer)}/layer.tar`, layer));
    return { Config: `${id}.json`, RepoTags: [im.name], Layers: [`${hex(layer)}/layer.tar`] };
  });
  return Buffer.concat([...parts, tarEntry('manifest.json', json(manifest)), Buffer.alloc(1024)]);
}

/** An OCI layout; each image an index of its platforms, `absent` platforms listed but without blobs. */
function ociLayout(images: (Img & { absent?: string[] })[]): Buffer {
  const blobs = new Map<string, Buffer>();
  const put = (b: Buffer) => {
    blobs.set(hex(b), b);
    return { digest: `sha256:${hex(b)}`, size: b.length };
  };
  const entries = images.map((im) => {
    const layer = noise(im.layerBytes, im.name);
    const manifestOf = (architecture: string) =>
      json({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...descriptor(config({ ...im, architecture })) },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...descriptor(layer) }],
      });
    const descriptor = (b: Buffer) => ({ digest: `sha256:${hex(b)}`, size: b.length });
    const own = manifestOf(im.architecture);
    put(config(im));
    put(layer);
    const platforms = [
      { mediaType: 'application/vnd.oci.image.manifest.v1+json', ...put(own), platform: { os: 'linux', architecture: im.architecture } },
      // Listed, not exported: only its descriptor is in the index.
      ...(im.absent ?? []).map((a) => ({ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...descriptor(manifestOf(a)), platform: { os: 'linux', architecture: a } })),
    ];
    const index = json({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: platforms });
    return { mediaType: 'application/vnd.oci.image.index.v1+json', ...put(index), annotations: { 'io.containerd.image.name': im.name, 'org.opencontainers.image.ref.name': im.name.split(':').pop()! } };
  });
  return Buffer.concat([
    tarEntry('oci-layout', json({ imageLayoutVersion: '1.0.0' })),
    ...[...blobs].map(([h, b]) => tarEntry(`blobs/sha256/${h}`, b)),
    tarEntry('index.json', json({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: entries })),
    Buffer.alloc(1024),
  ]);
}

/** Writes the bundles that are not there yet (each whole, by rename: a reader never sees half of one). */
export function writeBundles(): void {
  if (existsSync(bundle('notes.tar.xz'))) return;
  mkdirSync(BUNDLES, { recursive: true });
  const write = (name: string, data: Buffer) => {
    const tmp = `${bundle(name)}.${process.pid}.tmp`;
    writeFileSync(tmp, data);
    renameSync(tmp, bundle(name));
  };
  // 12 MiB to send: the upload's live figures show for a few seconds over a throttled link.
  write(
    'telemetry-2.5.tar.gz',
    gzipSync(
      dockerSave([
        { name: 'registry.site.lan/acme/telemetry-agent:2.5.0', architecture: 'amd64', layerBytes: 11 * MIB },
        { name: 'registry.site.lan/acme/telemetry-sidecar:1.3', architecture: 'amd64', layerBytes: 1 * MIB },
      ]),
      { level: 1 },
    ),
  );
  write('site-apps-2.4.tar.gz', gzipSync(dockerSave([{ name: 'registry.site.lan/acme/site-apps:2.4', architecture: 'amd64', layerBytes: 256 * 1024 }]), { level: 1 }));
  write('nginx-ctr-export.tar', ociLayout([{ name: 'docker.io/library/nginx:1.27.3', architecture: 'amd64', absent: ['arm64'], layerBytes: 512 * 1024 }]));
  write(
    'k3s-airgap-images-arm64.tar.zst',
    zstdStored(
      ociLayout([
        { name: 'docker.io/rancher/mirrored-pause:3.6', architecture: 'arm64', layerBytes: 64 * 1024 },
        { name: 'docker.io/rancher/mirrored-coredns-coredns:1.12.0', architecture: 'arm64', layerBytes: 128 * 1024 },
        { name: 'docker.io/rancher/local-path-provisioner:v0.0.30', architecture: 'arm64', layerBytes: 128 * 1024 },
      ]),
    ),
  );
  write('broken.tar.gz', gzipSync(dockerSave([{ name: 'registry.site.lan/acme/broken:1', architecture: 'amd64', layerBytes: 64 * 1024 }])).subarray(0, 4096));
  write('notes.tar.xz', Buffer.from('not an archive k3s reads\n'));
}
