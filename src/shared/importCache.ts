// What k3s's start-up does with one file of the images dir, given its import cache
// (`<images dir>/.cache.json`) and the release (docs/k3s-facts.md, "The import cache
// (.cache.json)"). The rules are the ones measured by compiling and running k3s's own
// pkg/agent/containerd of two release lines (v1.33.7 line: without the fix; v1.34.10: with
// k3s PRs #14266 and #14288). One home: the forecast, `archives`, the Archives tab, upload naming
// and the metrics all read this. Pure.
import { releaseHas, K3S_RELEASES, importCacheHonoured, type Support } from './versions';

/** One `.cache.json` entry as read (core/archives/scan parses it). */
export interface K3sCacheEntry {
  size: number;
  /** The recorded modTime, whole seconds since the epoch. */
  modTime: number;
  /** Its sub-second part in nanoseconds (k3s writes whole seconds: 0). */
  modTimeNanos: number;
  /** The names k3s recorded for the file; null when the entry has none (null or absent). */
  images: string[] | null;
}

export interface K3sImportCache {
  enabled: boolean;
  /** false: the file is there but Holdfast cannot read it (too large, not JSON, not a regular file). */
  readable: boolean;
  /** Why not, in a clause after ".cache.json" ("is not a regular file (a FIFO…)"). */
  unreadable?: string;
  /** By absolute in-node path; null marks an entry Holdfast cannot read. */
  entries: Map<string, K3sCacheEntry | null>;
}

const NOT_A_FILE = 'is not a regular file';

/** The clause for a .cache.json that is a FIFO, a socket, a device or a directory. */
export const notAFileClause = (kind: string): string => `${NOT_A_FILE} (a ${kind})`;

/** Is .cache.json there but not a regular file? Holdfast never opens one, and k3s expects JSON. */
export const cacheIsNotAFile = (c: Pick<K3sImportCache, 'enabled' | 'unreadable'>): boolean => c.enabled && (c.unreadable?.startsWith(NOT_A_FILE) ?? false);

/** A file as k3s compares it with its entry. */
export interface CachedFileStamp {
  /** Absolute in-node path (the cache's key). */
  abs: string;
  size: number;
  /** Whole seconds since the epoch. */
  mtime: number;
  /** Sub-second part in nanoseconds; absent or null when the node did not tell (SFTP gives whole seconds). */
  mtimeNanos?: number | null;
}

/**
 * Which comparison a release makes at start:
 * - without-fix (before k3s #14266/#14288): re-import only when the size differs AND the mtime
 *   is later; otherwise skip and re-pin nothing. `images` in an entry is ignored.
 * - with-fix: re-import when the entry has no `images`, the size differs, OR the mtime is later
 *   than the recorded whole-second modTime; else skip and re-pin only the recorded names.
 * - unknown: the release is not known; an entry that records `images` is evidence of the fix
 *   (only fixed releases write it), else the reading that can only over-predict lost pins.
 */
export type CacheRule = 'without-fix' | 'with-fix' | 'unknown';

export function cacheRule(distroVersion: string | null | undefined): CacheRule {
  const s = releaseHas(K3S_RELEASES.cacheRepin, distroVersion);
  return s === 'yes' ? 'with-fix' : s === 'no' ? 'without-fix' : 'unknown';
}

/**
 * What the next start does with one file:
 * - re-imported (`skipped: false`): every name it brings is pinned again, digest references too;
 * - skipped: only `repins` are pinned again (by name: digest references are not among them).
 * `why` says which comparison decided; `maybe-*` marks a guess Holdfast made on the side of lost pins.
 */
export type CacheVerdict =
  | { skipped: false; why: 'off' | 'ignored-by-release' | 'not-listed' | 'no-images' | 'size' | 'newer' | 'sub-second' }
  | {
      skipped: true;
      /** The names k3s pins again although it skips the file (with the fix: the entry's `images`). */
      repins: string[];
      /** The names the entry records (shown; ignored by releases without the fix). */
      recorded: string[] | null;
      why: 'unchanged' | 'maybe-sub-second' | 'maybe-release' | 'unreadable' | 'unreadable-entry';
      rule: CacheRule;
    };

/** Is the file's mtime later than the recorded one (Go's time.After)? 'unknown' when the node hid the fraction. */
function mtimeLater(file: CachedFileStamp, e: K3sCacheEntry): Support {
  if (file.mtime !== e.modTime) return file.mtime > e.modTime ? 'yes' : 'no';
  if (file.mtimeNanos === undefined || file.mtimeNanos === null) return e.modTimeNanos >= 999_999_999 ? 'no' : 'unknown';
  return file.mtimeNanos > e.modTimeNanos ? 'yes' : 'no';
}

type Decided = Exclude<CacheVerdict, { why: 'off' | 'ignored-by-release' | 'not-listed' | 'unreadable' | 'unreadable-entry' }>;

/** The comparison of a release without the fix (k3s v1.33.7 line and older). */
function withoutFix(file: CachedFileStamp, e: K3sCacheEntry): Decided {
  const later = mtimeLater(file, e);
  if (file.size !== e.size && later === 'yes') return { skipped: false, why: 'size' };
  const why = file.size !== e.size && later === 'unknown' ? 'maybe-sub-second' : 'unchanged';
  return { skipped: true, repins: [], recorded: e.images, why, rule: 'without-fix' };
}

/** The comparison of a release with k3s PRs #14266 and #14288. */
function withFix(file: CachedFileStamp, e: K3sCacheEntry): Decided {
  if (e.images === null) return { skipped: false, why: 'no-images' };
  if (file.size !== e.size) return { skipped: false, why: 'size' };
  const later = mtimeLater(file, e);
  if (later === 'yes') return { skipped: false, why: file.mtime === e.modTime ? 'sub-second' : 'newer' };
  return { skipped: true, repins: [...e.images], recorded: e.images, why: later === 'unknown' ? 'maybe-sub-second' : 'unchanged', rule: 'with-fix' };
}

export function cacheVerdict(cache: K3sImportCache, file: CachedFileStamp, distroVersion: string | null | undefined): CacheVerdict {
  if (!cache.enabled) return { skipped: false, why: 'off' };
  // Releases before k3s PR #12237 have no cache: they re-import everything. Unknown: it may apply.
  if (importCacheHonoured(distroVersion) === 'no') return { skipped: false, why: 'ignored-by-release' };
  const rule = cacheRule(distroVersion);
  if (!cache.readable) return { skipped: true, repins: [], recorded: null, why: 'unreadable', rule };
  if (!cache.entries.has(file.abs)) return { skipped: false, why: 'not-listed' };
  const e = cache.entries.get(file.abs);
  if (!e) return { skipped: true, repins: [], recorded: null, why: 'unreadable-entry', rule };
  if (rule === 'with-fix') return withFix(file, e);
  if (rule === 'without-fix') return withoutFix(file, e);
  // Unknown release: `images` is written only by fixed releases, so it is evidence of the fix.
  if (e.images !== null) return withFix(file, e);
  // Without it: whatever re-imports without the fix also does with it (the size differs AND
  // the mtime is later); what is skipped without the fix is re-imported with it (no `images`).
  const old = withoutFix(file, e);
  return old.skipped ? { ...old, why: 'maybe-release', rule: 'unknown' } : old;
}
