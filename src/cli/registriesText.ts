// The "Registry mirrors" part of `holdfast inspect`: each node's registries.yaml mirrors,
// endpoints and rewrites (shared/registryMirrors), and where a needed image the node lacks would
// be pulled from. Never a credential: the node counted its `configs:` entries and sent no value.
import type { FleetNodeResult } from '../shared/fleet';
import { describePullSource, registriesHeadline as headline, type NodeRegistries } from '../shared/registryMirrors';
import { plural } from '../shared/wording';
import { terminalSafe as safe } from './format';

/** How many needed images' pulls are listed per node (the JSON has them all). */
const SHOWN_PULLS = 8;

/** One node's lines, indented under its name. */
export function registriesLines(node: string, r: NodeRegistries): string[] {
  const out = [`  ${node}: ${safe(r.file)}: ${safe(headline(r))}`];
  if (r.state === 'absent' || r.state === 'unreadable') return out;
  for (const m of r.mirrors) {
    out.push(`    ${safe(m.registry)} → ${m.endpoints.length ? safe(m.endpoints.join(', ')) : 'no endpoints (the registry itself)'}`);
    for (const w of m.rewrites) out.push(`      rewrite ${safe(w.pattern)} → ${safe(w.replacement)}${w.problem ? ` (${safe(w.problem)})` : ''}`);
  }
  for (const n of r.notes) out.push(`    note: ${safe(n)}`);
  const pulls = r.pulls ?? [];
  if (pulls.length) {
    out.push(`    ${plural(pulls.length, 'needed image')} it lacks would be pulled from:`);
    for (const p of pulls.slice(0, SHOWN_PULLS)) {
      const first = p.sources.find((s) => !s.default) ?? p.sources[0]!;
      out.push(`      ${safe(p.ref)}: ${safe(describePullSource(first))}`);
    }
    if (pulls.length > SHOWN_PULLS) out.push(`      … ${pulls.length - SHOWN_PULLS} more (--json)`);
  }
  return out;
}

/**
 * The section, or nothing when no reached node has a registries.yaml (then k3s pulls from each
 * registry itself, and the report stays as it was).
 */
export function registriesSection(nodes: readonly FleetNodeResult[]): string[] {
  const shown = nodes.filter((n) => n.registries && n.registries.state !== 'absent');
  if (!shown.length) return [];
  const out = ['\nRegistry mirrors (registries.yaml; images are still stored under the names pods give):'];
  for (const n of shown) out.push(...registriesLines(n.node, n.registries!));
  return out;
}
