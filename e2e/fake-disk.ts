// The fake nodes' disks for UI tests: container records, blobs behind each image (layers shared
// between versions of one app, so what deleting an image frees differs from its size) and file
// systems. The picture, the forecast and the prune plan come from the real pure code (core's
// buildStore, shared/gcForecast, shared/prunePlan) over this data, so the Disk tab shows what the
// backend would compute. With `disk` on, edge-01 also holds older versions of telemetry-agent and
// an unused redis, and its image file system is at 82 % — near kubelet's 85 %.
import type { ContainerRecord, ImageRecord } from '../src/core/containerd/client';
import { buildStore, type TargetFacts } from '../src/core/disk/store';
import type { DiskPicture, FsUsage } from '../src/shared/diskPicture';
import type { ImageRef } from '../src/shared/domain';
import { forecastGc } from '../src/shared/gcForecast';
import { resolveGcPolicy } from '../src/shared/gcPolicy';
import { summariseStore, type BlobIndex, type StoreImage } from '../src/shared/imageStore';
import { criPinning } from '../src/shared/versions';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
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

/** The blobs behind one image: versions of telemetry-agent share their 96 MiB base layer. */
function blobsOf(r: ImageRef): { digest: string; size: number }[] {
  const id = (r.imageId ?? r.digest).slice(7, 15);
  const config = { digest: `sha256:c0${id}`.padEnd(71, '0'), size: 6_144 };
  const manifest = { digest: r.digest, size: 1_024 };
  if (r.name.startsWith(TELEMETRY)) {
    const base = { digest: sha('be'), size: 96 * MIB };
    return [manifest, config, base, { digest: `sha256:1a${id}`.padEnd(71, '0'), size: Math.max(0, r.size - base.size - config.size - manifest.size) }];
  }
  return [manifest, config, { digest: `sha256:1a${id}`.padEnd(71, '0'), size: Math.max(0, r.size - config.size - manifest.size) }];
}

export function fakeStore(node: string, refs: ImageRef[], containerdVersion: string): { images: StoreImage[]; index: BlobIndex; containers: ContainerRecord[] } {
  const facts = new Map<string, TargetFacts>();
  const sizes: Record<string, number> = {};
  for (const r of refs) {
    const blobs = blobsOf(r);
    for (const b of blobs) sizes[b.digest] = b.size;
    facts.set(r.digest, { blobs: blobs.map((b) => b.digest), criSize: r.size, configCreated: r.createdAt });
  }
  const records: ImageRecord[] = refs.map((r) => ({
    name: r.name,
    labels: r.labels,
    target: { mediaType: r.mediaType, digest: r.digest, size: 1024, annotations: {} },
    createdAt: r.createdAt ? new Date(r.createdAt) : null,
    updatedAt: UPDATED[r.imageId ?? ''] ? new Date(UPDATED[r.imageId!]!) : r.createdAt ? new Date(r.createdAt) : null,
  }));
  const containers = fakeContainers(node).filter((c) => refs.some((r) => r.name === c.image));
  const { images, index } = buildStore({ refs, records, containers, criPinning: criPinning(containerdVersion) }, facts, sizes);
  return { images, index, containers };
}

/** A node's file systems: one for everything, as on most edge nodes (tight on edge-01 when `disk`). */
export function fakeFileSystems(node: NodeLike, tight: boolean, freedSoFar: number): FsUsage[] {
  const total = tight ? 4 * GIB : 64 * GIB;
  const free = (tight ? Math.round(total * 0.18) : 41 * GIB) + freedSoFar;
  return [
    {
      roles: ['images-dir', 'content', 'snapshots'],
      paths: {
        'images-dir': node.imagesDir,
        content: '/var/lib/rancher/k3s/agent/containerd/io.containerd.content.v1.content',
        snapshots: '/var/lib/rancher/k3s/agent/containerd/io.containerd.snapshotter.v1.overlayfs',
      },
      totalBytes: total,
      freeBytes: Math.min(total, free),
      via: 'statvfs',
    },
  ];
}

interface NodeLike {
  name: string;
  imagesDir: string;
}

export function fakePicture(node: NodeLike, refs: ImageRef[], containerdVersion: string, o: { tight: boolean; freed: number; images: boolean }): DiskPicture {
  const fileSystems = fakeFileSystems(node, o.tight, o.freed);
  const imagefs = fileSystems[0]!;
  const policy = resolveGcPolicy([], ['No running k3s process was found, so only its config files were read (flags given to the service itself are not known).']);
  const base: DiskPicture = {
    node: node.name,
    takenAt: new Date('2025-03-06T10:00:00Z').toISOString(),
    fileSystems,
    imagefs,
    policy,
    criPinning: criPinning(containerdVersion),
    images: null,
    summary: null,
    forecast: null,
    containers: null,
    notes: [],
  };
  if (!o.images) return base;
  const store = fakeStore(node.name, refs, containerdVersion);
  return {
    ...base,
    images: store.images,
    summary: summariseStore(store.images, store.index),
    forecast: forecastGc({ images: store.images, index: store.index, imagefs, policy }),
    containers: store.containers.length,
  };
}
