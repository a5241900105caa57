// FileAccess on this machine's own file system (`--local`: Holdfast runs on the node as root).
// The same answers as SFTP as root gives, straight from node:fs: no SSH, no subprocess, and a
// listing that carries each file's inode:ctime as sudo's find does (a cheap, exact changeId).
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs, type Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HoldfastError } from '../errors';
import type { UploadTarget } from './paths';
import { isPermissionDenied, mayNotReadError } from './refusals';
import { sortWalkOrder } from './common';
import { assertImagesDirPath } from './imagesDirCheck';
import type { FileAccess, FreeSpace, ListedFile, RemoteFileType, RemoteStat, UploadArea } from './types';
import { logger } from '../log';

const log = logger('access');

const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT' || (e as NodeJS.ErrnoException | null)?.code === 'ENOTDIR';

function typeOf(st: Stats): RemoteFileType {
  return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
}

/** inode:ctime, as sudo's `stat -c '%i %z'` / find's `%i:%C@` tell a replaced file from the old one. */
const changeIdOf = (st: Stats): string => `${st.ino}:${st.ctimeMs}`;

function toStat(st: Stats): RemoteStat {
  return { type: typeOf(st), size: st.size, mtime: Math.floor(st.mtimeMs / 1000), changeId: changeIdOf(st) };
}

export class LocalFileAccess implements FileAccess {
  readonly mode = 'local' as const;

  constructor(
    /** For messages: who reads and writes (the user Holdfast runs as). */
    private readonly user: string,
    /** For messages: this machine's node name. */
    private readonly node: string,
  ) {}

  async stat(p: string, opts: { lstat?: boolean } = {}): Promise<RemoteStat | null> {
    try {
      return toStat(opts.lstat ? await fs.lstat(p) : await fs.stat(p));
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async listFiles(root: string): Promise<ListedFile[]> {
    const base = root.replace(/\/+$/, '') || '/';
    const out: ListedFile[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let names: string[];
      try {
        names = await fs.readdir(dir);
      } catch (e) {
        if (rel === '') await assertImagesDirPath(this, base, this.node); // a broken link, said as such
        if (rel === '' && isMissing(e)) return; // no images dir yet (k3s creates it lazily)
        if (isPermissionDenied(e) || (e as NodeJS.ErrnoException).code === 'EACCES') throw mayNotReadError({ user: this.user, node: this.node, folder: dir, imagesDir: base, cause: e });
        throw e;
      }
      for (const name of names) {
        const abs = `${dir}/${name}`;
        const relPath = rel ? `${rel}/${name}` : name;
        let st = await fs.lstat(abs).catch(() => null);
        if (!st) continue; // removed meanwhile
        if (st.isSymbolicLink()) {
          // k3s opens symlinked files; it does not descend into symlinked dirs.
          st = await fs.stat(abs).catch((err: unknown) => (log.debug('dangling symlink in the images dir skipped', { path: abs, err }), null));
          if (!st?.isFile()) continue;
        } else if (st.isDirectory()) {
          await walk(abs, relPath);
          continue;
        } else if (!st.isFile()) continue;
        out.push({ path: relPath, abs, size: st.size, mtime: Math.floor(st.mtimeMs / 1000), changeId: changeIdOf(st) });
      }
    };
    await walk(base, '');
    return sortWalkOrder(out);
  }

  readStream(p: string, opts: { size: number }): Readable {
    return createReadStream(p, opts.size > 0 ? { start: 0, end: opts.size - 1 } : { start: 0, end: -1 });
  }

  async subSecondMtimes(root: string): Promise<ReadonlyMap<string, number> | null> {
    const out = new Map<string, number>();
    for (const f of await this.listFiles(root)) {
      const st = await fs.stat(f.abs, { bigint: true }).catch(() => null);
      if (st) out.set(f.abs, Number(st.mtimeNs % 1_000_000_000n));
    }
    return out;
  }

  async versionKey(f: ListedFile): Promise<string> {
    if (f.changeId) return `change:${f.changeId}`;
    const st = await fs.stat(f.abs);
    return `change:${changeIdOf(st)}`;
  }

  async sha256(p: string): Promise<string> {
    const hash = createHash('sha256');
    try {
      await pipeline(createReadStream(p), hash);
    } catch (e) {
      throw new HoldfastError('REFUSED', `Cannot compute the SHA-256 of ${p}: ${(e as Error).message}.`, { cause: e });
    }
    return hash.digest('hex');
  }

  async remove(p: string): Promise<void> {
    try {
      await fs.unlink(p);
    } catch (e) {
      if (isMissing(e)) return;
      throw new HoldfastError('REFUSED', `Cannot remove ${p}: ${(e as Error).message}.`, { cause: e });
    }
  }

  async mkdirp(dir: string): Promise<void> {
    try {
      await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    } catch (e) {
      throw new HoldfastError('REFUSED', `Cannot create ${dir}: ${(e as Error).message}.`, {
        hint: `Holdfast writes as ${this.user}; that user needs write access to it (run it as root on the node).`,
        cause: e,
      });
    }
  }

  async freeSpace(dir: string): Promise<FreeSpace | null> {
    try {
      const st = await fs.statfs(dir);
      return { free: st.bavail * st.bsize, total: st.blocks * st.bsize };
    } catch (err) {
      log.debug('statfs failed; free space unknown', { dir, err });
      return null;
    }
  }

  async realpath(p: string): Promise<string | null> {
    try {
      return await fs.realpath(p);
    } catch (e) {
      if (isMissing(e)) return null;
      throw new HoldfastError('REFUSED', `Cannot resolve ${p}: ${(e as Error).message}.`, { cause: e });
    }
  }

  async uploadArea(target: UploadTarget): Promise<UploadArea> {
    const staging = target.stagingPath;
    return {
      writePath: staging,
      separateDir: null,
      prepare: async () => undefined, // the staging file sits in the target dir, made by mkdirp
      statWritten: () => this.stat(staging, { lstat: true }),
      sha256Written: () => this.sha256(staging),
      removeWritten: () => this.remove(staging),
      stage: async () => staging,
      commit: async () => {
        // link(2) refuses an existing name: the final name is never overwritten.
        try {
          await fs.link(staging, target.remotePath);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
          throw new HoldfastError('REFUSED', `Cannot move ${staging} to ${target.remotePath}: ${(e as Error).message}.`, { cause: e });
        }
        await this.remove(staging);
        return true;
      },
      discardStaged: () => this.remove(staging),
    };
  }
}
