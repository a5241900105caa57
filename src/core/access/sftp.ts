// FileAccess for an SSH user that may touch the images dir itself (root): SFTP, plus
// sha256sum/df over exec.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { FileEntry, SFTPWrapper, Stats } from 'ssh2';
import { HoldfastError } from '../errors';
import { isPermissionDenied, mayNotReadError } from './refusals';
import { assertImagesDirPath } from './imagesDirCheck';
import { sftpReadStream } from '../sftp/readStream';
import type { SshConnection } from '../ssh/connect';
import type { UploadTarget } from './paths';
import { DEFAULT_HASH_TIMEOUT_MS, execDf, execSha256, execSubSecondMtimes, readAll, typeFromMode, VERSION_SAMPLE_BYTES } from './common';
import type { FileAccess, FreeSpace, ListedFile, RemoteStat, UploadArea } from './types';
import { logger } from '../log';
import { compareText } from '../../shared/compareText';

const log = logger('access');

const SFTP_NO_SUCH_FILE = 2;

function call<T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    } catch (err) {
      reject(err); // ssh2 throws synchronously for unsupported extensions
    }
  });
}

export function isNoSuchFile(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === SFTP_NO_SUCH_FILE;
}

function toStat(st: Stats): RemoteStat {
  return { type: typeFromMode(st.mode), size: Number(st.size), mtime: Number(st.mtime) };
}

export class SftpFileAccess implements FileAccess {
  readonly mode = 'sftp' as const;

  constructor(
    private readonly ssh: SshConnection,
    /** For messages: who writes ("root"). */
    private readonly user: string,
    /** For messages: the node's name. */
    private readonly node: string,
  ) {}

  private sftp(): Promise<SFTPWrapper> {
    return this.ssh.sftp();
  }

  async stat(p: string, opts: { lstat?: boolean } = {}): Promise<RemoteStat | null> {
    const sftp = await this.sftp();
    try {
      return toStat(await call<Stats>((cb) => (opts.lstat ? sftp.lstat(p, cb) : sftp.stat(p, cb))));
    } catch (err) {
      if (isNoSuchFile(err)) return null;
      throw err;
    }
  }

  async listFiles(root: string): Promise<ListedFile[]> {
    const base = root.replace(/\/+$/, '');
    const sftp = await this.sftp();
    const out: ListedFile[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let entries: FileEntry[];
      try {
        entries = await call<FileEntry[]>((cb) => sftp.readdir(dir, cb));
      } catch (e) {
        // A broken path (dangling link, loop, link to a file) is said as such, not as missing or denied.
        if (rel === '') await assertImagesDirPath(this, base, this.node);
        if (rel === '' && isNoSuchFile(e)) return; // no images dir yet (k3s creates it lazily)
        // A root-only (0700) images dir and a login without sudo: who may not read what, not
        // the server's bare "Permission denied".
        if (isPermissionDenied(e)) throw mayNotReadError({ user: this.user, node: this.node, folder: dir, imagesDir: base, cause: e });
        throw e;
      }
      entries.sort((a, b) => compareText(a.filename, b.filename));
      for (const e of entries) {
        const abs = `${dir}/${e.filename}`;
        const relPath = rel ? `${rel}/${e.filename}` : e.filename;
        let attrs = e.attrs;
        const type = typeFromMode(attrs.mode);
        if (type === 'symlink') {
          // k3s opens symlinked files; it does not descend into symlinked dirs.
          try {
            attrs = await call<Stats>((cb) => sftp.stat(abs, cb));
          } catch (err) {
            log.debug('dangling symlink in the images dir skipped', { path: abs, err });
            continue;
          }
          if (typeFromMode(attrs.mode) !== 'file') continue;
        } else if (type === 'dir') {
          await walk(abs, relPath);
          continue;
        } else if (type !== 'file') continue;
        out.push({ path: relPath, abs, size: Number(attrs.size), mtime: Number(attrs.mtime) });
      }
    };
    await walk(base, '');
    return out;
  }

  subSecondMtimes(root: string): Promise<ReadonlyMap<string, number> | null> {
    return execSubSecondMtimes(this.ssh, [], root);
  }

  readStream(p: string, opts: { size: number }): Readable {
    // sftp() is usually resolved already; a PassThrough bridges the (rare) wait.
    return lazyReadable(this.sftp().then((sftp) => sftpReadStream(sftp, p, { size: opts.size })));
  }

  /**
   * SFTP (v3) attributes carry no inode or ctime, so: SHA-256 of the first and last 64 KiB (two
   * reads in parallel). Enough to tell a replacement: compressed archives end in a checksum of all
   * their content (gzip CRC-32, bzip2 stream CRC, the zstd and lz4 CLIs' content checksums), and a
   * plain tar keeps the metadata naming its images at one end (docker save writes manifest.json
   * last; OCI layouts start or end with index.json). A change in the middle of a plain tar alone is
   * missed: it would keep the names and digests the metadata gives anyway.
   */
  async versionKey(f: ListedFile): Promise<string> {
    const sftp = await this.sftp();
    const n = VERSION_SAMPLE_BYTES;
    const [head, tail] = await Promise.all([
      readAll(sftpReadStream(sftp, f.abs, { size: Math.min(n, f.size) }), n),
      f.size > n ? readAll(sftpReadStream(sftp, f.abs, { start: Math.max(n, f.size - n), size: f.size }), n) : Promise.resolve(Buffer.alloc(0)),
    ]);
    return 'sample:' + createHash('sha256').update(head).update(tail).digest('hex');
  }

  sha256(p: string, opts: { timeoutMs?: number } = {}): Promise<string> {
    return execSha256(this.ssh, [], p, opts.timeoutMs ?? DEFAULT_HASH_TIMEOUT_MS);
  }

  async remove(p: string): Promise<void> {
    const sftp = await this.sftp();
    try {
      await call<void>((cb) => sftp.unlink(p, cb));
    } catch (err) {
      if (isNoSuchFile(err)) return;
      throw new HoldfastError('REFUSED', `Cannot remove ${p} on the node: ${(err as Error).message}.`, { cause: err });
    }
  }

  async mkdirp(dir: string): Promise<void> {
    const sftp = await this.sftp();
    const missing: string[] = [];
    for (let d = dir; !(await this.stat(d)); d = path.posix.dirname(d)) {
      missing.unshift(d);
      if (path.posix.dirname(d) === d) break;
    }
    for (const d of missing) {
      try {
        await call<void>((cb) => sftp.mkdir(d, { mode: 0o755 }, cb));
      } catch (err) {
        if (await this.stat(d).catch((e: unknown) => (log.debug('stat after a failed mkdir failed', { dir: d, err: e }), null))) continue; // created meanwhile
        throw new HoldfastError('REFUSED', `Cannot create ${d} on the node: ${(err as Error).message}.`, {
          hint: `Holdfast writes as ${this.user}; that user needs write access to it (or set the node's sudo option).`,
          cause: err,
        });
      }
    }
  }

  async realpath(p: string): Promise<string | null> {
    const sftp = await this.sftp();
    let real: string;
    try {
      real = await call<string>((cb) => sftp.realpath(p, cb));
    } catch (err) {
      if (isNoSuchFile(err)) return null;
      throw new HoldfastError('REFUSED', `Cannot resolve ${p} on the node: ${(err as Error).message}.`, { cause: err });
    }
    // OpenSSH resolves a missing last component too; say "missing" as `realpath -e` does.
    return (await this.stat(real, { lstat: true })) ? real : null;
  }

  async freeSpace(dir: string): Promise<FreeSpace | null> {
    try {
      const sftp = await this.sftp();
      const v = await call<{ f_frsize: number; f_bavail: number; f_blocks: number; f_bsize: number }>((cb) => sftp.ext_openssh_statvfs(dir, cb));
      const unit = Number(v.f_frsize) || Number(v.f_bsize);
      return { free: Number(v.f_bavail) * unit, total: Number(v.f_blocks) * unit };
    } catch (err) {
      // not offered by this SFTP server (or it failed): ask df
      log.debug('statvfs@openssh.com unavailable; asking df', { dir, err });
    }
    return execDf(this.ssh, [], dir);
  }

  async uploadArea(target: UploadTarget): Promise<UploadArea> {
    const access = this;
    const staging = target.stagingPath;
    return {
      writePath: staging,
      separateDir: null,
      async prepare() {
        // the staging file sits in the target dir, made by mkdirp
      },
      statWritten: () => access.stat(staging, { lstat: true }),
      sha256Written: (opts) => access.sha256(staging, opts),
      removeWritten: () => access.remove(staging),
      async stage() {
        return staging;
      },
      async commit() {
        const sftp = await access.sftp();
        try {
          await call<void>((cb) => sftp.ext_openssh_rename(staging, target.remotePath, cb));
        } catch (err) {
          if (access.ssh.closed) throw err;
          if (!/does not support/i.test((err as Error).message)) throw renameError(err);
          // No posix-rename: a plain SFTP rename (OpenSSH: link + unlink) refuses an existing target.
          try {
            await call<void>((cb) => sftp.rename(staging, target.remotePath, cb));
          } catch (err2) {
            throw renameError(err2);
          }
        }
        return true;
        function renameError(err: unknown) {
          return new HoldfastError('REFUSED', `Cannot rename ${staging} to ${target.remotePath} on the node: ${(err as Error).message}.`, { cause: err });
        }
      },
      discardStaged: () => access.remove(staging),
    };
  }
}

/** A Readable that forwards another one which is still being created. */
export function lazyReadable(source: Promise<Readable>): Readable {
  const out = new PassThrough();
  source.then(
    (s) => {
      s.on('error', (e) => out.destroy(e));
      out.on('close', () => s.destroy());
      s.pipe(out);
    },
    (e: unknown) => out.destroy(e instanceof Error ? e : new Error(String(e))),
  );
  return out;
}
