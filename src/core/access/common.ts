// Helpers shared by both FileAccess implementations.
import type { Readable } from 'node:stream';
import { HoldfastError } from '../errors';
import type { SshConnection } from '../ssh/connect';
import { parseDfAvailable, parseSha256sum } from './paths';
import type { FreeSpace, ListedFile, RemoteFileType } from './types';
import { logger } from '../log';
import { compareText } from '../../shared/compareText';

const log = logger('access');

const S_IFMT = 0o170000;

/** What FileAccess.versionKey hashes of each end of a file when it has no changeId. */
export const VERSION_SAMPLE_BYTES = 64 * 1024;

/** Collects a stream, failing past `max` bytes (it was asked for at most that many). */
export async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream) {
    n += (c as Buffer).length;
    if (n > max) {
      stream.destroy();
      throw new HoldfastError('INTERNAL', `A read of at most ${max} bytes returned more.`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

export function typeFromMode(mode: number): RemoteFileType {
  switch (mode & S_IFMT) {
    case 0o100000:
      return 'file';
    case 0o040000:
      return 'dir';
    case 0o120000:
      return 'symlink';
    default:
      return 'other';
  }
}

/** Depth-first order with each directory's names sorted (what the SFTP walk has always produced). */
export function sortWalkOrder(files: ListedFile[]): ListedFile[] {
  const key = new Map(files.map((f) => [f, f.path.split('/')]));
  return files.sort((a, b) => {
    const x = key.get(a)!;
    const y = key.get(b)!;
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] === y[i]) continue;
      // A file and a directory of the same parent compare by their names, like one readdir.
      return compareText(x[i]!, y[i]!);
    }
    return x.length - y.length;
  });
}

/** `[sudo -n] sha256sum -- path` → hex; REFUSED with sha256sum's complaint otherwise. */
export async function execSha256(ssh: SshConnection, prefix: string[], path: string, timeoutMs: number): Promise<string> {
  const r = await ssh.exec([...prefix, 'sha256sum', '--', path], { timeoutMs });
  const hex = r.code === 0 ? parseSha256sum(r.stdout) : null;
  if (!hex) {
    throw new HoldfastError('REFUSED', `Cannot compute the SHA-256 of ${path} on the node: sha256sum ${r.code === 0 ? 'printed no digest' : `failed (${lastLine(r.stderr) || `exit ${r.code ?? r.signal}`})`}.`, {
      hint: 'Holdfast needs sha256sum (coreutils or busybox) on the node.',
    });
  }
  return hex;
}

/** `[sudo -n] df -Pk -- dir` → free bytes, or null. */
export async function execDf(ssh: SshConnection, prefix: string[], dir: string): Promise<FreeSpace | null> {
  if (ssh.closed) return null;
  try {
    const r = await ssh.exec([...prefix, 'df', '-Pk', '--', dir], { timeoutMs: 15_000 });
    const free = r.code === 0 ? parseDfAvailable(r.stdout) : null;
    return free === null ? null : { free, total: null };
  } catch (err) {
    log.debug('df failed; free space unknown', { dir, err });
    return null;
  }
}

export function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.trim() ?? '';
}

export const DEFAULT_HASH_TIMEOUT_MS = 30 * 60_000;

/** find's format for FileAccess.subSecondMtimes: mtime (`%T@`, seconds with a fraction) and the path below root. */
const MTIME_FORMAT = '%T@\\t%P\\0';

/**
 * `find -L ROOT -mindepth 1 -type f -printf MTIME_FORMAT` output → absolute path → nanoseconds.
 * The fraction is read as digits, not as a float, so no precision is lost.
 */
export function parseSubSecondMtimes(out: string, root: string): Map<string, number> {
  const base = root.replace(/\/+$/, '');
  const map = new Map<string, number>();
  for (const rec of out.split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const m = /^-?\d+(?:\.(\d+))?$/.exec(rec.slice(0, tab));
    if (!m) continue;
    map.set(`${base}/${rec.slice(tab + 1)}`, Number((m[1] ?? '').slice(0, 9).padEnd(9, '0')));
  }
  return map;
}

/** `[sudo -n] find -L root …`: FileAccess.subSecondMtimes over an exec; null when find cannot say. */
export async function execSubSecondMtimes(ssh: SshConnection, prefix: string[], root: string): Promise<Map<string, number> | null> {
  const base = root.replace(/\/+$/, '') || '/';
  try {
    // -L: a symlinked file's target mtime counts (k3s stats through the link). A loop or an
    // unreadable entry makes find exit 1 but still print the rest.
    const r = await ssh.exec([...prefix, 'find', '-L', base, '-mindepth', '1', '-type', 'f', '-printf', MTIME_FORMAT], {
      timeoutMs: 60_000,
      outputLimit: 'remote.listingOutputBytes',
    });
    if (r.code !== 0 && r.stdout === '') return null;
    return parseSubSecondMtimes(r.stdout, base);
  } catch (err) {
    log.debug('sub-second mtimes not read', { root, err });
    return null;
  }
}
