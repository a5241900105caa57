// The changes Holdfast makes to a node, each planned from a fresh inventory, applied,
// verified and written to the audit log. Shared by the app (core/service/) and the CLI.
import type { RemovalCheck } from '../../shared/domain/archives';
import type { AuditEntry } from '../../shared/domain/audit';
import type { LabelChange, PinPlan, PinTarget } from '../../shared/domain/pins';
import { removeArchive } from './removeArchive';
import type { IndexCache } from '../archives/scan';
import { localUser, type AuditLog } from '../audit/log';
import { HoldfastError } from '../errors';
import { checkComplete } from '../images/completeness';
import { criPinning } from '../../shared/versions';
import { distroDisplayName } from '../../shared/distro';
import { removalWarnings } from '../../shared/removalVerdict';
import { applyPinPlan } from '../pins/apply';
import { buildPinPlan } from '../pins/plan';
import { readImagesInventory, readInventory, removalCheckFor, type ImagesInventory, type InventoryOptions, type NodeInventory } from './inventory';
import type { NeedsResolver } from '../needs/resolve';
import type { NodeSession } from '../node/session';
import { commandLine } from '../../shared/shellQuote';

export interface OpsContext {
  audit: AuditLog;
  indexCache?: IndexCache;
  /** How a node's needs are found beyond its own answer (the service's: lists, agents' servers). */
  needs?: NeedsResolver;
}

/** What every inventory is read with: the caches, the needs resolver, the pins Holdfast made there. */
export function inventoryOptions(session: NodeSession, ctx: OpsContext): InventoryOptions {
  return {
    info: session.info(),
    ...(ctx.indexCache ? { indexCache: ctx.indexCache } : {}),
    ...(ctx.needs ? { needs: ctx.needs } : {}),
    auditPinned: ctx.audit.durablePins(session.def.name).then(
      (pins) => new Set(pins.map((p) => p.ref)),
      () => new Set<string>(),
    ),
  };
}

export async function inventory(session: NodeSession, ctx: OpsContext): Promise<NodeInventory> {
  // The info's probe is still under way when the inventory starts what does not depend on it.
  return readInventory(session, inventoryOptions(session, ctx));
}

/** inventory() without the archives' removal checks: for what shows images only (their completeness reads are a third of a listing's round trips). */
export async function imagesInventory(session: NodeSession, ctx: OpsContext): Promise<ImagesInventory> {
  return readImagesInventory(session, inventoryOptions(session, ctx));
}

export async function planPinChange(session: NodeSession, ctx: OpsContext, action: 'pin' | 'unpin', target: PinTarget): Promise<PinPlan> {
  const inv = await inventory(session, ctx);
  const plan = buildPinPlan(session.def.name, action, inv.images, target, inv.fateArchives, { user: localUser(), time: new Date().toISOString() }, distroDisplayName(inv.info.distro));
  // A needed image the node lacks cannot be pinned: the plan says so, and where a copy is.
  if ('needed' in target || ('pinSet' in target && target.pinSet.needed)) {
    const named = new Set(plan.unchanged.map((u) => u.ref));
    for (const m of inv.needs.missing.filter((x) => !named.has(x.ref))) {
      plan.unchanged.push({ ref: m.ref, reason: `needed but not on the node${m.heldBy.length ? `: ${m.heldBy.join(', ')} holds it` : ''}; import it first` });
    }
  }
  return plan;
}

export async function applyPinChange(session: NodeSession, ctx: OpsContext, action: 'pin' | 'unpin', target: PinTarget): Promise<PinPlan> {
  const plan = await planPinChange(session, ctx, action, target);
  if (plan.changes.length === 0) return plan;
  // A change that could not be recorded is not made (lost-pin detection reads the log).
  await ctx.audit.assertWritable();
  const node = session.def.name;
  let applied: PinPlan;
  const made: LabelChange[] = [];
  try {
    applied = await applyPinPlan(session.containerd, plan, { onApplied: (c) => made.push(c) });
  } catch (e) {
    // The references changed before the failure (e.g. containerd restarting mid-plan) are in the
    // log as changes, so lost-pin detection and `holdfast log` know every pin that was made.
    const entry = { node, action, ...(made.length ? { changes: made } : {}), note: `failed: ${e instanceof Error ? e.message : String(e)}` };
    if (made.length === 0) await ctx.audit.append(entry).catch(() => undefined); // nothing changed: the failure is what to report
    else await ctx.audit.record(entry, `${pinChangeText(action, made, node)} before it failed (${e instanceof Error ? e.message : String(e)})`, `the ${action} of ${refsText(made)}`);
    throw e;
  }
  await ctx.audit.record({ node, action, changes: applied.changes }, pinChangeText(action, applied.changes, node), `the ${action} of ${refsText(applied.changes)}`);
  return applied;
}

const refsText = (changes: readonly LabelChange[]): string =>
  changes.length <= 3 ? changes.map((c) => c.ref).join(', ') : `${changes.slice(0, 3).map((c) => c.ref).join(', ')} and ${changes.length - 3} more`;

/** "pinned 2 references on lab-n1": a change already made, for a message that says so. */
const pinChangeText = (action: 'pin' | 'unpin', changes: readonly LabelChange[], node: string): string =>
  `${action === 'pin' ? 'pinned' : 'unpinned'} ${changes.length} reference${changes.length === 1 ? '' : 's'} on ${node}`;

export async function checkRemoval(session: NodeSession, ctx: OpsContext, path: string): Promise<{ inv: NodeInventory; check: RemovalCheck }> {
  const inv = await inventory(session, ctx);
  const file = inv.files.find((f) => f.path === path);
  if (!file) {
    throw new HoldfastError('NOT_FOUND', `no file ${path} in ${session.def.imagesDir} on ${session.def.name}`, {
      hint: `List the images dir with \`${commandLine(['archives', session.def.name])}\`.`,
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
  return removeArchive(session, inv, check, ctx.audit, opts);
}
