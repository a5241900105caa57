// Small builders for the disk planner tests: images as the core's buildStore produces them.
import type { BlobIndex, StoreImage } from '../../src/shared/imageStore';
import { deletionOrder, exclusiveBytes, imageState } from '../../src/shared/imageStore';

export const id = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

export interface Spec {
  key: string;
  refs: string[];
  blobs: [string, number][];
  pin?: StoreImage['pin'];
  pinnedForKubelet?: boolean;
  pinnedAfterRestart?: boolean;
  usedBy?: StoreImage['usedBy'];
  archive?: string | null;
  lastChangedAt?: string | null;
  createdAt?: string | null;
  configCreated?: string | null;
  lostPin?: boolean;
  imageId?: string | null;
}

/** Images and their blob index; criSize = the sum of the image's blobs. */
export function store(specs: Spec[]): { images: StoreImage[]; index: BlobIndex } {
  const index: BlobIndex = { sizes: {}, byImage: {} };
  for (const s of specs) {
    for (const [d, n] of s.blobs) index.sizes[d] = n;
    index.byImage[s.key] = s.blobs.map(([d]) => d);
  }
  const excl = exclusiveBytes(index);
  const images = specs.map((s): StoreImage => {
    const usedBy = s.usedBy ?? [];
    const pin = s.pin ?? 'none';
    return {
      key: s.key,
      imageId: s.imageId === undefined ? s.key : s.imageId,
      refs: deletionOrder(s.refs),
      digests: [id('f')],
      state: imageState({ usedBy, pin }),
      pin,
      pinnedForKubelet: s.pinnedForKubelet ?? pin !== 'none',
      pinnedAfterRestart: s.pinnedAfterRestart ?? pin === 'durable',
      pinUncertain: false,
      usedBy,
      lostPin: s.lostPin ?? false,
      archive: s.archive ?? null,
      createdAt: s.createdAt ?? s.lastChangedAt ?? null,
      lastChangedAt: s.lastChangedAt ?? null,
      configCreated: s.configCreated ?? null,
      criSize: s.blobs.reduce((n, [, b]) => n + b, 0),
      contentBytes: s.blobs.reduce((n, [, b]) => n + b, 0),
      exclusiveBytes: excl[s.key] ?? 0,
    };
  });
  return { images, index };
}

export const kubeletUse = (cid: string, image: string) => ({ id: cid, image, kubelet: true });
