// FileAccess for a non-root SSH user with password-less sudo: each operation is one
// `sudo -n <program> [options] -- <path>` exec (argv-quoted, never a shell string built from
// names), so a node's sudoers may also list just these programs: find, stat, cat, sha256sum,
// rm, mkdir, df, install, mv, realpath. Uploads: SFTP into ~/.holdfast-staging (the user's own,
// 0700; resumable), then `install -o root -g root -m 0644` next to the final name under the
// staging name k3s ignores, `sha256sum` of that copy as root, and `mv -n -T` onto the final name
// (never overwriting; the staged copy still there afterwards means the name was taken meanwhile).
import { createHash } from 'node:crypto';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { ClientChannel, Stats } from 'ssh2';
import { HoldfastError } from '../errors';
import { killChannel, type SshConnection } from '../ssh/connect';
import { assertImagesDirPath } from './imagesDirCheck';
import { sudoersHint } from '../ssh/tunnel';
import type { UploadTarget } from './paths';
import { DEFAULT_HASH_TIMEOUT_MS, execDf, execSha256, execSubSecondMtimes, lastLine, sortWalkOrder, typeFromMode } from './common';
import type { FileAccess, FreeSpace, ListedFile, RemoteFileType, RemoteStat, UploadArea } from './types';
import { logger } from '../log';

const log = logger('access');

const SUDO = ['sudo', '-n'];
/** The user's own dir for upload bytes, relative to their home (SFTP's start dir). */
export const STAGING_DIR = '.holdfast-staging';

const NO_SUCH_FILE = /No such file or directory/;

/**
 * find -printf: type, size, mtime, inode:ctime (the changeId), relative path; NUL-terminated so
 * any name survives.
 */
const FIND_FORMAT = '%y\\t%s\\t%T@\\t%i:%C@\\t%P\\0';

/** Parses FIND_FORMAT records. Names may hold tabs and newlines: the path is the rest after four tabs. */
export function parseFindOutput(out: string): { type: string; size: number; mtime: number; changeId: string; path: string }[] {
  const records: { type: string; size: number; mtime: number; changeId: string; path: string }[] = [];
  for (const rec of out.split('\0')) {
    if (rec === '') continue;
    const t1 = rec.indexOf('\t');
    const t2 = rec.indexOf('\t', t1 + 1);
    const t3 = rec.indexOf('\t', t2 + 1);
    const t4 = rec.indexOf('\t', t3 + 1);
    if (t1 < 0 || t2 < 0 || t3 < 0 || t4 < 0) continue;
    records.push({
      type: rec.slice(0, t1),
      size: Number(rec.slice(t1 + 1, t2)),
      mtime: Math.floor(Number(rec.slice(t2 + 1, t3))),
      changeId: rec.slice(t3 + 1, t4),
      path: rec.slice(t4 + 1),
    });
  }
  return records;
}

/** `stat -c '%f %s %Y %i %z'` (raw mode in hex, size, mtime, inode, ctime) → RemoteStat. */
export function parseStatLine(line: string): RemoteStat | null {
  const m = /^([0-9a-fA-F]+) (\d+) (\d+)(?: (\d+) (\S.*))?/.exec(line.trim());
  if (!m) return null;
  const st: RemoteStat = { type: typeFromMode(parseInt(m[1]!, 16)), size: Number(m[2]), mtime: Number(m[3]) };
  if (m[4] && m[5]) st.changeId = `${m[4]}:${m[5]}`;
  return st;
}

export class SudoFileAccess implements FileAccess {
  readonly mode = 'sudo' as const;
  private home: Promise<string> | undefined;

  constructor(
    private readonly ssh: SshConnection,
    private readonly user: string,
  ) {}

  private refused(what: string, stderr: string, code: number | string | null | undefined): HoldfastError {
    const why = lastLine(stderr) || `exit ${code ?? 'by a signal'}`;
    const sudoIssue = /sudo:|password is required|not in the sudoers|not allowed to execute/i.test(why);
    return new HoldfastError('REFUSED', `${what} on the node failed: ${why}.`, {
      hint: sudoIssue
        ? `Allow ${this.user} to use sudo without a password: a file in /etc/sudoers.d with "${sudoersHint(this.user)}" (edit it with visudo).`
        : 'Check the path and the node\'s file system.',
    });
  }

  private async sudo(argv: string[], what: string, timeoutMs = 120_000) {
    const r = await this.ssh.exec([...SUDO, ...argv], { timeoutMs });
    if (r.code !== 0) throw this.refused(what, r.stderr, r.code ?? r.signal);
    return r;
  }

  async stat(p: string, opts: { lstat?: boolean } = {}): Promise<RemoteStat | null> {
    const r = await this.ssh.exec([...SUDO, 'stat', ...(opts.lstat ? [] : ['-L']), '-c', '%f %s %Y %i %z', '--', p], { timeoutMs: 30_000 });
    if (r.code !== 0) {
      if (NO_SUCH_FILE.test(r.stderr)) return null;
      throw this.refused(`stat ${p}`, r.stderr, r.code);
    }
    const st = parseStatLine(r.stdout);
    if (!st) throw new HoldfastError('INTERNAL', `Unexpected stat output for ${p} on the node.`);
    return st;
  }

  async listFiles(root: string): Promise<ListedFile[]> {
    const base = root.replace(/\/+$/, '') || '/';
    if (!base.startsWith('/')) throw new HoldfastError('INVALID_INPUT', `The images dir ${root} is not an absolute path.`);
    // find never follows symlinks here (-P): symlinked dirs are not descended, as in k3s.
    const r = await this.ssh.exec([...SUDO, 'find', base, '-mindepth', '1', '(', '-type', 'f', '-o', '-type', 'l', ')', '-printf', FIND_FORMAT], {
      timeoutMs: 120_000,
      outputLimit: 'remote.listingOutputBytes',
    });
    if (r.code !== 0) {
      if (r.stdout === '' && NO_SUCH_FILE.test(r.stderr) && !(await this.stat(base))) {
        await assertImagesDirPath(this, base);
        return [];
      }
      await assertImagesDirPath(this, base);
      throw this.refused(`Listing ${base}`, r.stderr, r.code);
    }
    const out: ListedFile[] = [];
    for (const rec of parseFindOutput(r.stdout)) {
      const abs = `${base === '/' ? '' : base}/${rec.path}`;
      if (rec.type === 'f') {
        out.push({ path: rec.path, abs, size: rec.size, mtime: rec.mtime, changeId: rec.changeId });
      } else if (rec.type === 'l') {
        // k3s opens symlinked files: their target's size and mtime count.
        const st = await this.stat(abs).catch((err: unknown) => (log.debug('symlink target not readable; skipped', { path: abs, err }), null));
        if (st?.type === 'file') out.push({ path: rec.path, abs, size: st.size, mtime: st.mtime, ...(st.changeId ? { changeId: st.changeId } : {}) });
      }
    }
    // find lists nothing under a dangling link or a link to a file: say what is wrong with the path.
    if (out.length === 0) await assertImagesDirPath(this, base);
    return sortWalkOrder(out);
  }

  subSecondMtimes(root: string): Promise<ReadonlyMap<string, number> | null> {
    return execSubSecondMtimes(this.ssh, SUDO, root);
  }

  readStream(p: string, opts: { size: number }): Readable {
    const out = new PassThrough({ highWaterMark: 1024 * 1024 });
    let ch: ClientChannel | undefined;
    let finished = false;
    out.on('close', () => {
      if (ch && !finished) killChannel(ch);
    });
    this.ssh.spawn([...SUDO, 'cat', '--', p]).then(
      (channel) => {
        ch = channel;
        if (out.destroyed) return killChannel(channel);
        let stderr = '';
        let code: number | null = null;
        let got = 0;
        channel.stderr.on('data', (d: Buffer) => {
          if (stderr.length < 4096) stderr += d.toString('utf8');
        });
        channel.on('exit', (c: number | null) => (code = c));
        channel.on('error', (e: Error) => out.destroy(e));
        channel.on('data', (d: Buffer) => {
          if (got >= opts.size) return; // the file grew meanwhile: read what it had
          const part = got + d.length > opts.size ? d.subarray(0, opts.size - got) : d;
          got += part.length;
          if (!out.write(part)) channel.pause();
        });
        out.on('drain', () => channel.resume());
        channel.on('close', () => {
          finished = true;
          if (out.destroyed) return;
          if (code !== 0 && code !== null) return out.destroy(this.refused(`Reading ${p}`, stderr, code));
          if (got < opts.size) {
            return out.destroy(new Error(`${p} ended at byte ${got}, before its size of ${opts.size} bytes (was it changed while being read?)`));
          }
          out.end();
        });
        channel.end();
      },
      (e: unknown) => out.destroy(e instanceof Error ? e : new Error(String(e))),
    );
    return out;
  }

  /** inode:ctime from the listing (`cat` cannot read a file's end without reading all of it). */
  async versionKey(f: ListedFile): Promise<string> {
    const id = f.changeId ?? (await this.stat(f.abs))?.changeId;
    if (!id) throw new HoldfastError('INTERNAL', `stat on the node did not give the inode and ctime of ${f.abs}.`);
    return `inode:${id}`;
  }

  sha256(p: string, opts: { timeoutMs?: number } = {}): Promise<string> {
    return execSha256(this.ssh, SUDO, p, opts.timeoutMs ?? DEFAULT_HASH_TIMEOUT_MS);
  }

  async remove(p: string): Promise<void> {
    await this.sudo(['rm', '-f', '--', p], `Removing ${p}`);
  }

  async mkdirp(dir: string): Promise<void> {
    await this.sudo(['mkdir', '-p', '-m', '0755', '--', dir], `Creating ${dir}`);
  }

  async realpath(p: string): Promise<string | null> {
    // -e: every component must exist; -z: NUL-terminated, so any name survives.
    const r = await this.ssh.exec([...SUDO, 'realpath', '-e', '-z', '--', p], { timeoutMs: 30_000 });
    if (r.code !== 0) {
      if (NO_SUCH_FILE.test(r.stderr)) return null;
      throw this.refused(`Resolving ${p}`, r.stderr, r.code);
    }
    const real = r.stdout.split('\0')[0] ?? '';
    if (!real.startsWith('/')) throw new HoldfastError('INTERNAL', `Unexpected realpath output for ${p} on the node.`);
    return real;
  }

  freeSpace(dir: string): Promise<FreeSpace | null> {
    return execDf(this.ssh, SUDO, dir);
  }

  /** The user's home as SFTP resolves it (its start dir). */
  private homeDir(): Promise<string> {
    this.home ??= this.ssh.sftp().then(
      (sftp) => new Promise<string>((resolve, reject) => sftp.realpath('.', (err, p) => (err ? reject(err) : resolve(p)))),
    );
    this.home.catch((err: unknown) => (log.debug('home dir lookup failed; asked again next time', { err }), (this.home = undefined)));
    return this.home;
  }

  private async sftpStat(p: string, lstat: boolean): Promise<RemoteStat | null> {
    const sftp = await this.ssh.sftp();
    return new Promise((resolve, reject) =>
      (lstat ? sftp.lstat.bind(sftp) : sftp.stat.bind(sftp))(p, (err: Error | undefined, st: Stats) => {
        if (err) return (err as { code?: number }).code === 2 ? resolve(null) : reject(err);
        resolve({ type: typeFromMode(st.mode) as RemoteFileType, size: Number(st.size), mtime: Number(st.mtime) });
      }),
    );
  }

  async uploadArea(target: UploadTarget): Promise<UploadArea> {
    const home = await this.homeDir();
    const dir = path.posix.join(home, STAGING_DIR);
    // One staging file per final path, named by its hash: any name (spaces, quotes, newlines)
    // maps to a plain file name, and a re-run finds the same file to resume.
    const id = createHash('sha256').update(target.remotePath).digest('hex').slice(0, 32);
    const writePath = path.posix.join(dir, `${id}.partial`);
    const staged = target.stagingPath;
    const access = this;
    const area: UploadArea = {
      writePath,
      separateDir: dir,
      async prepare() {
        const sftp = await access.ssh.sftp();
        const st = await access.sftpStat(dir, true);
        if (st && st.type !== 'dir') throw new HoldfastError('CONFLICT', `${dir} on the node is not a directory.`, { hint: 'Remove it, then upload again.' });
        if (!st) {
          await new Promise<void>((resolve, reject) => sftp.mkdir(dir, { mode: 0o700 }, (err) => (err ? reject(err) : resolve()))).catch(async (err) => {
            if (!(await access.sftpStat(dir, true))) {
              throw new HoldfastError('REFUSED', `Cannot create ${dir} on the node: ${(err as Error).message}.`, { hint: `${access.user} needs a writable home directory for upload staging.`, cause: err });
            }
          });
        }
      },
      statWritten: () => access.sftpStat(writePath, true),
      // The user's own file: no sudo needed to read it.
      sha256Written: (opts) => execSha256(access.ssh, [], writePath, opts?.timeoutMs ?? DEFAULT_HASH_TIMEOUT_MS),
      async removeWritten() {
        const sftp = await access.ssh.sftp();
        await new Promise<void>((resolve) => sftp.unlink(writePath, () => resolve()));
      },
      async stage(opts) {
        await access.sudo(['install', '-o', 'root', '-g', 'root', '-m', '0644', '--', writePath, staged], `Installing ${staged}`, opts?.timeoutMs ?? DEFAULT_HASH_TIMEOUT_MS);
        return staged;
      },
      async commit() {
        // -n: never replace an existing archive; -T: the target is a file name, never a dir to move into.
        await access.sudo(['mv', '-n', '-T', '--', staged, target.remotePath], `Moving ${staged} into place`);
        if (await access.stat(staged, { lstat: true })) {
          // mv -n left it: someone else's file holds the name now.
          return false;
        }
        await area.removeWritten();
        return true;
      },
      discardStaged: () => access.remove(staged),
    };
    return area;
  }
}
