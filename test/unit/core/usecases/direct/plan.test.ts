// The pure plan of direct delivery (src/core/usecases/direct/plan.ts): which blobs a node is
// sent for its platform, in which order, with the labels containerd's own importer leaves.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chainIds, diffIdsOf, distributionSources, mergeSources, planDelivery } from '../../../../../src/core/usecases/direct/plan';
import type { BundleBlob, BundleImage, BundleManifest } from '../../../../../src/core/usecases/direct/bundle';

const sha = (s: string): string => 'sha256:' + createHash('sha256').update(s).digest('hex');
const blob = (name: string, mediaType: string, size = 10): BundleBlob => ({ digest: sha(name), size, mediaType });
const LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

function manifest(tag: string, arch: string, layers: string[]): { m: BundleManifest; config: Buffer } {
  const diffIds = layers.map((l) => sha(`diff:${l}`));
  const config = Buffer.from(JSON.stringify({ architecture: arch, os: 'linux', rootfs: { type: 'layers', diff_ids: diffIds } }));
  return {
    m: {
      manifest: blob(`manifest:${tag}:${arch}`, MANIFEST),
      platform: { os: 'linux', architecture: arch },
      config: { digest: 'sha256:' + createHash('sha256').update(config).digest('hex'), size: config.length, mediaType: 'application/vnd.oci.image.config.v1+json' },
      layers: layers.map((l) => blob(`layer:${l}`, LAYER, 1000)),
    },
    config,
  };
}

describe('chainIds', () => {
  it('is the OCI ChainID: the first diff ID, then sha256 of "<parent chain> <diff>"', () => {
    const d = [sha('a'), sha('b'), sha('c')];
    const c = chainIds(d);
    expect(c[0]).toBe(d[0]);
    expect(c[1]).toBe(sha(`${d[0]} ${d[1]}`));
    expect(c[2]).toBe(sha(`${c[1]} ${d[2]}`));
  });
});

describe('diffIdsOf', () => {
  it('refuses a config that does not list one diff ID per layer', () => {
    expect(() => diffIdsOf(Buffer.from('{"rootfs":{"diff_ids":[]}}'), 1, 'app:1')).toThrow(/does not list one diff ID per layer/);
    expect(() => diffIdsOf(Buffer.from('nope'), 1, 'app:1')).toThrow(/not JSON/);
  });
});

describe('distribution sources', () => {
  it('groups repositories by registry and merges with what a blob lists', () => {
    const s = distributionSources(['docker.io/library/nginx:1', 'docker.io/library/nginx@sha256:' + 'a'.repeat(64), 'registry.local/site/app:2']);
    expect([...s.entries()].map(([k, v]) => [k, [...v]])).toEqual([
      ['containerd.io/distribution.source.docker.io', ['library/nginx']],
      ['containerd.io/distribution.source.registry.local', ['site/app']],
    ]);
    expect(mergeSources('site/other,site/app', ['site/app', 'site/new'])).toBe('site/app,site/new,site/other');
  });
});

describe('planDelivery', () => {
  const amd = manifest('x', 'amd64', ['base', 'app']);
  const arm = manifest('x', 'arm64', ['base-arm']);
  const configs = new Map([amd, arm].map(({ m, config }) => [m.config.digest, config]));
  const readConfig = (d: string): Buffer => configs.get(d)!;
  const indexBlob = blob('index:x', 'application/vnd.oci.image.index.v1+json');
  const index: BundleImage = {
    names: ['docker.io/library/x:1'],
    target: {
      index: indexBlob,
      entries: [
        { descriptor: { ...amd.m.manifest, platform: amd.m.platform, attestation: false }, manifest: amd.m },
        { descriptor: { ...arm.m.manifest, platform: arm.m.platform, attestation: false }, manifest: arm.m },
      ],
    },
  };

  it('sends the index and only the node platform\'s manifest, config and layers, children first, with containerd\'s labels', () => {
    const p = planDelivery([index], { platform: { os: 'linux', architecture: 'amd64' }, snapshotter: 'overlayfs', readConfig });
    expect(p.blobs.map((b) => b.role)).toEqual(['layer', 'layer', 'config', 'manifest', 'index']);
    expect(p.blobs.some((b) => b.digest === arm.m.manifest.digest || b.digest === arm.m.layers[0]!.digest)).toBe(false);
    const ix = p.blobs.at(-1)!;
    // Every entry of the index is named, present or not (as containerd's ChildGCLabels does).
    expect(ix.labels['containerd.io/gc.ref.content.m.0']).toBe(amd.m.manifest.digest);
    expect(ix.labels['containerd.io/gc.ref.content.m.1']).toBe(arm.m.manifest.digest);
    const m = p.blobs.find((b) => b.role === 'manifest')!;
    expect(m.labels).toMatchObject({
      'containerd.io/gc.ref.content.config': amd.m.config.digest,
      'containerd.io/gc.ref.content.l.0': amd.m.layers[0]!.digest,
      'containerd.io/gc.ref.content.l.1': amd.m.layers[1]!.digest,
      'containerd.io/distribution.source.docker.io': 'library/x',
    });
    const step = p.unpack[0]!;
    expect(p.blobs.find((b) => b.role === 'config')!.labels['containerd.io/gc.ref.snapshot.overlayfs']).toBe(step.chainIds[1]);
    expect(p.blobs[0]!.labels['containerd.io/uncompressed']).toBe(step.diffIds[0]);
    expect(p.images).toEqual([{ names: ['docker.io/library/x:1'], target: expect.objectContaining({ digest: indexBlob.digest }) as unknown, manifests: [amd.m.manifest.digest], configs: [amd.m.config.digest] }]);
  });

  it('leaves out an image the archive has nothing for on the node\'s platform, saying so', () => {
    const p = planDelivery([index], { platform: { os: 'linux', architecture: 'riscv64' }, snapshotter: 'native', readConfig });
    expect(p.images).toEqual([]);
    expect(p.skipped).toEqual(['docker.io/library/x:1: the archive has no manifest for linux/riscv64']);
  });

  it('plans a blob shared by two images once, with both repositories as sources', () => {
    const other = manifest('y', 'amd64', ['base']);
    configs.set(other.m.config.digest, other.config);
    const p = planDelivery(
      [
        { names: ['registry.local/a/one:1'], target: amd.m },
        { names: ['registry.local/b/two:1'], target: other.m },
      ],
      { platform: { os: 'linux', architecture: 'amd64' }, snapshotter: 'overlayfs', readConfig },
    );
    const base = p.blobs.filter((b) => b.digest === amd.m.layers[0]!.digest);
    expect(base).toHaveLength(1);
    expect(base[0]!.labels['containerd.io/distribution.source.registry.local']).toBe('a/one,b/two');
  });
});
