// Walks a node's images dir over SFTP, the way k3s walks it at start (recursively), and
// reads each archive's index by streaming it — never the whole archive in memory. Indexes
// are cached locally by node + path + size + mtime, so a re-scan of unchanged archives
// costs one directory listing.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FileEntry, SFTPWrapper, Stats } from 'ssh2';
import type { Compression } from '../../shared/domain';
import { writeFileAtomic } from '../config/atomic';
import { sftpReadStream } from '../sftp/readStream';
import { classifyImagesDirPath } from './format/extensions';
import { readArchiveIndex, type ArchiveIndex } from './format/readIndex';

export interface ScannedFile {
  /** Relative to the images dir, '/'-separated. */
  path: string;
  abs: string;
  kind: 'archive' | 'prepull' | 'ignored';
  compression: Compression | null;
  size: number;
  /** Seconds since the epoch, as SFTP reports it. */
  mtime: number;
  index: ArchiveIndex | null;
  error?: string;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

function p<T>(fn: (cb: (err: Error | null | undefined, v: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));
}

const readdir = (sftp: SFTPWrapper, dir: string) => p<FileEntry[]>((cb) => sftp.readdir(dir, cb));
const stat = (sftp: SFTPWrapper, file: string) => p<Stats>((cb) => sftp.stat(file, cb));

/** Local cache of archive indexes, keyed by what identifies an unchanged archive. */
export class IndexCache {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, createHash('sha256').update(key).digest('hex') + '.json');
  }

  async get(key: string): Promise<ArchiveIndex | null> {
    try {
      return JSON.parse(await fs.readFile(this.file(key), 'utf8')) as ArchiveIndex;
    } catch {
      return null;
    }
  }

  async set(key: string, index: ArchiveIndex): Promise<void> {
    await writeFileAtomic(this.file(key), JSON.stringify(index));
  }
}

export interface ScanOptions {
  /** Identifies the node in cache keys (e.g. host:port). */
  nodeKey: string;
  cache?: IndexCache;
  /** Called for each archive whose index had to be streamed from the node. */
  onRead?: (file: string) => void;
}

/** Lists the images dir; a missing dir is an empty list (k3s creates it lazily). */
export async function walkImagesDir(sftp: SFTPWrapper, root: string): Promise<Omit<ScannedFile, 'index'>[]> {
  const out: Omit<ScannedFile, 'index'>[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries: FileEntry[];
    try {
      entries = await readdir(sftp, dir);
    } catch (e) {
      if (rel === '' && (e as { code?: number }).code === 2) return; // no such file: no images dir yet
      throw e;
    }
    entries.sort((a, b) => a.filename.localeCompare(b.filename));
    for (const e of entries) {
      const abs = `${dir}/${e.filename}`;
      const relPath = rel ? `${rel}/${e.filename}` : e.filename;
      let attrs = e.attrs;
      const type = attrs.mode & S_IFMT;
      if (type === S_IFLNK) {
        // k3s opens symlinked files; it does not descend into symlinked dirs.
        try {
          attrs = await stat(sftp, abs);
        } catch {
          continue;
        }
        if ((attrs.mode & S_IFMT) !== S_IFREG) continue;
      } else if (type === S_IFDIR) {
        await walk(abs, relPath);
        continue;
      } else if (type !== S_IFREG) continue;
      const c = classifyImagesDirPath(e.filename);
      out.push({
        path: relPath,
        abs,
        kind: c.kind,
        compression: c.kind === 'archive' ? c.compression : null,
        size: Number(attrs.size),
        mtime: Number(attrs.mtime),
      });
    }
  };
  await walk(root.replace(/\/+$/, ''), '');
  return out;
}

export async function scanImagesDir(sftp: SFTPWrapper, root: string, opts: ScanOptions): Promise<ScannedFile[]> {
  const files = await walkImagesDir(sftp, root);
  const out: ScannedFile[] = [];
  for (const f of files) {
    if (f.kind !== 'archive' || !f.compression) {
      out.push({ ...f, index: null });
      continue;
    }
    const key = `${opts.nodeKey}\0${f.abs}\0${f.size}\0${f.mtime}`;
    let index = (await opts.cache?.get(key)) ?? null;
    if (!index) {
      try {
        opts.onRead?.(f.path);
        index = await readArchiveIndex(sftpReadStream(sftp, f.abs, { size: f.size }), { compression: f.compression });
        await opts.cache?.set(key, index);
      } catch (e) {
        out.push({ ...f, index: null, error: e instanceof Error ? e.message : String(e) });
        continue;
      }
    }
    out.push({ ...f, index });
  }
  return out;
}

/**
 * k3s's import cache, `<images dir>/.cache.json` (opt-in: present = on). Holdfast reads
 * entries keyed by the archive's path on the node with its size and mtime (milliseconds);
 * an entry matching the archive's current size and mtime means k3s will skip it at start.
 * A cache file Holdfast cannot read is taken as "every archive is skipped" — the
 * conservative reading, since it can only over-predict lost pins.
 */
export interface K3sImportCache {
  enabled: boolean;
  readable: boolean;
  entries: Record<string, { size: number; mtime: number }>;
}

export async function readK3sImportCache(sftp: SFTPWrapper, root: string): Promise<K3sImportCache> {
  const file = `${root.replace(/\/+$/, '')}/.cache.json`;
  let st: Stats;
  try {
    st = await stat(sftp, file);
  } catch {
    return { enabled: false, readable: true, entries: {} };
  }
  if (st.size === 0) return { enabled: true, readable: true, entries: {} };
  if (st.size > 16 * 1024 * 1024) return { enabled: true, readable: false, entries: {} };
  const chunks: Buffer[] = [];
  try {
    for await (const c of sftpReadStream(sftp, file, { size: Number(st.size) })) chunks.push(c as Buffer);
    const data = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (!data || typeof data !== 'object' || Array.isArray(data)) return { enabled: true, readable: false, entries: {} };
    const entries: K3sImportCache['entries'] = {};
    for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
      const e = v as { size?: unknown; mtime?: unknown };
      if (typeof e?.size === 'number' && typeof e?.mtime === 'number') entries[k] = { size: e.size, mtime: e.mtime };
    }
    return { enabled: true, readable: true, entries };
  } catch {
    return { enabled: true, readable: false, entries: {} };
  }
}

/** Does the cache list this archive unchanged (SFTP mtimes have whole seconds)? */
export function cachedByK3s(cache: K3sImportCache, file: Pick<ScannedFile, 'abs' | 'size' | 'mtime'>): boolean {
  if (!cache.enabled) return false;
  if (!cache.readable) return true;
  const e = cache.entries[file.abs];
  return !!e && e.size === file.size && Math.floor(e.mtime / 1000) === file.mtime;
}
