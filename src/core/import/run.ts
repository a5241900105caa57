// The guided air-gap import for one node: check → upload (verified, resumable) → wait for
// k3s to import → make the pins durable → remove the archive safely. Every step is safe to
// repeat, so running the whole import again after any failure picks up where it stopped.
import path from 'node:path';
import type { ImportPhase, JobNodeProgress } from '../../shared/domain';
import { configDigestFor } from '../archives/format/readIndex';
import { HoldfastError } from '../errors';
import { applyPinChange, inventory, removeArchiveSafely, type OpsContext } from '../node/operations';
import type { NodeSession } from '../node/session';
import { uploadArchive } from '../upload';
import type { InspectedArchive } from './inspectLocal';
import { waitForImport } from './waitForImport';

export interface ImportOptions {
  pin: boolean;
  removeArchive: boolean;
  importTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (p: Partial<Omit<JobNodeProgress, 'node'>>) => void;
}

export interface NodeImportResult {
  node: string;
  relPath: string;
  uploaded: boolean;
  resumedFrom: number;
  pinned: number;
  removed: boolean;
  sha256: string;
  skipped?: string;
}

export async function importToNode(session: NodeSession, ctx: OpsContext, archive: InspectedArchive, opts: ImportOptions): Promise<NodeImportResult> {
  const node = session.def.name;
  const report = (phase: ImportPhase, message: string, extra: Partial<JobNodeProgress> = {}) => opts.onProgress?.({ phase, message, state: 'running', ...extra });
  const relPath = path.basename(archive.path);
  const platform = await session.platform();

  report('checking', 'checking what the node already has');
  // Already done on an earlier run? Every image present, complete and durably pinned, and the
  // archive gone: nothing to send again.
  const before = await inventory(session, ctx);
  const onNode = before.archives.find((a) => a.path === relPath);
  const wanted = archive.index.images.map((i) => ({ name: i.name, id: configDigestFor(i, platform) }));
  const allDurable = wanted.every((w) => before.images.some((r) => (w.name ? r.name === w.name : r.imageId === w.id) && r.imageId === w.id && r.pin === 'durable'));
  if (!onNode && allDurable && opts.pin && opts.removeArchive) {
    report('done', 'already imported and durably pinned; nothing to do', { state: 'succeeded' });
    return { node, relPath, uploaded: false, resumedFrom: 0, pinned: 0, removed: false, sha256: archive.sha256, skipped: 'already imported and durably pinned' };
  }

  report('uploading', 'uploading', { bytesTotal: archive.size });
  const up = await uploadArchive(session, archive.path, {
    remoteName: relPath,
    expectedSha256: archive.sha256,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onNotice: (notice) => opts.onProgress?.({ notice }),
    onProgress: (p) =>
      opts.onProgress?.({
        phase: p.phase === 'uploading' ? 'uploading' : p.phase === 'checking' ? 'checking' : 'verifying',
        bytesDone: p.bytesDone,
        bytesTotal: p.bytesTotal,
        rate: p.rate,
        eta: p.eta,
        message: p.phase === 'uploading' ? 'uploading' : p.phase === 'verifying' ? 'verifying SHA-256 on the node' : p.phase,
      }),
  });
  if (up.sha256 !== archive.sha256) {
    throw new HoldfastError('CONFLICT', `the archive changed on this machine while it was being sent (SHA-256 ${up.sha256} instead of ${archive.sha256})`);
  }

  report('importing', 'waiting for k3s to import the archive');
  await waitForImport(session, archive.index.images, up.relPath, {
    ...(opts.importTimeoutMs !== undefined ? { timeoutMs: opts.importTimeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onCheck: (n, total) => opts.onProgress?.({ message: `k3s imported ${n} of ${total} images` }),
  });

  let pinned = 0;
  if (opts.pin) {
    report('pinning', 'making the pins durable');
    const plan = await applyPinChange(session, ctx, 'pin', { archive: up.relPath });
    pinned = plan.changes.length;
  }
  let removed = false;
  if (opts.removeArchive) {
    report('removing', 'removing the archive safely');
    await removeArchiveSafely(session, ctx, up.relPath);
    removed = true;
  }
  report('done', summary({ pinned, removed, uploaded: !up.alreadyPresent }), { state: 'succeeded' });
  return { node, relPath: up.relPath, uploaded: !up.alreadyPresent, resumedFrom: up.resumedFrom, pinned, removed, sha256: up.sha256 };
}

export function summary(r: { pinned: number; removed: boolean; uploaded: boolean }): string {
  const parts = [r.uploaded ? 'uploaded and imported' : 'imported (archive was already there)'];
  if (r.pinned) parts.push(`${r.pinned} references pinned durably`);
  if (r.removed) parts.push('archive removed');
  return parts.join(', ');
}
