// The guard of each node in the fleet matrix (#50): a badge under the node's column head, and a
// table of every reached node — state, the pin set it keeps, its last run, what that run changed
// and what it could not fix — in the words of the one rule (shared/guardState).
import type { FleetNodeResult } from '../../shared/fleet';
import { GUARD_STATUS_LABEL, guardTime, type GuardView } from '../../shared/guardState';
import { shortDigest } from '../../shared/format';
import { lostPinKindText } from '../../shared/lostPins';

/** The node's guard under its column head: a word or two, the whole sentence in its title. */
export function GuardMark({ guard }: { guard: GuardView | null }) {
  if (!guard) return null;
  return (
    <span className={`mx-col-guard guard-${guard.status}`} data-testid="mx-col-guard" data-status={guard.status} title={guard.words}>
      {GUARD_STATUS_LABEL[guard.status]}
    </span>
  );
}

/** References listed in a cell; the rest counted. */
const SHOWN = 4;

function RefList({ refs, total, label }: { refs: string[]; total: number; label: string }) {
  if (total === 0) return null;
  return (
    <div className="guard-refs">
      <span className="muted">{label}:</span> <span className="mono">{refs.slice(0, SHOWN).join(', ')}</span>
      {total > Math.min(SHOWN, refs.length) ? <span className="muted"> and {total - Math.min(SHOWN, refs.length)} more</span> : null}
    </div>
  );
}

function GuardRow({ node, g }: { node: string; g: GuardView }) {
  const fixed = (g.fixed ?? []).map((f) => (f.restored ? `${f.ref} (restored: ${lostPinKindText(f.restored)})` : f.ref));
  return (
    <tr data-testid={`guard-row-${node}`} data-status={g.status}>
      <th scope="row">{node}</th>
      <td>
        <span className={`guard-badge guard-${g.status}`} data-testid="guard-status">
          {GUARD_STATUS_LABEL[g.status]}
        </span>
      </td>
      <td data-testid="guard-pin-set">
        {g.pinSet ? (
          <>
            {g.pinSet.name}
            {g.pinSet.digest ? <span className="muted mono" title={g.pinSet.digest}> {shortDigest(g.pinSet.digest)}</span> : null}
          </>
        ) : (
          '—'
        )}
      </td>
      <td className="nowrap">{g.lastRun ? guardTime(g.lastRun) : '—'}</td>
      <td data-testid="guard-words">
        {g.words}
        <RefList refs={fixed} total={g.fixedCount ?? 0} label="made durable" />
        <RefList refs={g.missing ?? []} total={g.missingCount ?? 0} label="missing" />
        <RefList refs={g.unverified ?? []} total={g.unverifiedCount ?? 0} label="unverified (pinned anyway)" />
      </td>
    </tr>
  );
}

/** Every reached node's guard; nothing while no node has one (nor an unreadable record). */
export function FleetGuards({ nodes }: { nodes: readonly FleetNodeResult[] }) {
  const reached = nodes.filter((n): n is FleetNodeResult & { guard: GuardView } => Boolean(n.guard));
  if (!reached.some((n) => n.guard.status !== 'absent')) return null;
  return (
    <details className="fleet-section" open data-testid="fleet-guards">
      <summary className="section-title">
        Guard <span className="muted small">keeps a pin set durable on each node between visits</span>
      </summary>
      <table className="mini-table guard-table" data-testid="guard-table">
        <caption className="visually-hidden">Each node's guard: its state, pin set, last run, and what that run changed or could not fix</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Guard</th>
            <th scope="col">Pin set</th>
            <th scope="col">Last run</th>
            <th scope="col">What it did</th>
          </tr>
        </thead>
        <tbody>
          {reached.map((n) => (
            <GuardRow key={n.node} node={n.node} g={n.guard} />
          ))}
        </tbody>
      </table>
    </details>
  );
}
