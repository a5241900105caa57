// Free space where archives land: the file system of the images dir (or its nearest existing
// parent — k3s creates the dir lazily). statvfs@openssh.com over SFTP, else `df -Pk` (argv exec).
import path from 'node:path';
import type { NodeSession, SessionSftp, SessionSsh } from '../../node/session';
import type { DiskInfo } from '../../../shared/fleet';
import { logger } from '../../log';

const log = logger('fleet');

function statExists(sftp: SessionSftp, p: string): Promise<boolean> {
  return new Promise((resolve) => sftp.stat(p, (err) => resolve(!err)));
}

async function nearestExisting(sftp: SessionSftp, dir: string): Promise<string> {
  let d = path.posix.normalize(dir);
  for (;;) {
    if (await statExists(sftp, d)) return d;
    const up = path.posix.dirname(d);
    if (up === d) return d;
    d = up;
  }
}

/**
 * Total and available bytes from `df -Pk -- DIR` (POSIX: 1024-byte blocks, one unwrapped line
 * per file system). Read from the numeric columns so a file-system name with spaces is harmless.
 */
export function parseDf(stdout: string): { freeBytes: number; totalBytes: number } | null {
  const line = stdout.split('\n').filter((l) => l.trim() !== '')[1];
  if (!line) return null;
  const m = /\s(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s/.exec(line + ' ');
  if (!m) return null;
  return { totalBytes: Number(m[1]) * 1024, freeBytes: Number(m[3]) * 1024 };
}

export async function diskOf(ssh: Pick<SessionSsh, 'sftp' | 'exec' | 'closed' | 'where'>, imagesDir: string, timeoutMs = 15_000): Promise<DiskInfo | null> {
  let sftp: SessionSftp | null = null;
  let dir = imagesDir;
  try {
    sftp = await ssh.sftp();
    dir = await nearestExisting(sftp, imagesDir);
  } catch (err) {
    // no SFTP: df on the images dir itself may still answer for a parent
    log.debug('no SFTP for the disk check; trying df', { where: ssh.where, imagesDir, err });
  }
  if (sftp) {
    try {
      const v = await new Promise<{ f_frsize: number; f_bsize: number; f_bavail: number; f_blocks: number }>((resolve, reject) =>
        sftp!.ext_openssh_statvfs(dir, (err: Error | null | undefined, st: unknown) => (err ? reject(err) : resolve(st as never))),
      );
      const unit = Number(v.f_frsize) || Number(v.f_bsize);
      if (unit > 0) return { path: dir, freeBytes: Number(v.f_bavail) * unit, totalBytes: Number(v.f_blocks) * unit, via: 'statvfs' };
    } catch (err) {
      // the SFTP server does not offer statvfs@openssh.com: ask df
      log.debug('statvfs@openssh.com unavailable; asking df', { where: ssh.where, dir, err });
    }
  }
  if (ssh.closed) return null;
  try {
    const r = await ssh.exec(['df', '-Pk', '--', dir], { timeoutMs });
    const d = r.code === 0 ? parseDf(r.stdout) : null;
    return d ? { path: dir, ...d, via: 'df' } : null;
  } catch (err) {
    log.debug('df failed; disk unknown', { where: ssh.where, dir, err });
    return null;
  }
}

/**
 * The images dir's file system for a session: over SFTP (statvfs, else df) when the SSH user
 * reads the images dir itself; through the node's sudo file access (`sudo -n df`) otherwise, since
 * a non-root user may not even stat a root-only images dir.
 */
export async function diskOfSession(session: Pick<NodeSession, 'ssh' | 'files' | 'def'>): Promise<DiskInfo | null> {
  const files = session.files;
  if (files.mode === 'sftp') return diskOf(session.ssh, session.def.imagesDir);
  let dir = path.posix.normalize(session.def.imagesDir);
  for (;;) {
    if (await files.stat(dir).catch((err: unknown) => (log.debug('not there (yet); trying its parent', { dir, err }), null))) break;
    const up = path.posix.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const fs = await files.freeSpace(dir).catch((err: unknown) => (log.debug('free space unknown', { node: session.def.name, dir, err }), null));
  return fs ? { path: dir, freeBytes: fs.free, totalBytes: fs.total, via: 'df' } : null;
}
