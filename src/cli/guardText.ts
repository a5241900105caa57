// The "Guard" part of `holdfast inspect` (#50): per reached node whether a guard runs there, the
// pin set it keeps, when it last ran and what it changed or could not fix, in the words of the
// one rule (shared/guardState). Said only when some node has a guard or an unreadable record.
import type { FleetNodeResult } from '../shared/fleet';
import { lostPinKindText } from '../shared/lostPins';
import { terminalSafe as safe } from './format';

/** References listed per node without --why (the JSON has up to 200 of each). */
const SHOWN = 5;

export function guardSection(nodes: readonly FleetNodeResult[], why: boolean): string[] {
  const reached = nodes.filter((n) => n.guard);
  if (!reached.some((n) => n.guard!.status !== 'absent')) return [];
  const out = ['\nGuard (keeps a pin set on the node between visits):'];
  for (const n of reached) {
    const g = n.guard!;
    out.push(`  ${n.node}: ${safe(g.words)}`);
    if (g.status === 'absent' || g.status === 'unreadable') continue;
    const pad = `  ${' '.repeat(n.node.length)}  `;
    const shown = why ? Infinity : SHOWN;
    for (const f of (g.fixed ?? []).slice(0, shown)) out.push(`${pad}${f.restored ? `restored: ${safe(f.ref)} (${lostPinKindText(f.restored)})` : `pinned: ${safe(f.ref)}`}`);
    for (const m of (g.missing ?? []).slice(0, shown)) out.push(`${pad}MISSING: ${safe(m)} (not on the node: import it)`);
    for (const u of (g.unverified ?? []).slice(0, shown)) out.push(`${pad}UNVERIFIED: ${safe(u)} (the pin set requires it signed; pinned anyway)`);
    const over = (count: number | undefined, list: readonly unknown[] | undefined) => Math.max(0, (count ?? 0) - Math.min(shown, list?.length ?? 0));
    const more = over(g.fixedCount, g.fixed) + over(g.missingCount, g.missing) + over(g.unverifiedCount, g.unverified);
    if (more) out.push(`${pad}… and ${more} more (${why ? 'the node records at most 200 of each' : '--why lists them'})`);
  }
  return out;
}
