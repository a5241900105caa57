// Removing an archive from a node's images dir — only once every image it brings is present,
// complete and durably protected (else refused, saying exactly what is missing), or with an
// explicit, logged force. The archive's SHA-256 is recorded before it goes. Any other file in the
// images dir (a .txt pre-pull list, a name k3s ignores, a staging file an upload left) goes only
// with --force, logged the same way: Holdfast can take back whatever it put there. k3s's own
// import cache is never removed.
import { distroDisplayName } from '../../shared/distro';
import type { RemovalCheck } from '../../shared/domain/archives';
import type { AuditEntry } from '../../shared/domain/audit';
import { inParens, proseText, type RemedyWording } from '../../shared/remedy';
import type { AuditLog } from '../audit/log';
import { HoldfastError } from '../errors';
import { checkComplete } from '../images/completeness';
import { criPinning } from '../../shared/versions';
import { removalWarnings } from '../../shared/removalVerdict';
import { inventory, removalCheckFor, type NodeInventory, type OpsContext } from './inventory';
import type { NodeSession } from '../node/session';

/** k3s's import cache, at the top of the images dir. */
const K3S_IMPORT_CACHE = '.cache.json';

/** SHA-256 of a file on the node, computed there (no bytes cross the link; as root under sudo). */
export async function remoteSha256(session: NodeSession, abs: string): Promise<string> {
  try {
    return await session.files.sha256(abs, { timeoutMs: 30 * 60_000 });
  } catch (e) {
    if (e instanceof HoldfastError && e.code !== 'UNREACHABLE') {
      throw new HoldfastError('INTERNAL', `could not compute the SHA-256 of ${abs} on the node: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

export interface RemoveOptions {
  force?: boolean;
  /** How the problems' remedies are worded in the refusal and the audit note (the CLI's commands); without it, the prose alone. */
  word?: RemedyWording;
}

/** The check's problems as one text, each remedy in parentheses as `word` says it. */
const problemsText = (check: RemovalCheck, word?: RemedyWording): string =>
  check.problems.map((p) => proseText(p, word && inParens(word))).join(' ');

export async function removeArchive(
  session: NodeSession,
  inv: NodeInventory,
  check: RemovalCheck,
  audit: AuditLog,
  opts: RemoveOptions = {},
): Promise<AuditEntry> {
  const file = inv.files.find((f) => f.path === check.path);
  if (!file) throw new HoldfastError('NOT_FOUND', `no file ${check.path} in ${session.def.imagesDir}`);
  const who = distroDisplayName(inv.info.distro);
  if (file.path === K3S_IMPORT_CACHE) {
    throw new HoldfastError('REFUSED', `${check.path} is ${who}'s own import cache; Holdfast never removes it`, {
      hint: `${who} rewrites it at every start; to turn the cache off, remove it on the node while ${who} is stopped.`,
    });
  }
  if (file.kind !== 'archive' && !opts.force) {
    throw new HoldfastError('REFUSED', `${check.path} is not an image archive ${who} imports; Holdfast removes such a file only with --force`, {
      hint: file.kind === 'prepull'
        ? `A .txt list makes ${who} pin the images it names at every start: without it those pins go at the next start unless they are durable. --force removes it anyway and is logged.`
        : `${who} ignores this file. --force removes it and is logged.`,
    });
  }
  if (!check.allowed && !opts.force) {
    throw new HoldfastError('REFUSED', `refusing to remove ${check.path}: ${problemsText(check, opts.word)}`, {
      hint: `Fix the above first; --force removes it anyway and is logged.`,
    });
  }
  // A removal that could not be recorded (with the archive's SHA-256) is not made.
  await audit.assertWritable();
  const files = session.files;
  const sha256 = await remoteSha256(session, file.abs);
  // The archive must be the one that was checked: not replaced or grown since.
  const now = await files.stat(file.abs);
  if (!now) throw new HoldfastError('CONFLICT', `${check.path} disappeared before Holdfast removed it`);
  if (Number(now.size) !== file.size || Number(now.mtime) !== file.mtime) {
    throw new HoldfastError('CONFLICT', `${check.path} changed while it was being checked; nothing was removed`, { hint: 'Run the check again.' });
  }
  await files.remove(file.abs);
  if (await files.stat(file.abs, { lstat: true })) throw new HoldfastError('INTERNAL', `${check.path} is still there after removal`);
  return audit.record(
    {
      node: session.def.name,
      action: 'rm-archive',
      ...(opts.force ? { forced: true } : {}),
      archive: { path: check.path, size: file.size, sha256 },
      ...(opts.force && !check.allowed ? { note: `forced despite: ${problemsText(check, opts.word)}` } : {}),
      ...(check.warnings?.length ? { warnings: check.warnings } : {}),
    },
    `removed ${check.path} from ${session.def.name}`,
    `its removal and its SHA-256, ${sha256} (${file.size} bytes)`,
  );
}

export async function checkRemoval(session: NodeSession, ctx: OpsContext, path: string): Promise<{ inv: NodeInventory; check: RemovalCheck }> {
  const inv = await inventory(session, ctx);
  const file = inv.files.find((f) => f.path === path);
  if (!file) {
    throw new HoldfastError('NOT_FOUND', `no file ${path} in ${session.def.imagesDir} on ${session.def.name}`, {
      hint: 'List the images dir to see its files.',
      remedy: { action: 'archives', node: session.def.name, missing: path },
    });
  }
  const check = await removalCheckFor(session.def.name, file, inv.images, inv.platform, (ref) =>
    checkComplete(session.containerd, { digest: ref.digest, mediaType: ref.mediaType, size: 0, annotations: {} }, inv.platform),
    criPinning(inv.info.containerdVersion),
    distroDisplayName(inv.info.distro),
  );
  // Not a problem of the file itself, so it never blocks: RKE2 writes its own image lists once no
  // archive is left at the top level of its images dir (shared/rke2Lists), as the listing says.
  const warnings = removalWarnings(session.def.name, inv.info.distro, inv.files.map((f) => f.path), file.path);
  if (warnings.length) check.warnings = warnings.map((w) => w.reason);
  return { inv, check };
}

export async function removeArchiveSafely(session: NodeSession, ctx: OpsContext, path: string, opts: { force?: boolean } = {}): Promise<AuditEntry> {
  const { inv, check } = await checkRemoval(session, ctx, path);
  return removeArchive(session, inv, check, ctx.audit, { ...opts, ...(ctx.word ? { word: ctx.word } : {}) });
}
