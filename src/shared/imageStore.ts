// What a node's image store holds, image by image (CRI merges every reference with one image id
// into one image, and so do kubelet's GC and Holdfast's prune), and what deleting images really
// frees: content is shared between images (a base layer, a config), and containerd removes a
// blob only when no image left references it, so a blob counts once, for the last image holding
// it. Pure: the core fills it from containerd, the forecast and the planner read it.
import type { PinState } from './domain/pins';
import { compareText } from './compareText';
import { isImageIdRecord } from './imageReference';

/** A container record that names one of the node's images. */
export interface ContainerUse {
  id: string;
  /** The image reference the record names, as containerd has it. */
  image: string;
  /**
   * Made through CRI (labelled io.cri-containerd.kind): kubelet sees it, so kubelet's GC spares
   * its image. A record made with ctr or nerdctl in the same namespace does not protect its
   * image from kubelet (Holdfast's prune still spares it).
   */
  kubelet: boolean;
}

/** in-use, then pinned durably, then pinned by k3s/RKE2, else nothing protects it. */
export type ImageState = 'in-use' | 'durable' | 'distro' | 'unprotected';

export interface StoreImage {
  /** The image id (config digest of the node's platform), or the target digest when unknown. */
  key: string;
  imageId: string | null;
  /** Every reference of the image, in the order prune deletes them: tags, digest references, CRI's id record. */
  refs: string[];
  /** Target digests of its references (manifest or index). */
  digests: string[];
  state: ImageState;
  /** Strongest pin over its references: k3s-managed, else durable, else none. */
  pin: PinState;
  /** What kubelet's GC honours through CRI on this containerd (see shared/protection). */
  pinnedForKubelet: boolean;
  /**
   * kubelet still sees it pinned after the next k3s start (shared/protection's verdict, the one
   * the Images tab shows): false for a k3s pin nothing re-pins, which that start strips.
   */
  pinnedAfterRestart: boolean;
  /** containerd 1.7.3–1.7.9 with the pin label on some references only: CRI may or may not honour it. */
  pinUncertain: boolean;
  usedBy: ContainerUse[];
  /**
   * Holdfast made one of its references' pins durable and that pin is gone now (the label was
   * removed behind its back, see shared/lostPins): someone meant to keep it.
   */
  lostPin: boolean;
  /** The archive or .txt list in the images dir that brings it (relative path), or null. */
  archive: string | null;
  /**
   * The site needs it (shared/needs: a workload, the operator's list, the sandbox image, or its
   * air-gap provenance when no source of needs answers): why, and who.
   */
  need?: { because: string; workloads: string[] } | null;
  /** When its first record was created on the node. */
  createdAt: string | null;
  /**
   * The latest created/updated time over its records: the stand-in for kubelet's "last used",
   * which containerd does not record.
   */
  lastChangedAt: string | null;
  /** The image config's `created` (build time), when the config could be read. */
  configCreated: string | null;
  /** Size as CRI reports it to kubelet (the platform's manifest, config and layers): what kubelet counts as freed. */
  criSize: number;
  /** Bytes of every blob of the image present in the content store (all platforms it holds). */
  contentBytes: number;
  /** What deleting this image alone frees (blobs no other image references). */
  exclusiveBytes: number;
}

/** The blobs behind the images, kept in the core (they never need to cross to a UI). */
export interface BlobIndex {
  /** Present blobs: digest → bytes. */
  sizes: Record<string, number>;
  /** Image key → the present blobs reachable from its references' targets. */
  byImage: Record<string, string[]>;
}

export function imageState(i: Pick<StoreImage, 'usedBy' | 'pin'>): ImageState {
  if (i.usedBy.length > 0) return 'in-use';
  if (i.pin === 'durable') return 'durable';
  if (i.pin === 'distro') return 'distro';
  return 'unprotected';
}

/** How many images reference each blob. */
function holders(index: BlobIndex): Map<string, number> {
  const n = new Map<string, number>();
  for (const blobs of Object.values(index.byImage)) for (const b of new Set(blobs)) n.set(b, (n.get(b) ?? 0) + 1);
  return n;
}

/** Per image: the bytes of the blobs only it references. */
export function exclusiveBytes(index: BlobIndex): Record<string, number> {
  const n = holders(index);
  const out: Record<string, number> = {};
  for (const [key, blobs] of Object.entries(index.byImage)) {
    out[key] = [...new Set(blobs)].filter((b) => n.get(b) === 1).reduce((s, b) => s + (index.sizes[b] ?? 0), 0);
  }
  return out;
}

/**
 * Deleting images one after another in `order`: what each deletion frees at that point (the
 * blobs it was the last image to reference). Keys not in the index free nothing.
 */
export function freedInOrder(index: BlobIndex, order: string[]): number[] {
  const n = holders(index);
  return order.map((key) => {
    let freed = 0;
    for (const b of new Set(index.byImage[key] ?? [])) {
      const left = (n.get(b) ?? 0) - 1;
      n.set(b, left);
      if (left === 0) freed += index.sizes[b] ?? 0;
    }
    return freed;
  });
}

/** Bytes of every blob the images reference, each blob once. */
export function storeBytes(index: BlobIndex): number {
  const all = new Set(Object.values(index.byImage).flat());
  return [...all].reduce((s, b) => s + (index.sizes[b] ?? 0), 0);
}

/**
 * The order prune deletes an image's references in: tags, then `name@sha256:` digest references
 * (k3s's embedded registry serves through them, so they go only with the image), then CRI's own
 * `sha256:<id>` record, which keeps the image visible to kubelet until the very end.
 */
export function deletionOrder(refs: string[]): string[] {
  const rank = (r: string) => (isImageIdRecord(r) ? 2 : r.includes('@') ? 1 : 0);
  return [...refs].sort((a, b) => rank(a) - rank(b) || compareText(a, b));
}

export interface StoreSummary {
  images: number;
  inUse: number;
  durable: number;
  distro: number;
  unprotected: number;
  /** Every blob the images reference, once. */
  storeBytes: number;
  /** What removing every unprotected image would free (blobs the other images do not hold). */
  unprotectedBytes: number;
}

export function summariseStore(images: StoreImage[], index: BlobIndex): StoreSummary {
  const count = (s: ImageState) => images.filter((i) => i.state === s).length;
  const kept = new Set(images.filter((i) => i.state !== 'unprotected').map((i) => i.key));
  const rest: BlobIndex = { sizes: index.sizes, byImage: Object.fromEntries(Object.entries(index.byImage).filter(([k]) => kept.has(k))) };
  return {
    images: images.length,
    inUse: count('in-use'),
    durable: count('durable'),
    distro: count('distro'),
    unprotected: count('unprotected'),
    storeBytes: storeBytes(index),
    unprotectedBytes: storeBytes(index) - storeBytes(rest),
  };
}
