// Where reachable nodes disagree about an image name: presence and pinned-now state.
// Incremental (a UI can add nodes as they answer) and pure (computeDrift over a finished list).
import type { ImageRef } from '../../shared/domain';
import { isImageIdRef } from '../../shared/protection';
import type { DriftEntry, FleetNodeResult } from '../../shared/fleet';

/** Pinned now: kubelet's image GC skips it today (durable or k3s pin). */
export const isPinnedNow = (i: Pick<ImageRef, 'pin'>) => i.pin !== 'none';

/**
 * Keeps only name → (node → pinned?) for reachable nodes, not the images themselves, so it
 * can follow a large fleet as nodes answer.
 */
export class DriftAccumulator {
  private readonly order: string[] = [];
  private readonly byName = new Map<string, Map<string, boolean>>();

  add(result: Pick<FleetNodeResult, 'node' | 'reachable' | 'images'>): void {
    if (!result.reachable || !result.images) return;
    if (this.order.includes(result.node)) return;
    this.order.push(result.node);
    for (const img of result.images) {
      // CRI's sha256:<id> records are not names anyone deploys; the tags and digest refs say it all
      if (isImageIdRef(img)) continue;
      let m = this.byName.get(img.name);
      if (!m) this.byName.set(img.name, (m = new Map()));
      // Names are unique per node in containerd; keep "pinned" if ever seen twice.
      m.set(result.node, (m.get(result.node) ?? false) || isPinnedNow(img));
    }
  }

  /** Drift in name order; node lists in `nodeOrder` (default: the order nodes were added). */
  entries(nodeOrder: string[] = this.order): DriftEntry[] {
    const reachable = nodeOrder.filter((n) => this.order.includes(n));
    const out: DriftEntry[] = [];
    for (const name of [...this.byName.keys()].sort()) {
      const m = this.byName.get(name)!;
      const presentOn = reachable.filter((n) => m.has(n));
      const missingOn = reachable.filter((n) => !m.has(n));
      const pinnedOn = presentOn.filter((n) => m.get(n));
      const unpinnedOn = presentOn.filter((n) => !m.get(n));
      if (missingOn.length === 0 && (pinnedOn.length === 0 || unpinnedOn.length === 0)) continue;
      out.push({ name, presentOn, missingOn, pinnedOn, unpinnedOn });
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
