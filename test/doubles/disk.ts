// The fake nodes' disk data for UI tests: edge-01's container records, and with `disk` on its
// older versions of telemetry-agent and an unused redis (test/doubles/data.ts puts them on the fake
// node, at 82 % of its image file system — near kubelet's 85 %; the Disk tab is the real
// service's picture of that node).
import type { ContainerRecord } from '../../src/core/containerd/client';
import type { ImageRef } from '../../src/shared/domain/images';

const sha = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

const TELEMETRY = 'registry.site.lan/acme/telemetry-agent';

function ref(p: Pick<ImageRef, 'name' | 'digest' | 'imageId' | 'size' | 'createdAt'>): ImageRef {
  return {
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    platforms: ['linux/amd64'],
    labels: { 'io.cri-containerd.image': 'managed' },
    pin: 'none',
    afterRestart: 'unpinned',
    reason: "Not pinned: kubelet's image garbage collector may delete it when no container uses it.",
    archive: null,
    ...p,
  };
}

/** edge-01's older versions and an unused image (added to its references when `disk` is on). */
export function diskExtraImages(): ImageRef[] {
  const out: ImageRef[] = [];
  const add = (name: string, d: string, id: string, size: number, createdAt: string) => {
    out.push(ref({ name, digest: sha(d), imageId: sha(id), size, createdAt }));
    const at = name.lastIndexOf(':');
    out.push(ref({ name: `${name.slice(0, at)}@${sha(d)}`, digest: sha(d), imageId: sha(id), size, createdAt }));
  };
  add(`${TELEMETRY}:2.4.0`, 'd0', 'a0', 146_903_040, '2024-09-02T08:00:00Z');
  add(`${TELEMETRY}:2.3.2`, 'd1', 'a1', 141_557_760, '2024-06-18T08:00:00Z');
  add(`${TELEMETRY}:2.2.0`, 'd2', 'a2', 138_412_032, '2024-03-11T08:00:00Z');
  add('docker.io/library/redis:7.2', 'd3', 'a3', 40_894_464, '2024-05-04T08:00:00Z');
  return out;
}

/** When each extra image's records last changed (2.3.2 was imported again in December). */
export const UPDATED: Record<string, string> = { [sha('a1')]: '2024-12-12T09:30:00Z' };

/** Container records: kubelet's pods run nginx, coredns, telemetry-agent 2.4.1 and the pause sandbox. */
export function fakeContainers(node: string): ContainerRecord[] {
  if (node !== 'edge-01') return [];
  const c = (id: string, image: string, kind: 'container' | 'sandbox'): ContainerRecord => ({
    id,
    image,
    labels: { 'io.cri-containerd.kind': kind },
    runtime: 'io.containerd.runc.v2',
    createdAt: new Date('2025-03-01T06:00:00Z'),
    updatedAt: new Date('2025-03-01T06:00:00Z'),
  });
  return [
    c('3f1c9a0e77d2', 'docker.io/rancher/mirrored-pause:3.6', 'sandbox'),
    c('a81be23c5f09', 'docker.io/library/nginx:1.27.3', 'container'),
    c('0c5d8e11b6a4', 'docker.io/rancher/mirrored-coredns-coredns:1.12.0', 'container'),
    c('e9277f0b3d18', `${TELEMETRY}:2.4.1`, 'container'),
  ];
}
