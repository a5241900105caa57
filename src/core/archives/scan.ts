// Walks a node's images dir (through its FileAccess: SFTP as root, or sudo -n), the way k3s
// walks it at start (recursively), and reads each archive's index by streaming it — never the
// whole archive in memory. Indexes
// are cached locally by node + path + size + mtime, so a re-scan of unchanged archives
// costs one directory listing.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Compression } from '../../shared/domain';
import type { FileAccess } from '../access';
import { writeFileAtomic } from '../config/atomic';
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
export async function walkImagesDir(files: FileAccess, root: string): Promise<Omit<ScannedFile, 'index'>[]> {
  const base = root.replace(/\/+$/, '');
  return (await files.listFiles(base)).map((f) => {
    const c = classifyImagesDirPath(f.path.slice(f.path.lastIndexOf('/') + 1));
    return {
      path: f.path,
      abs: f.abs,
      kind: c.kind,
      compression: c.kind === 'archive' ? c.compression : null,
      size: f.size,
      mtime: f.mtime,
    };
  });
}

export async function scanImagesDir(access: FileAccess, root: string, opts: ScanOptions): Promise<ScannedFile[]> {
  const files = await walkImagesDir(access, root);
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
        index = await readArchiveIndex(access.readStream(f.abs, { size: f.size }), { compression: f.compression });
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

export async function readK3sImportCache(access: FileAccess, root: string): Promise<K3sImportCache> {
  const file = `${root.replace(/\/+$/, '')}/.cache.json`;
  const st = await access.stat(file).catch(() => null);
  if (!st) return { enabled: false, readable: true, entries: {} };
  if (st.size === 0) return { enabled: true, readable: true, entries: {} };
  if (st.size > 16 * 1024 * 1024) return { enabled: true, readable: false, entries: {} };
  const chunks: Buffer[] = [];
  try {
    for await (const c of access.readStream(file, { size: st.size })) chunks.push(c as Buffer);
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
