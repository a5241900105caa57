// One node's disk picture (shared/diskPicture): file systems, kubelet's GC thresholds, the image
// store image by image and the GC forecast. Read fresh on every call; nothing changes on the node.
import type { DiskPicture, FsUsage } from '../../shared/diskPicture';
import { distroDisplayName } from '../../shared/distro';
import { forecastGc } from '../../shared/gcForecast';
import { summariseStore, type BlobIndex, type StoreImage } from '../../shared/imageStore';
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { criPinning } from '../../shared/versions';
import { lostPinsFrom, withLostPins } from '../audit/lostPins';
import type { ContainerRecord } from '../containerd/client';
import { inventory, type OpsContext } from './inventory';
import type { NodeSession } from '../node/session';
import { measureFileSystems, storeDirs } from '../disk/fileSystems';
import { readGcPolicy } from './kubeletSettings';
import { readStore } from '../disk/store';

export { readGcPolicy };

export interface NodeStore {
  images: StoreImage[];
  index: BlobIndex;
  containers: ContainerRecord[];
  unmatched: ContainerRecord[];
}

/** The image store with fresh references, pins and fates (what prune plans on too). */
export async function readNodeStore(session: NodeSession, ctx: OpsContext): Promise<NodeStore> {
  const inv = await inventory(session, ctx);
  // A durable pin Holdfast made that is gone marks an image someone meant to keep.
  const lost = await lostPinsFrom(session.def.name, ctx.audit, { refs: inv.images, imagesDir: inv.archives, info: inv.info });
  return readStore(session.containerd, inv.platform, { refs: withLostPins(inv.images, lost), criPinning: criPinning(inv.info.containerdVersion) });
}

export async function diskPicture(session: NodeSession, ctx: OpsContext, opts: { images?: boolean } = {}): Promise<DiskPicture> {
  const info = await session.info();
  const notes: string[] = [];
  const dirs = await storeDirs(session.containerd, info);
  if (dirs.from === 'k3s-layout') {
    notes.push(`containerd did not say where it keeps its content and snapshots, so ${distroDisplayName(info.distro)}'s layout is assumed (${dirs.content}).`);
  }
  const [fileSystems, policy] = await Promise.all([
    measureFileSystems({ ssh: session.ssh, files: session.files, sudo: session.def.sudo === true }, [
      { role: 'images-dir', dir: session.def.imagesDir },
      { role: 'content', dir: dirs.content },
      { role: 'snapshots', dir: dirs.snapshots },
    ]),
    readGcPolicy(session),
  ]);
  const imagefs: FsUsage | null = fileSystems.find((f) => f.roles.includes('snapshots')) ?? fileSystems.find((f) => f.roles.includes('content')) ?? null;
  if (!imagefs) notes.push("The file system of containerd's snapshots could not be measured (neither statvfs nor df answered).");
  const mode = criPinning(info.containerdVersion);
  const base: DiskPicture = {
    node: session.def.name,
    takenAt: new Date().toISOString(),
    fileSystems,
    imagefs,
    policy,
    criPinning: mode,
    images: null,
    summary: null,
    forecast: null,
    containers: null,
    notes,
  };
  if (opts.images === false) return base;
  const store = await readNodeStore(session, ctx);
  for (const c of store.unmatched.slice(0, 5)) notes.push(`Container ${c.id} names ${c.image}, which is not in containerd's images.`);
  return {
    ...base,
    images: store.images,
    summary: summariseStore(store.images, store.index),
    forecast: forecastGc({ images: store.images, index: store.index, imagefs, policy, keepVersions: DEFAULT_KEEP_VERSIONS, who: distroDisplayName(info.distro) }),
    containers: store.containers.length,
  };
}
