// The "Embedded registry" part of `holdfast inspect`: per node whether k3s's embedded registry
// (spegel) is on and what it mirrors, then each needed image with the nodes that can serve it to
// their peers and the nodes that lack it (shared/embeddedRegistry). Said only when a node has it on.
import type { NodeDef } from '../shared/domain';
import { embeddedRegistryBrief, fleetPeerSources, type EmbeddedRegistryConfig } from '../shared/embeddedRegistry';
import type { FleetNodeResult } from '../shared/fleet';
import { terminalSafe as safe } from './format';

/** How many needed images are listed (the JSON has every reference's `peers`). */
const SHOWN = 20;

export function peersSection(nodes: readonly (FleetNodeResult & { embeddedRegistry?: EmbeddedRegistryConfig | null })[], defs: readonly Pick<NodeDef, 'name' | 'group'>[]): string[] {
  if (!nodes.some((n) => n.embeddedRegistry?.enabled === 'on')) return [];
  const out = ['\nEmbedded registry (peers pull images from each other):'];
  for (const n of nodes) if (n.embeddedRegistry) out.push(`  ${n.node}: ${safe(embeddedRegistryBrief(n.embeddedRegistry))}`);
  const group = new Map(defs.map((d) => [d.name, d.group]));
  const sources = fleetPeerSources(
    nodes.map((n) => ({ node: n.node, group: group.get(n.node), images: n.images, missing: n.needs?.missing.map((m) => m.ref) ?? [], enabled: n.embeddedRegistry?.enabled })),
  );
  for (const s of sources.slice(0, SHOWN)) {
    const served = s.servedBy.length ? `served by ${s.servedBy.join(', ')}` : 'no node can serve it';
    out.push(`  ${safe(s.image)}: ${served}${s.missingOn.length ? `; missing on ${s.missingOn.join(', ')}` : ''}`);
  }
  if (sources.length > SHOWN) out.push(`  … and ${sources.length - SHOWN} more needed images (--json has each reference's peers)`);
  return out;
}
