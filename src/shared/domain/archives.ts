// Files in a node's images dir, local archives, and whether removing one is safe.
import type { CacheVerdict } from '../importCache';
import type { ImportCacheHealth } from '../importCacheHealth';
import type { ArchiveRemedy, Prose } from '../remedy';
import type { PinState } from './pins';

export type Compression = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'lz4';

/** What a removal sets off without blocking it: one short clause, and the warning in full. */
export interface RemovalWarning {
  brief: string;
  reason: string;
}

/** One file in a node's images dir. */
export interface ArchiveInfo {
  /** Relative to the images dir, '/'-separated. */
  path: string;
  /** archive: k3s imports it; prepull: a .txt list of references; ignored: k3s skips it. */
  kind: 'archive' | 'prepull' | 'ignored';
  compression: Compression | null;
  size: number;
  mtime: string;
  /** References the archive brings (as containerd names them). */
  images: string[];
  /** Every image of the archive is present in containerd. */
  imported: boolean;
  /** Removing it now loses nothing: every image is complete and durably pinned. */
  safeToRemove: boolean;
  /** Why, in one sentence (its first problem): a remedy in it is data (shared/remedy Prose). */
  reason: Prose;
  /** .cache.json is on and lists this archive unchanged: k3s will skip it at start. */
  cachedByK3s: boolean;
  /** What the next start does with it because of .cache.json, and why (shared/importCache). */
  cache?: CacheVerdict;
  /** What makes it safe to remove, when pinning does (shared/archiveRemedy): the CLI prints the command, the app a button. */
  remedy?: ArchiveRemedy;
  /**
   * What removing it sets off without blocking it (RKE2 writing its own image lists), as
   * `archives.check` warns of it (shared/removalVerdict removalWarnings); absent when nothing.
   */
  removalWarnings?: RemovalWarning[];
  /** Set when the archive's index could not be read. */
  error?: string;
  /** A .txt list: the durable references it hands to k3s through another tag of their image (shared/listTrap). */
  takesOver?: { ref: string; listed: string }[];
  /** The health of k3s's import cache on the node (the same for every file; shared/importCacheHealth). */
  importCache?: ImportCacheHealth;
}

export interface RemovalCheck {
  node: string;
  path: string;
  allowed: boolean;
  /** What blocks the removal, one sentence each (empty when allowed); a remedy in one is data. */
  problems: Prose[];
  /** What the removal sets off without blocking it, one long form each (shared/rke2Lists). */
  warnings?: string[];
  /**
   * Per image the archive brings. `durable`: kubelet keeps the image with no archive re-pinning it
   * (shared/protection durableProtection, under the node's containerd rule); `refs` and
   * `protection` are the detail underneath — every reference of the image with its pin, and why.
   */
  images: {
    name: string;
    present: boolean;
    complete: boolean;
    durable: boolean;
    missing: string[];
    refs?: { name: string; pin: PinState }[];
    protection?: string;
  }[];
}

/** A local archive, inspected before any byte leaves the laptop. */
export interface LocalArchive {
  path: string;
  size: number;
  sha256: string;
  format: 'docker' | 'oci';
  compression: Compression;
  /**
   * What k3s will import: every image with its platforms, the config digest (image id) of the
   * first complete one, and of every complete one (which nodes hold it: shared/archiveHoldings).
   */
  images: { name: string | null; platforms: string[]; configDigest: string | null; configDigests: string[] }[];
  uncompressedBytes: number;
  /**
   * What k3s imports but the person should know, one sentence each: platforms listed without
   * their blobs (skipped), images without a name (not kept), bare-tag names (not usable by pods).
   */
  warnings: string[];
}

/** A `.txt` pre-pull list as k3s reads it (core/archives/prepull parses it). */
export type PrepullList =
  /** `names` as containerd names them (docker.io/library/… normalised), in file order, unique. */
  | { names: string[]; skipped: string[] }
  /** k3s fails on the whole file: nothing in it is pulled or pinned. */
  | { error: string };
