// One node's disk as kubelet's image GC sees it: the file systems that hold the images dir,
// containerd's content store and its snapshots, the GC and eviction thresholds the node runs
// with, what its image store holds image by image, and the GC forecast. Plain JSON: the same
// for `holdfast disk --json`, the app's Disk tab and the fleet overview.
import type { GcForecast } from './gcForecast';
import { nearGcThreshold, usedPercentExact, type GcPolicy } from './gcPolicy';
import type { StoreImage, StoreSummary } from './imageStore';

export type { StoreSummary };
import type { CriPinning } from './versions';

export type FsRole = 'images-dir' | 'content' | 'snapshots';

export const FS_ROLE_TEXT: Record<FsRole, string> = {
  'images-dir': 'images dir',
  content: 'content store',
  snapshots: 'snapshots',
};

/** One file system, with what Holdfast found on it. */
export interface FsUsage {
  /** The roles it holds and the directory measured for each (the dir itself or its nearest existing parent). */
  roles: FsRole[];
  paths: Partial<Record<FsRole, string>>;
  totalBytes: number | null;
  /** Available to non-root users (what kubelet counts). */
  freeBytes: number;
  via: 'statvfs' | 'df';
}

export interface DiskPicture {
  node: string;
  takenAt: string;
  fileSystems: FsUsage[];
  /** The one kubelet's image GC watches (the snapshotter's, as CRI reports it), null when unknown. */
  imagefs: FsUsage | null;
  policy: GcPolicy;
  criPinning: CriPinning;
  /** null when only the file systems were asked for (the fleet overview). */
  images: StoreImage[] | null;
  summary: StoreSummary | null;
  forecast: GcForecast | null;
  containers: number | null;
  notes: string[];
}

/** How far the image file system is below kubelet's high threshold, in percentage points (negative: above it). */
export function pointsToHigh(p: Pick<DiskPicture, 'imagefs' | 'policy'>): number | null {
  if (!p.imagefs) return null;
  const used = usedPercentExact(p.imagefs);
  return used === null ? null : p.policy.highPercent - used;
}

/** The fleet's flag: the node's image file system is within 5 points of the high threshold. */
export function pictureNearGc(p: Pick<DiskPicture, 'imagefs' | 'policy'>): boolean {
  return nearGcThreshold(p.imagefs, p.policy);
}
