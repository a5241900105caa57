// Applies a pin plan to a node: one Images.Update per reference whose mask names only the
// keys that change (labels.<key>), so labels written concurrently by k3s, CRI or anyone else
// are never clobbered; setting the CRI pin and removing the distro label happen in the same
// update, so no moment exists with neither. Then every reference is read back and verified.
import type { LabelChange, PinPlan } from '../../shared/domain/pins';
import type { ContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import { labelDelta } from './plan';

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
