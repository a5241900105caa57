// Drift, the one definition: where reachable nodes disagree about an image. Rows are image
// names as a user reads them — a tag, with the digest references (name@sha256:…) of the same
// image on that node folded into it (a digest reference of the same image is not drift); a
// lone digest reference stands alone. CRI's own sha256:<image id> records are not names anyone
// deploys: folded into their tag when there is one, never a drift row of their own.
// A row drifts when it is missing on some reachable node, or pinned now on some and not on
// others. Used by the fleet report (core/fleet: JSON, HTML, CSV, CLI) and the app's matrix.
import type { ImageRef } from './domain/images';
import type { PinState } from './domain/pins';
import type { DriftEntry, FleetNodeResult } from './fleet';
import { isImageIdRef } from './protection';

export type RefKind = 'tag' | 'digest' | 'id';

/** tag, name@sha256 digest reference, or CRI's own sha256:<image id> record. */
export function refKind(name: string): RefKind {
  if (isImageIdRef({ name, imageId: null })) return 'id';
  return isDigestRef(name) ? 'digest' : 'tag';
}

const isHexCode = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/**
 * Ends in `@sha256:<hex>` (any case), as /@sha256:[0-9a-f]+$/i says, without the regex: it ran
 * for every reference each time a list of 10,000 was grouped (bench:ui). Hex has no '@', so only
 * the last '@' can start the suffix.
 */
function isDigestRef(name: string): boolean {
  const at = name.lastIndexOf('@');
  if (at < 0 || name.length <= at + 8 || name.slice(at + 1, at + 8).toLowerCase() !== 'sha256:') return false;
  for (let i = at + 8; i < name.length; i++) if (!isHexCode(name.charCodeAt(i))) return false;
  return true;
}

/** Pinned now: kubelet's image GC skips it today (durable or k3s pin). */
export const isPinnedNow = (i: Pick<ImageRef, 'pin'>) => i.pin !== 'none';

const PIN_RANK: Record<PinState, number> = { durable: 2, distro: 1, none: 0 };

/** The strongest pin label among references (durable > k3s > none). */
export function strongestPin(refs: readonly Pick<ImageRef, 'pin'>[]): PinState {
  let pin: PinState = 'none';
  for (const r of refs) if (PIN_RANK[r.pin] > PIN_RANK[pin]) pin = r.pin;
  return pin;
}

/** A node's references folded into rows: tag → [tag, digest refs of the same image]; lone digest refs stand alone. */
export function foldRefs<T extends Pick<ImageRef, 'name' | 'digest' | 'imageId'>>(images: readonly T[]): Map<string, T[]> {
  const rows = new Map<string, T[]>();
  const tagsByImage = new Map<string, string>();
  for (const i of images) {
    if (refKind(i.name) !== 'tag') continue;
    rows.set(i.name, [...(rows.get(i.name) ?? []), i]);
    for (const k of [i.imageId, i.digest]) if (k && !tagsByImage.has(k)) tagsByImage.set(k, i.name);
  }
  for (const i of images) {
    if (refKind(i.name) === 'tag') continue;
    const repo = i.name.slice(0, i.name.lastIndexOf('@'));
    // Prefer a tag of the same repository with the same image; else any tag of the same image.
    const sameRepo = images.find(
      (t) => refKind(t.name) === 'tag' && t.name.startsWith(`${repo}:`) && (t.digest === i.digest || (i.imageId && t.imageId === i.imageId)),
    );
    const tag = sameRepo?.name ?? tagsByImage.get(i.digest) ?? (i.imageId ? tagsByImage.get(i.imageId) : undefined);
    const key = tag ?? i.name;
    rows.set(key, [...(rows.get(key) ?? []), i]);
  }
  return rows;
}

/** Whether a row can drift at all: a lone CRI image-id record is not a name. */
export const isDriftRow = (name: string) => refKind(name) !== 'id';

/**
 * The verdict for one row over the reachable nodes that answered: each is 'missing' or whether
 * the row is pinned now there. Drift: missing somewhere, or pinned on some and not on others.
 */
export function isDrift(states: readonly ('missing' | boolean)[]): boolean {
  const present = states.filter((s): s is boolean => s !== 'missing');
  return present.length < states.length || new Set(present).size > 1;
}

/**
 * Keeps only row name → (node → pinned now?) for reachable nodes, not the images themselves, so
 * it can follow a large fleet as nodes answer.
 */
export class DriftAccumulator {
  private readonly order: string[] = [];
  private readonly byName = new Map<string, Map<string, boolean>>();

  add(result: Pick<FleetNodeResult, 'node' | 'reachable' | 'images'>): void {
    if (!result.reachable || !result.images) return;
    if (this.order.includes(result.node)) return;
    this.order.push(result.node);
    for (const [name, refs] of foldRefs(result.images)) {
      if (!isDriftRow(name)) continue;
      let m = this.byName.get(name);
      if (!m) this.byName.set(name, (m = new Map()));
      m.set(result.node, isPinnedNow({ pin: strongestPin(refs) }));
    }
  }

  /** Drift in name order; node lists in `nodeOrder` (default: the order nodes were added). */
  entries(nodeOrder: string[] = this.order): DriftEntry[] {
    const reachable = nodeOrder.filter((n) => this.order.includes(n));
    const out: DriftEntry[] = [];
    for (const name of [...this.byName.keys()].sort()) {
      const m = this.byName.get(name)!;
      if (!isDrift(reachable.map((n) => m.get(n) ?? 'missing'))) continue;
      const presentOn = reachable.filter((n) => m.has(n));
      out.push({
        name,
        presentOn,
        missingOn: reachable.filter((n) => !m.has(n)),
        pinnedOn: presentOn.filter((n) => m.get(n)),
        unpinnedOn: presentOn.filter((n) => !m.get(n)),
      });
    }
    return out;
  }
}

/** Drift across the reachable nodes of a report, node lists in the order of `nodes`. */
export function computeDrift(nodes: Pick<FleetNodeResult, 'node' | 'reachable' | 'images'>[]): DriftEntry[] {
  const acc = new DriftAccumulator();
  for (const n of nodes) acc.add(n);
  return acc.entries(nodes.map((n) => n.node));
}
