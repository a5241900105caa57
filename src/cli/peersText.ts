// The "Embedded registry" part of `holdfast inspect`: per node whether k3s's embedded registry
// (spegel) is on and what it mirrors, then each needed image with the nodes that can serve it to
// their peers and the nodes that lack it (shared/embeddedRegistry). Said only when a node has it on.
import type { NodeDef } from '../shared/domain/nodes';
import { describePeerSource, embeddedRegistryBrief, fleetPeersApply, fleetPeerSourcesOf, type EmbeddedRegistryConfig } from '../shared/embeddedRegistry';
import type { FleetNodeResult } from '../shared/fleet';
import { terminalSafe as safe } from './format';

/** How many needed images are listed (the JSON has every reference's `peers`). */
const SHOWN = 20;

export function peersSection(nodes: readonly (FleetNodeResult & { embeddedRegistry?: EmbeddedRegistryConfig | null })[], defs: readonly Pick<NodeDef, 'name' | 'group'>[]): string[] {
  if (!fleetPeersApply(nodes.map((n) => n.embeddedRegistry))) return [];
  const out = ['\nEmbedded registry (peers pull images from each other):'];
  for (const n of nodes) if (n.embeddedRegistry) out.push(`  ${n.node}: ${safe(embeddedRegistryBrief(n.embeddedRegistry))}`);
  const group = new Map(defs.map((d) => [d.name, d.group]));
  const sources = fleetPeerSourcesOf(nodes, (n) => group.get(n));
  for (const s of sources.slice(0, SHOWN)) out.push(`  ${safe(s.image)}: ${safe(describePeerSource(s))}`);
  if (sources.length > SHOWN) out.push(`  … and ${sources.length - SHOWN} more needed images (--json has each reference's peers)`);
  return out;
}
