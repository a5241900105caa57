// Applies a pin plan to a node: one Images.Update per reference whose mask names only the
// keys that change (labels.<key>), so labels written concurrently by k3s, CRI or anyone else
// are never clobbered; setting the CRI pin and removing the distro label happen in the same
// update, so no moment exists with neither. Then every reference is read back and verified.
// applyPinChange plans from a fresh inventory, applies, and writes the audit log.
import type { LabelChange, PinPlan, PinTarget } from '../../../shared/domain/pins';
import type { ContainerdClient } from '../../containerd/client';
import { HoldfastError } from '../../errors';
import type { NodeSession } from '../../node/session';
import type { OpsContext } from '../inventory';
import { labelDelta, planPinChange } from './plan';

export interface ApplyPinOptions {
  /**
   * Called with each reference as soon as its update is in containerd, before the next one is
   * sent — also when what follows fails (containerd restarting mid-plan), so the caller can log
   * exactly the changes that were made: a durable pin the audit log does not know is one that
   * lost-pin detection can never report. An update whose answer never came (containerd stopped
   * or the link dropped after it was sent) may be in too: it is reported as sent, before the
   * error is thrown. Should it not be in, lost-pin detection says the pin is not there, which
   * is true; the other way round a durable pin would exist that nothing ever reports.
   */
  onApplied?: (change: LabelChange) => void;
}

export async function applyPinPlan(cd: Pick<ContainerdClient, 'getImage' | 'updateImageLabels'>, plan: PinPlan, opts: ApplyPinOptions = {}): Promise<PinPlan> {
  const applied: LabelChange[] = [];
  const done = (c: LabelChange) => {
    applied.push(c);
    opts.onApplied?.(c);
  };
  for (const change of plan.changes) {
    const delta = labelDelta(change);
    if (Object.keys(delta).length === 0) continue;
    try {
      await cd.updateImageLabels(change.ref, delta);
    } catch (e) {
      if (e instanceof HoldfastError && e.code === 'NOT_FOUND') {
        throw new HoldfastError('CONFLICT', `${change.ref} disappeared from containerd while pinning; ${applied.length} of ${plan.changes.length} references were updated`, {
          hint: 'List the images again and retry; nothing else was changed.',
        });
      }
      if (outcomeUnknown(e)) done({ ...change, after: withDelta(change.before, delta) });
      throw e;
    }
    // The update is in. Read back: what is there now is what the log records and the caller
    // sees; if the read fails, the change is still recorded, as it was sent.
    let now: Awaited<ReturnType<ContainerdClient['getImage']>>;
    try {
      now = await cd.getImage(change.ref);
    } catch (e) {
      done({ ...change, after: withDelta(change.before, delta) });
      throw e;
    }
    if (!now) {
      done({ ...change, after: withDelta(change.before, delta) });
      throw new HoldfastError('CONFLICT', `${change.ref} disappeared from containerd right after it was updated`);
    }
    for (const [k, v] of Object.entries(delta)) {
      const got = now.labels[k];
      if ((v === null && got !== undefined) || (v !== null && got !== v)) {
        done({ ...change, after: now.labels });
        throw new HoldfastError('INTERNAL', `containerd did not keep label ${k} on ${change.ref} (wanted ${v ?? 'absent'}, found ${got ?? 'absent'})`);
      }
    }
    done({ ...change, after: now.labels });
  }
  return { ...plan, changes: applied };
}

/**
 * Whether a failed update may still have been applied: anything but containerd's refusal (a
 * conflict or an invalid request; not found is handled before). Containerd going away, no answer
 * in time, a stream reset as the tunnel's end closed: the request may have been written.
 */
function outcomeUnknown(e: unknown): boolean {
  return !(e instanceof HoldfastError && (e.code === 'CONFLICT' || e.code === 'INVALID_INPUT'));
}

function withDelta(labels: Record<string, string>, delta: Record<string, string | null>): Record<string, string> {
  const out = { ...labels };
  for (const [k, v] of Object.entries(delta)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
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
