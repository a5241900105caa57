// Removing an archive from a node's images dir — only once every image it brings is present,
// complete and durably pinned (else refused, saying exactly what is missing), or with an
// explicit, logged force. The archive's SHA-256 is recorded before it goes.
import type { SFTPWrapper, Stats } from 'ssh2';
import type { AuditEntry, RemovalCheck } from '../../shared/domain';
import type { AuditLog } from '../audit/log';
import { HoldfastError } from '../errors';
import type { NodeInventory } from '../node/inspect';
import type { NodeSession } from '../node/session';

function sftpStat(sftp: SFTPWrapper, file: string): Promise<Stats | null> {
  return new Promise((resolve, reject) =>
    sftp.stat(file, (err, st) => {
      if (err) return (err as { code?: number }).code === 2 ? resolve(null) : reject(err);
      resolve(st);
    }),
  );
}

function sftpUnlink(sftp: SFTPWrapper, file: string): Promise<void> {
  return new Promise((resolve, reject) => sftp.unlink(file, (err) => (err ? reject(err) : resolve())));
}

/** SHA-256 of a file on the node, computed there (no bytes cross the link). */
export async function remoteSha256(session: NodeSession, abs: string): Promise<string> {
  const r = await session.ssh.exec(['sha256sum', '--', abs], { timeoutMs: 30 * 60_000 });
  const m = /^\\?([0-9a-f]{64})\s/.exec(r.stdout);
  if (r.code !== 0 || !m) {
    throw new HoldfastError('INTERNAL', `could not compute the SHA-256 of ${abs} on the node: ${r.stderr.trim() || `exit ${r.code}`}`);
  }
  return m[1]!;
}

export interface RemoveOptions {
  force?: boolean;
}

export async function removeArchive(
  session: NodeSession,
  inv: NodeInventory,
  check: RemovalCheck,
  audit: AuditLog,
  opts: RemoveOptions = {},
): Promise<AuditEntry> {
  const file = inv.files.find((f) => f.path === check.path);
  if (!file) throw new HoldfastError('NOT_FOUND', `no file ${check.path} in ${session.def.imagesDir}`);
  if (file.kind !== 'archive') {
    throw new HoldfastError('REFUSED', `${check.path} is not an image archive; Holdfast only removes archives`);
  }
  if (!check.allowed && !opts.force) {
    throw new HoldfastError('REFUSED', `refusing to remove ${check.path}: ${check.problems.join(' ')}`, {
      hint: `Fix the above first; --force removes it anyway and is logged.`,
    });
  }
  const sftp = await session.ssh.sftp();
  const sha256 = await remoteSha256(session, file.abs);
  // The archive must be the one that was checked: not replaced or grown since.
  const now = await sftpStat(sftp, file.abs);
  if (!now) throw new HoldfastError('CONFLICT', `${check.path} disappeared before Holdfast removed it`);
  if (Number(now.size) !== file.size || Number(now.mtime) !== file.mtime) {
    throw new HoldfastError('CONFLICT', `${check.path} changed while it was being checked; nothing was removed`, { hint: 'Run the check again.' });
  }
  await sftpUnlink(sftp, file.abs);
  if (await sftpStat(sftp, file.abs)) throw new HoldfastError('INTERNAL', `${check.path} is still there after removal`);
  return audit.append({
    node: session.def.name,
    action: 'rm-archive',
    ...(opts.force ? { forced: true } : {}),
    archive: { path: check.path, size: file.size, sha256 },
    ...(opts.force && !check.allowed ? { note: `forced despite: ${check.problems.join(' ')}` } : {}),
  });
}
