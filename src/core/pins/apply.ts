// Applies a pin plan to a node: one Images.Update per reference whose mask names only the
// keys that change (labels.<key>), so labels written concurrently by k3s, CRI or anyone else
// are never clobbered; setting the CRI pin and removing the distro label happen in the same
// update, so no moment exists with neither. Then every reference is read back and verified.
import type { LabelChange, PinPlan } from '../../shared/domain';
import type { ContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import { labelDelta } from './plan';

export async function applyPinPlan(cd: ContainerdClient, plan: PinPlan): Promise<PinPlan> {
  const applied: LabelChange[] = [];
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
      throw e;
    }
    // Read back: what is there now is what the log records and the caller sees.
    const now = await cd.getImage(change.ref);
    if (!now) throw new HoldfastError('CONFLICT', `${change.ref} disappeared from containerd right after it was updated`);
    for (const [k, v] of Object.entries(delta)) {
      const got = now.labels[k];
      if ((v === null && got !== undefined) || (v !== null && got !== v)) {
        throw new HoldfastError('INTERNAL', `containerd did not keep label ${k} on ${change.ref} (wanted ${v ?? 'absent'}, found ${got ?? 'absent'})`);
      }
    }
    applied.push({ ...change, after: now.labels });
  }
  return { ...plan, changes: applied };
}
