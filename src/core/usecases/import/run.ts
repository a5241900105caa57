// The guided air-gap import for one node: check → upload (verified, resumable) → wait for
// k3s to finish the archive → make the pins durable and verify every reference → remove the
// archive safely. A node is "ok" only once its pins were read back (issue #16: a durable pin
// raced k3s's retagging). Every step is safe to repeat, so running the whole import again after
// any failure picks up where it stopped.
import { distroDisplayName } from '../../../shared/distro';
import { cacheIsNotAFile } from '../../../shared/importCache';
import type { ImportPhase, JobNodeProgress } from '../../../shared/domain/jobs';
import type { NodeInfo } from '../../../shared/domain/nodes';
import { watcherImports, firstReleases, K3S_RELEASES } from '../../../shared/versions';
import { plural } from '../../../shared/wording';
import { HoldfastError } from '../../errors';
import { imagesInventory, inventory, type OpsContext } from '../inventory';
import { removeArchiveSafely } from '../removeArchive';
import { isImageIdRecord } from '../../../shared/imageReference';
import type { NodeSession } from '../../node/session';
import type { NodeInventory } from '../inventory';
import { uploadArchive, type UploadResult } from '../upload';
import { isPermissionDenied, mayNotWriteError } from '../../access/refusals';
import { uploadJobPatch } from '../upload/progress';
import { unwritableFolder } from '../upload/writable';
import type { InspectedArchive } from './localArchive';
import { chooseRemoteName, freshName, type NameChoice } from './remoteName';
import type { ImportOptions as ChosenImportOptions, ImportTuning } from '../../../shared/importOptions';
import { pinAndVerify, verifyDurable } from './verify';
import { DEFAULT_SETTLE_MS, waitForImport } from './waitForImport';

export interface ImportOptions extends ChosenImportOptions, Pick<ImportTuning, 'timeout'> {
  /** How long nothing may touch the images before k3s counts as done with them (default 2 s). */
  settleMs?: number;
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
  /** With --pin: every reference of every image the archive brings, read back durable. */
  verified?: { images: number; refs: number };
  /** Why the archive went under another name than its own. */
  renamed?: string;
  /** What the node makes of the result (e.g. a containerd that ignores every pin). */
  warnings?: string[];
  /** With --pin and the archive left in the images dir: its pins' fate at the next start (shared/fate's sentence). */
  kept?: string[];
}

export async function importToNode(session: NodeSession, ctx: OpsContext, archive: InspectedArchive, opts: ImportOptions): Promise<NodeImportResult> {
  const node = session.def.name;
  const report: Report = (phase, message, extra = {}) => opts.onProgress?.({ phase, message, state: 'running', ...extra });
  const settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;

  report('checking', 'checking what the node already has');
  const before = await readNodeBefore(session, ctx);
  const choice = chooseRemoteName(archive, { imagesDir: session.def.imagesDir, files: before.files, importCache: before.importCache, distroVersion: before.info.distroVersion, distro: before.info.distro });
  // Already done on an earlier run? Every reference of every image durable, and the archive
  // gone: nothing to send again.
  if (opts.pin && opts.removeArchive && !before.files.some((f) => f.path === choice.relPath)) {
    const done = await verifyDurable(session, archive.index.images);
    if (done.ok) {
      report('done', 'already imported and durably pinned; nothing to do', { state: 'succeeded' });
      return { node, relPath: choice.relPath, uploaded: false, resumedFrom: 0, pinned: 0, removed: false, sha256: archive.sha256, skipped: 'already imported and durably pinned' };
    }
  }

  // The upload looks at the images dir first (a partial upload, free space): said so until bytes move.
  report('uploading', 'checking the images dir', { bytesTotal: archive.size });
  const { up, renamed } = await sendArchive(session, archive, choice, before.info, opts);

  const who = distroDisplayName(before.info.distro);
  report('importing', `waiting for ${who} to import the archive`);
  await waitForImport(session, archive.index.images, up.relPath, {
    settleMs,
    alreadyThere: up.alreadyPresent,
    ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onCheck: (n, total) => opts.onProgress?.({ message: `${who} imported ${n} of ${plural(total, 'image')}` }),
  });

  const after = await pinAndRemove(session, ctx, archive, up.relPath, { ...opts, settleMs }, report);
  const result: NodeImportResult = {
    node,
    relPath: up.relPath,
    uploaded: !up.alreadyPresent,
    resumedFrom: up.resumedFrom,
    pinned: after.pinned,
    removed: after.removed,
    sha256: up.sha256,
    ...(after.verified ? { verified: after.verified } : {}),
    ...(renamed ? { renamed } : {}),
    ...(after.warnings.length ? { warnings: after.warnings } : {}),
    ...(after.kept.length ? { kept: after.kept } : {}),
  };
  report('done', summary(result), { state: 'succeeded' });
  return result;
}

type Report = (phase: ImportPhase, message: string, extra?: Partial<JobNodeProgress>) => void;

/** The node before anything is sent, refusing an images dir Holdfast must not add to. */
async function readNodeBefore(session: NodeSession, ctx: OpsContext): Promise<NodeInventory> {
  const node = session.def.name;
  const before = await inventory(session, ctx).catch(async (e: unknown) => {
    // A user who may not even read the images dir (root-only, no sudo) may not write there
    // either: the upload's own reason, not the listing's "may not read".
    const folder = isPermissionDenied(e) && session.files.mode === 'sftp' ? await unwritableFolder(session.ssh, session.def.imagesDir) : null;
    throw folder ? mayNotWriteError({ user: session.def.user, node, folder, imagesDir: session.def.imagesDir }) : e;
  });
  // A FIFO or device named .cache.json: k3s expects its JSON cache there; nothing is added beside it.
  if (cacheIsNotAFile(before.importCache)) {
    const who = distroDisplayName(before.info.distro);
    throw new HoldfastError('REFUSED', `${who}'s import cache, .cache.json in the images dir of ${node}, ${before.importCache.unreadable}: ${who} reads and rewrites that file when it imports, so Holdfast adds no archive beside it`, {
      hint: 'Replace it with a regular file (an empty one keeps the cache on) or remove it, then run the import again.',
    });
  }
  return before;
}

/** The archive uploaded and in place, under a fresh name if its own holds other content. */
async function sendArchive(
  session: NodeSession,
  archive: InspectedArchive,
  choice: NameChoice,
  info: NodeInfo,
  opts: ImportOptions,
): Promise<{ up: UploadResult; renamed: string | undefined }> {
  let renamed = choice.renamed;
  let up: UploadResult;
  try {
    up = await upload(session, archive, choice.relPath, opts);
  } catch (e) {
    // Same size, other content under the archive's own name: never overwritten, and k3s might
    // not import a replacement there anyway. Its own fresh name instead.
    if (!(e instanceof HoldfastError && e.code === 'CONFLICT') || choice.renamed) throw e;
    const fresh = freshName(choice.relPath, archive.sha256);
    renamed = `${choice.relPath} on the node is another file of the same size, and ${distroDisplayName(info.distro)} keeps its record of that name (a replacement might never be imported): uploaded as ${fresh}`;
    up = await upload(session, archive, fresh, opts);
  }
  if (up.sha256 !== archive.sha256) {
    throw new HoldfastError('CONFLICT', `the archive changed on this machine while it was being sent (SHA-256 ${up.sha256} instead of ${archive.sha256})`);
  }
  if (!up.alreadyPresent && watcherImports(null, { size: archive.size, mtime: Date.now() / 1000 }, info.distroVersion) === 'no') {
    throw new HoldfastError('CONFLICT', `${up.relPath} is in place on ${session.def.name}, but ${distroDisplayName(info.distro)} ${info.distroVersion} imports archives only when it starts (its file watcher came with ${firstReleases(K3S_RELEASES.importWatcher)})`, {
      hint: `Restart ${distroDisplayName(info.distro)} on the node (it imports the archive at start), then run the same import again to pin and remove it.`,
    });
  }
  return { up, renamed };
}

/** After k3s's import: the pins made durable and verified (--pin), then the archive removed or its pins' fate read. */
async function pinAndRemove(
  session: NodeSession,
  ctx: OpsContext,
  archive: InspectedArchive,
  relPath: string,
  opts: ImportOptions & { settleMs: number },
  report: Report,
): Promise<Pick<NodeImportResult, 'pinned' | 'removed' | 'verified'> & { warnings: string[]; kept: string[] }> {
  let pinned = 0;
  let verified: NodeImportResult['verified'];
  const warnings: string[] = [];
  // The archive stays with --pin alone: the references a start re-imports it for (k3s-pinned now,
  // and pinned again after the next start, shared/fate) get their pins taken back by that start.
  const repinned = opts.pin && !opts.removeArchive ? await repinnedBy(session, ctx, relPath) : null;
  if (opts.pin) {
    report('pinning', 'making the pins durable and verifying every reference');
    const v = await pinAndVerify(session, ctx, relPath, archive.index.images, { settleMs: opts.settleMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    pinned = v.pinned;
    verified = { images: v.images, refs: v.refs };
    if (v.notHonoured) warnings.push(v.notHonoured);
  }
  let removed = false;
  let kept: string[] = [];
  if (opts.removeArchive) {
    report('removing', 'removing the archive safely');
    await removeArchiveSafely(session, ctx, relPath);
    removed = true;
  } else if (repinned?.size) {
    // What those pins become at the next start, in the words images --why and inspect give
    // (shared/fate: the pin becomes k3s-managed again until the archive leaves the images dir).
    const after = await imagesInventory(session, ctx);
    kept = [...new Set(after.images.filter((r) => repinned.has(r.name) && r.pin === 'durable').map((r) => r.reason))];
  }
  return { pinned, removed, verified, warnings, kept };
}

/** The names `relPath` pins again at the next start (k3s-pinned now, and pinned after it by that file). */
async function repinnedBy(session: NodeSession, ctx: OpsContext, relPath: string): Promise<Set<string>> {
  const now = await imagesInventory(session, ctx);
  return new Set(now.images.filter((r) => r.pin === 'distro' && r.afterRestart === 'pinned' && r.archive === relPath && !isImageIdRecord(r.name)).map((r) => r.name));
}

function upload(session: NodeSession, archive: InspectedArchive, remoteName: string, opts: ImportOptions): Promise<UploadResult> {
  return uploadArchive(session, archive.path, {
    remoteName,
    expectedSha256: archive.sha256,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onNotice: (notice) => opts.onProgress?.({ notice }),
    onProgress: (p) => opts.onProgress?.(uploadJobPatch(p)),
  });
}

/**
 * "uploaded and imported, 4 references pinned durably and verified (2 images, 6 references), archive removed";
 * with the archive kept, "… pinned and verified (…). Still pinned, but k3s re-imports …": its pins'
 * fate at the next start ends the sentence, not "durably".
 */
export function summary(r: Pick<NodeImportResult, 'pinned' | 'removed' | 'uploaded' | 'verified' | 'renamed' | 'relPath' | 'warnings' | 'kept'>): string {
  const parts = [r.uploaded ? 'uploaded and imported' : 'imported (archive was already there)'];
  if (r.renamed) parts[0] += ` as ${r.relPath}`;
  const durably = r.kept?.length ? '' : ' durably';
  if (r.verified) {
    const what = `(${plural(r.verified.images, 'image')}, ${plural(r.verified.refs, 'reference')})`;
    parts.push(r.pinned ? `${plural(r.pinned, 'reference')} pinned${durably} and verified ${what}` : `pins verified${durably ? ' durable' : ''} ${what}`);
  } else if (r.pinned) parts.push(`${plural(r.pinned, 'reference')} pinned${durably}`);
  if (r.removed) parts.push('archive removed');
  return parts.join(', ') + (r.kept?.length ? `. ${r.kept.join(' ')}` : '');
}
