// Walks a node's images dir (through its FileAccess: SFTP as root, or sudo -n) the way the node's
// k3s release walks it at start (shared/versions: recursively and case-sensitively since k3s PR
// #12237, else the top level, case-insensitively), and reads each archive's index by streaming
// it — never the whole archive in memory. Indexes (and failures on the content) are cached
// locally by node + path + size + mtime + FileAccess.versionKey, so a re-scan of unchanged
// archives costs one listing and, over SFTP, two 64 KiB reads per archive. Also reads k3s's
// import cache (.cache.json) and the .txt pre-pull lists, each within its limit (limits.ts remote.*).
import type { Compression } from '../../shared/domain/archives';
import { firstReleases, K3S_RELEASES, type StartupWalk } from '../../shared/versions';
import { notAFileClause, type K3sCacheEntry, type K3sImportCache } from '../../shared/importCache';
import type { FileAccess, ListedFile } from '../access';
import { mapLimit } from '../../shared/mapLimit';
import { readAll } from '../access/common';
import { formatLimit, limit, nameLimit } from '../limits';
import { classifyImagesDirPath } from '../../shared/archiveSuffixes';
import { ARCHIVE_INDEX_VERSION, ArchiveError, readArchiveIndex, type ArchiveIndex } from './format/readIndex';
import type { IndexCache } from './indexCache';
import { parsePrepullList, PREPULL_MAX_BYTES } from './prepull';
import type { PrepullList } from '../../shared/domain/archives';
import { logger } from '../log';
import { jsonNestingDepth } from '../../shared/jsonDepth';

const log = logger('archives');

export { IndexCache, type CachedScan } from './indexCache';
export type { K3sCacheEntry, K3sImportCache } from '../../shared/importCache';

export interface ScannedFile {
  /** Relative to the images dir, '/'-separated. */
  path: string;
  abs: string;
  kind: 'archive' | 'prepull' | 'ignored';
  compression: Compression | null;
  size: number;
  /** Seconds since the epoch, as SFTP reports it. */
  mtime: number;
  /** The mtime's sub-second part in nanoseconds, when the node told it (FileAccess.subSecondMtimes). */
  mtimeNanos?: number | null;
  /** inode:ctime when the listing gave it (see ListedFile). */
  changeId?: string;
  index: ArchiveIndex | null;
  error?: string;
  /**
   * 'unknown' when the node's k3s release is unknown and the two start-up walks disagree about
   * this file (a subfolder, an upper-case extension): k3s may or may not take it.
   */
  walked: 'yes' | 'unknown';
  /** Why k3s skips a file the other start-up walk would take (one sentence). */
  note?: string;
  /** A .txt pre-pull list's references, as k3s reads them. */
  prepull?: PrepullList;
}

export interface ScanOptions {
  /** Identifies the node in cache keys (e.g. host:port). */
  nodeKey: string;
  /** The node's start-up walk (shared/versions startupWalk); default: current releases'. */
  walk?: StartupWalk | 'unknown';
  /** The images dir's listing (`FileAccess.listFiles(root)`), when it was started earlier. */
  listing?: Promise<ListedFile[]>;
  /** The node's distro as the notes name it ("k3s", "RKE2": shared/distro distroDisplayName); k3s when not given. */
  who?: string;
  cache?: IndexCache;
  /** Called for each archive whose index had to be streamed from the node. */
  onRead?: (file: string) => void;
}

const WALK_SINCE = firstReleases({ fromMinor: K3S_RELEASES.importCache.fromMinor, backports: K3S_RELEASES.importCache.backports });

/** Why the given walk skips a file the other walk takes. */
function walkNote(rel: string, walk: StartupWalk, who: string): string {
  return walk === 'top-level-case-insensitive'
    ? `This ${who} release reads only the top level of the images dir (subfolders from ${WALK_SINCE} on), so it never imports ${rel}.`
    : `${who} matches extensions case-sensitively since ${WALK_SINCE}, so it never imports ${rel}.`;
}

/** Lists the images dir; a missing dir is an empty list (k3s creates it lazily). */
export async function walkImagesDir(
  files: FileAccess,
  root: string,
  walk: StartupWalk | 'unknown' = 'recursive-case-sensitive',
  listing?: Promise<ListedFile[]>,
  who = 'k3s',
): Promise<Omit<ScannedFile, 'index'>[]> {
  const base = root.replace(/\/+$/, '');
  return (await (listing ?? files.listFiles(base))).map((f) => {
    const modern = classifyImagesDirPath(f.path, 'recursive-case-sensitive');
    const old = classifyImagesDirPath(f.path, 'top-level-case-insensitive');
    const mine = walk === 'unknown' ? null : walk === 'recursive-case-sensitive' ? modern : old;
    // Unknown release: take what either walk takes (so its index is read), marked uncertain.
    const c = mine ?? (modern.kind !== 'ignored' ? modern : old);
    const agree = modern.kind === old.kind;
    const other = walk === 'recursive-case-sensitive' ? old : modern;
    return {
      path: f.path,
      abs: f.abs,
      kind: c.kind,
      compression: c.kind === 'archive' ? c.compression : null,
      size: f.size,
      mtime: f.mtime,
      ...(f.changeId ? { changeId: f.changeId } : {}),
      walked: walk === 'unknown' && !agree ? ('unknown' as const) : ('yes' as const),
      ...(walk !== 'unknown' && c.kind === 'ignored' && other.kind !== 'ignored' ? { note: walkNote(f.path, walk, who) } : {}),
    };
  });
}

/**
 * A failure that says something about the archive itself, worth caching until it changes — not
 * one of the way it was read (a dropped connection, the file changing or vanishing meanwhile).
 */
function isContentVerdict(e: unknown): e is ArchiveError {
  return e instanceof ArchiveError && (e.cause as { code?: unknown } | undefined)?.code !== 'ERR_STREAM_PREMATURE_CLOSE';
}

const VERSION_KEY_CONCURRENCY = 8;

/** Each archive's version key (null when the node could not tell), a few at a time. */
async function versionKeys(access: FileAccess, files: Omit<ScannedFile, 'index'>[]): Promise<Map<string, string | null>> {
  const todo = files.filter((f) => f.kind === 'archive' && f.compression);
  const keys = await mapLimit(todo, VERSION_KEY_CONCURRENCY, (f) =>
    access.versionKey(f).catch((err: unknown) => {
      log.debug('archive version key unavailable; its index is read, not cached', { path: f.abs, err });
      return null;
    }),
  );
  return new Map(todo.map((f, i) => [f.abs, keys[i] ?? null]));
}

export async function scanImagesDir(access: FileAccess, root: string, opts: ScanOptions): Promise<ScannedFile[]> {
  const files = await walkImagesDir(access, root, opts.walk, opts.listing, opts.who);
  const versions = opts.cache ? await versionKeys(access, files) : new Map<string, string | null>();
  const out: ScannedFile[] = [];
  for (const f of files) {
    if (f.kind === 'prepull') {
      out.push({ ...f, index: null, prepull: await readPrepull(access, f.abs, f.size) });
      continue;
    }
    if (f.kind !== 'archive' || !f.compression) {
      out.push({ ...f, index: null });
      continue;
    }
    const version = versions.get(f.abs) ?? null;
    const cache = version !== null ? opts.cache : undefined;
    const key = `${opts.nodeKey}\0${f.abs}\0${f.size}\0${f.mtime}\0${version}\0${ARCHIVE_INDEX_VERSION}`;
    const cached = (await cache?.get(key)) ?? null;
    if (cached) {
      out.push('index' in cached ? { ...f, index: cached.index } : { ...f, index: null, error: cached.error });
      continue;
    }
    try {
      opts.onRead?.(f.path);
      const index = await readArchiveIndex(access.readStream(f.abs, { size: f.size }), { compression: f.compression });
      await cache?.set(key, { index });
      out.push({ ...f, index });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      // A planted file costs one read: its verdict is kept like an index, by the same key.
      if (isContentVerdict(e)) await cache?.set(key, { error });
      out.push({ ...f, index: null, error });
    }
  }
  return out;
}

/** A small file read whole; callers checked `size` against the file's limit, and no more is read. */
function readBounded(access: FileAccess, file: string, size: number): Promise<Buffer> {
  return readAll(access.readStream(file, { size }), size);
}

/** A .txt list as k3s reads it; too large or unreadable → an error (k3s would pin nothing Holdfast can vouch for). */
async function readPrepull(access: FileAccess, abs: string, size: number): Promise<PrepullList> {
  if (size > PREPULL_MAX_BYTES) return { error: `it is larger than ${formatLimit('remote.prepullListBytes')}, over ${nameLimit('remote.prepullListBytes')}, so Holdfast does not read it` };
  try {
    return parsePrepullList((await readBounded(access, abs, size)).toString('utf8'));
  } catch (e) {
    return { error: `it could not be read (${e instanceof Error ? e.message : String(e)})` };
  }
}

// ---------------------------------------------------------------------------------------------
// k3s's import cache, `<images dir>/.cache.json` (k3s PR #12237; opt-in: k3s writes it only if it
// exists, an empty file enables it). Its real format, as k3s writes it (json.Marshal of a map from
// the file's absolute in-node path to {size, modTime, images}; see the fixtures of the unit test):
//   {"/var/lib/rancher/k3s/agent/images/busybox.tar":
//     {"size":2245120,"modTime":"2026-07-22T22:58:25Z","images":["docker.io/library/busybox:latest"]}}
// `modTime` is a metav1.Time: RFC 3339 in whole seconds, UTC (parsing accepts a fraction and an
// offset). `images` is written only by releases with k3s PR #14266. Archives and .txt lists alike.

/** Bigger than any real cache (one short line per file); larger counts as unreadable. */
export const IMPORT_CACHE_MAX_BYTES = limit('remote.importCacheBytes');
const IMPORT_CACHE_MAX_DEPTH = limit('remote.importCacheDepth');

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 as Go's time.Parse(time.RFC3339) accepts it → whole seconds since the epoch; null if invalid. */
export function parseRfc3339Seconds(s: string): number | null {
  return parseRfc3339(s)?.seconds ?? null;
}

/** RFC 3339 → whole seconds since the epoch and the fraction in nanoseconds (Go keeps it); null if invalid. */
export function parseRfc3339(s: string): { seconds: number; nanos: number } | null {
  const m = RFC3339.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, se!);
  const back = new Date(ms);
  // Reject 2026-02-30, 24:00, :60 and the like instead of letting Date roll them over.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo! - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h || back.getUTCMinutes() !== mi || back.getUTCSeconds() !== se) return null;
  let offset = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = (m[8]!.startsWith('-') ? -1 : 1) * (oh * 3600 + om * 60);
  }
  return { seconds: ms / 1000 - offset, nanos: m[7] ? Number(m[7].padEnd(9, '0')) : 0 };
}

function parseEntry(v: unknown): K3sCacheEntry | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const e = v as { size?: unknown; modTime?: unknown; images?: unknown };
  if (typeof e.size !== 'number' || !Number.isSafeInteger(e.size) || e.size < 0) return null;
  const modTime = typeof e.modTime === 'string' ? parseRfc3339(e.modTime) : null;
  if (modTime === null) return null;
  // Go decodes a mistyped `images` as absent: then k3s has no names to re-pin.
  const images = Array.isArray(e.images) && e.images.every((i): i is string => typeof i === 'string') ? [...e.images] : null;
  return { size: e.size, modTime: modTime.seconds, modTimeNanos: modTime.nanos, images };
}

/** The text of a .cache.json file → its entries (pure; see the unit test's recorded samples). */
export function parseK3sImportCache(text: string): Pick<K3sImportCache, 'readable' | 'unreadable' | 'entries'> {
  const entries = new Map<string, K3sCacheEntry | null>();
  // An empty file is how users enable the cache (k3s skips loading it).
  if (text.trim() === '') return { readable: true, entries };
  // Parsing a deeply nested text costs memory out of all proportion to its size: count first.
  if (jsonNestingDepth(text, IMPORT_CACHE_MAX_DEPTH) > IMPORT_CACHE_MAX_DEPTH) {
    return { readable: false, unreadable: `nests deeper than ${formatLimit('remote.importCacheDepth')} levels`, entries };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    log.debug("k3s's .cache.json is not JSON; treated as unreadable", { err });
    return { readable: false, unreadable: 'is not JSON', entries };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { readable: false, unreadable: 'is not a JSON object', entries };
  // A Map, so a hostile key such as "__proto__" is just a key.
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) entries.set(k, parseEntry(v));
  return { readable: true, entries };
}

export async function readK3sImportCache(access: FileAccess, root: string): Promise<K3sImportCache> {
  const file = `${root.replace(/\/+$/, '')}/.cache.json`;
  const st = await access.stat(file).catch((err: unknown) => (log.debug('no .cache.json (k3s import cache off)', { file, err }), null));
  if (!st) return { enabled: false, readable: true, entries: new Map() };
  // A FIFO or device would block the read (and the node's sftp-server with it): never open one.
  if (st.type !== 'file') return { enabled: true, readable: false, unreadable: notAFileClause(st.type === 'dir' ? 'directory' : 'FIFO, socket or device'), entries: new Map() };
  if (st.size > IMPORT_CACHE_MAX_BYTES) return { enabled: true, readable: false, unreadable: `is larger than ${formatLimit('remote.importCacheBytes')}`, entries: new Map() };
  try {
    return { enabled: true, ...parseK3sImportCache((await readBounded(access, file, st.size)).toString('utf8')) };
  } catch (err) {
    log.debug('.cache.json not readable', { file, err });
    return { enabled: true, readable: false, unreadable: 'could not be read', entries: new Map() };
  }
}
