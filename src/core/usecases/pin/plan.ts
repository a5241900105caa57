// What a pin or unpin operation changes, computed before anything is touched, so the app and
// the CLI can show exactly that as a preview: planPinChange reads the node, buildPinPlan is pure.
//
// pin:   io.cri-containerd.pinned=pinned set and every distro pin label removed, on EVERY
//        reference of the same image id (CRI merges references by image id), plus provenance.
// unpin: the CRI pin and Holdfast's provenance removed from every reference of a durably
//        pinned image; k3s-managed pins are left to k3s.
import type { ImageRef } from '../../../shared/domain/images';
import { DISTRO_PIN_LABELS, LABEL_CRI_PINNED, PINNED, PROVENANCE } from '../../../shared/domain/labels';
import type { LabelChange, PinPlan, PinTarget } from '../../../shared/domain/pins';
import { gcLabelWriteRefusal } from '../../../shared/protection';
import { findReference } from '../../../shared/imageReference';
import { listRepinsWarning } from '../../../shared/listTrap';
import { resolvePinSet } from '../../../shared/pinSet';
import { archivesBringing, type FateArchive } from '../../../shared/fate';
import { HoldfastError } from '../../errors';
import { localUser } from '../../audit/log';
import { distroDisplayName } from '../../../shared/distro';
import type { NodeSession } from '../../node/session';
import { inventory, type OpsContext } from '../inventory';

export interface Provenance {
  user: string;
  time: string;
}

/**
 * The references a target selects (before expanding to whole images). A named reference is found
 * as every command finds one (shared/imageReference findReference: short names as CRI resolves them);
 * one that names nothing on the node refuses the whole plan, so a typo never passes as done.
 */
export function selectRefs(node: string, refs: ImageRef[], target: PinTarget, archives: FateArchive[]): { selected: ImageRef[]; notFound: string[]; archive: string | null } {
  if ('refs' in target) {
    const byName = new Map(refs.map((r) => [r.name, r]));
    const found = target.refs.map((q) => ({ q, hit: findReference(q, refs, node) }));
    for (const { hit } of found) {
      if (hit.found === null && hit.ambiguous !== null) throw new HoldfastError('INVALID_INPUT', hit.ambiguous, { hint: 'Nothing was changed. Give more of the name.' });
    }
    const missing = found.filter((f) => f.hit.found === null).map((f) => `"${f.q}"`);
    if (missing.length) {
      throw new HoldfastError('NOT_FOUND', `no reference ${missing.join(', ')} on ${node}`, {
        hint: "Nothing was changed. Name a reference as the node's image list shows it (a short name such as nginx:1.27, a name shortened with …, or an image id works).",
      });
    }
    return { selected: [...new Set(found.map((f) => byName.get(f.hit.found!)!))], notFound: [], archive: null };
  }
  if ('archive' in target) {
    const archive = archives.find((a) => a.path === target.archive);
    if (!archive) {
      throw new HoldfastError('NOT_FOUND', `no archive ${target.archive} in the images dir`, { hint: 'Name a file of the images dir as the node lists it.', remedy: { action: 'archives', node } });
    }
    if (archive.images === null) {
      throw new HoldfastError('REFUSED', `the index of ${target.archive} could not be read, so Holdfast cannot tell which images it brings`);
    }
    const selected = refs.filter((r) => archivesBringing(r, [archive]).length > 0);
    const names = new Set(selected.map((r) => r.name));
    const notFound = archive.images.map((i) => i.name).filter((n) => !names.has(n));
    return { selected, notFound, archive: archive.path };
  }
  if ('needed' in target) return { selected: refs.filter((r) => r.need?.needed === true), notFound: [], archive: null };
  if ('pinSet' in target) {
    // A pin set names images a node may lack: those are reported, never a reason to refuse the rest.
    const set = resolvePinSet(target.pinSet, { refs, neededMissing: [] });
    const chosen = new Set([...set.pin, ...set.durable]);
    return { selected: refs.filter((r) => chosen.has(r.name)), notFound: set.missing, archive: null };
  }
  return { selected: refs.filter((r) => r.pin === 'distro'), notFound: [], archive: null };
}

/** Every reference sharing an image id with a selected one (tags and digest references). */
export function expandToImages(refs: ImageRef[], selected: ImageRef[]): ImageRef[] {
  const ids = new Set(selected.map((r) => r.imageId).filter((x): x is string => x !== null));
  const names = new Set(selected.map((r) => r.name));
  return refs.filter((r) => names.has(r.name) || (r.imageId !== null && ids.has(r.imageId)));
}

/**
 * The plan for `target` on one node's inventory (pure). The use case planPinChange reads the node
 * and calls it: what the `pins.plan` operation answers and `pins.apply` writes.
 */
export function buildPinPlan(
  node: string,
  action: 'pin' | 'unpin',
  refs: ImageRef[],
  target: PinTarget,
  archives: FateArchive[],
  prov: Provenance,
  /** The distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName). */
  who = 'k3s',
): PinPlan {
  if (action === 'unpin' && 'pinSet' in target) throw new HoldfastError('INVALID_INPUT', 'a pin set only pins: it never unpins', { hint: 'Unpin references by name.' });
  const { selected, notFound, archive } = selectRefs(node, refs, target, archives);
  const affected = expandToImages(refs, selected);
  const changes: LabelChange[] = [];
  const unchanged: PinPlan['unchanged'] = notFound.map((ref) => ({ ref, reason: 'not present in containerd on this node' }));

  for (const r of affected) {
    const before = r.labels;
    const after = { ...before };
    if (action === 'pin') {
      for (const k of DISTRO_PIN_LABELS) delete after[k];
      after[LABEL_CRI_PINNED] = PINNED;
      if (r.pin === 'durable') {
        unchanged.push({ ref: r.name, reason: 'already durably pinned' });
        continue;
      }
      after[PROVENANCE.by] = prov.user;
      after[PROVENANCE.at] = prov.time;
      if (archive) after[PROVENANCE.from] = archive;
    } else {
      if (r.pin === 'distro') {
        unchanged.push({ ref: r.name, reason: `pinned by ${who}, which manages this pin itself` });
        continue;
      }
      if (r.pin === 'none') {
        unchanged.push({ ref: r.name, reason: 'not pinned' });
        continue;
      }
      delete after[LABEL_CRI_PINNED];
      for (const k of Object.values(PROVENANCE)) delete after[k];
    }
    changes.push({ ref: r.name, imageId: r.imageId, before, after });
  }
  const warnings = action === 'pin' ? listWarnings(affected, who) : [];
  return { node, action, changes, unchanged, ...(warnings.length ? { warnings } : {}) };
}

/**
 * The .txt lists that re-pin what a pin makes durable (shared/fate names the list as the file that
 * pins the reference again, the sibling-tag trap included): k3s takes those pins back at its next start.
 */
function listWarnings(affected: readonly ImageRef[], who: string): string[] {
  const byList = new Map<string, string[]>();
  for (const r of affected) {
    if (r.afterRestart !== 'pinned' || !r.archive || !/\.txt$/i.test(r.archive)) continue;
    byList.set(r.archive, [...(byList.get(r.archive) ?? []), r.name]);
  }
  return [...byList].map(([list, refs]) => listRepinsWarning(list, refs, who));
}

/**
 * The per-key label updates that turn `before` into `after` (null deletes). Every label Holdfast
 * writes goes through here, so this is where it refuses to write (or remove) a label containerd's
 * own GC acts on (containerd.io/gc.bref.*, gc.cond.*, gc.expire: shared/protection
 * gcLabelWriteRefusal, the guard the containerd client applies to every write too): a plan only
 * ever carries them over unchanged.
 */
export function labelDelta(change: LabelChange): Record<string, string | null> {
  const delta: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(change.after)) if (change.before[k] !== v) delta[k] = v;
  for (const k of Object.keys(change.before)) if (!(k in change.after)) delta[k] = null;
  const refusal = gcLabelWriteRefusal(change.ref, Object.keys(delta));
  if (refusal) throw new HoldfastError('INTERNAL', refusal);
  return delta;
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
