// The fleet matrix: every image name (rows) on every node (columns) with its pin state, pins the
// next k3s start removes, and where the nodes disagree (drift). Fills in live as fleet.node
// events arrive; the full report (fleet.done) replaces the partial one. Rows are windowed so 50
// nodes × a few hundred images stay smooth.
import { useMemo, useRef, useState } from 'react';
import type { ArgsOf } from '../../shared/contract';
import type { ErrorInfo } from '../../shared/domain/errors';
import { useApp } from '../context';
import { statusOf } from '../store';
import {
  buildMatrix,
  filterMatrix,
  summarizeMatrix,
  type CellPin,
  type FleetMatrix as Matrix,
  type MatrixCell,
  type MatrixColumn,
  type MatrixRow as MatrixRowData,
  type MatrixSummary,
  type ProblemFilter,
} from '../fleetMatrix';
import type { FleetRunState } from '../store/types';
import { displayRef } from '../model/refs';
import { formatDateTime } from '../model/text';
import { formatBytes } from '../../shared/format';
import { distroDisplayName, distrosDisplayName } from '../../shared/distro';
import { NEED_VERDICT_TEXT, workloadLine } from '../needsView';
import { FleetRegistries } from './Peers';
import { download } from '../download';
import { FleetGuards, GuardMark } from './FleetGuards';
import { SavePinSetButton } from './SavePinSet';
import { AlertIcon, ClockIcon, CrossIcon, GridIcon, RefreshIcon, ShieldIcon, SlashIcon } from './icons';
import { useVirtualRows } from './virtual';
import { SearchField } from './SearchField';
import { SegButton } from './SegButton';
import { RefText } from './RefText';

const ROW_HEIGHT = 34;

const PROBLEMS: { value: ProblemFilter; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'needed', label: 'Needed at risk' },
  { value: 'atRisk', label: 'At risk' },
  { value: 'drift', label: 'Drift' },
  { value: 'missing', label: 'Missing' },
  { value: 'unreachable', label: 'Unreachable' },
];

/** A cell's pin in words; `who` names the node's distro ("k3s", "RKE2"). */
const cellText = (pin: CellPin, who: string): string =>
  ({ durable: 'Durable pin', distro: `${who} pin`, none: 'Unpinned', missing: 'Missing', unknown: 'Unknown (node not inspected)' })[pin];

function CellIcon({ pin }: { pin: CellPin }) {
  if (pin === 'durable') return <ShieldIcon />;
  if (pin === 'distro') return <ClockIcon />;
  if (pin === 'none') return <SlashIcon />;
  if (pin === 'missing') return <CrossIcon />;
  return <span aria-hidden="true">·</span>;
}

/** What a needed image at risk on a node means, for the cell's title. */
function needTitle(cell: MatrixCell): string {
  const n = cell.need;
  if (!n) return '';
  const who = n.workloads.length ? `\nNeeded by ${n.workloads.slice(0, 3).map(workloadLine).join(', ')}${n.workloads.length > 3 ? ` and ${n.workloads.length - 3} more` : ''}` : '';
  const copy = n.heldBy?.length ? `\nA copy: ${n.heldBy.join(', ')}` : n.verdict === 'missing' ? '\nNo copy known on the reached nodes' : '';
  return `\nSite need: ${NEED_VERDICT_TEXT[n.verdict]} — ${n.because}${who}${copy}`;
}

function Cell({ cell, node, who }: { cell: MatrixCell; node: string; who: string }) {
  const title =
    cell.pin === 'unknown'
      ? `${node}: not inspected`
      : cell.pin === 'missing'
        ? `${node}: not on this node${needTitle(cell)}`
        : `${node}: ${cellText(cell.pin, who)}${cell.atRisk ? ` — loses its pin at the next ${who} start` : ''}${cell.reason ? `\n${cell.reason}` : ''}${
            cell.refs.length > 1 ? `\n${cell.refs.length} references: ${cell.refs.map(displayRef).join(', ')}` : ''
          }${needTitle(cell)}`;
  return (
    <td
      className={`mx-cell mx-${cell.pin}${cell.atRisk ? ' mx-at-risk' : ''}${cell.need ? ' mx-needed' : ''}`}
      title={title}
      data-testid="mx-cell"
      data-node={node}
      data-pin={cell.pin}
      data-at-risk={cell.atRisk || undefined}
      data-need={cell.need?.verdict}
    >
      <span className="mx-cell-body">
        <span className="mx-chip">
          <CellIcon pin={cell.pin} />
          <span className="visually-hidden">{cellText(cell.pin, who)}</span>
          {cell.atRisk ? (
            <span className="mx-risk" data-testid="mx-at-risk" aria-label={`loses its pin at the next ${who} start`}>
              !
            </span>
          ) : null}
        </span>
        {cell.need ? (
          <span className="mx-need" data-testid="mx-need">
            needed<span className="visually-hidden">: {NEED_VERDICT_TEXT[cell.need.verdict]}</span>
          </span>
        ) : null}
      </span>
    </td>
  );
}

/** The title with what the report is, the group to inspect, and Inspect. */
function MatrixHeader(props: { run: FleetRunState; summary: MatrixSummary; groups: string[]; group: string; onGroup(group: string): void; running: boolean }) {
  const { run, summary, groups, group, onGroup, running } = props;
  const nodes = useApp((s) => s.nodes);
  const startFleet = useApp((s) => s.startFleet);
  return (
    <header className="detail-head">
      <div className="detail-title">
        <GridIcon className="detail-icon" />
        <div>
          <h1 id="matrix-title">Fleet matrix</h1>
          <p className="muted small" data-testid="matrix-subtitle">
            {running
              ? `Inspecting… ${summary.answered} of ${summary.total} nodes answered`
              : run.state === 'done' && run.report
                ? `Report of ${formatDateTime(run.report.generatedAt)} · ${run.report.summary.nodes} nodes${run.group ? ` in ${run.group}` : ''}`
                : 'Every image on every node, side by side'}
          </p>
        </div>
      </div>
      <div className="detail-actions">
        {groups.length > 0 ? (
          <label className="inline-select">
            <span className="visually-hidden">Nodes to inspect</span>
            <select value={group} onChange={(e) => onGroup(e.target.value)} data-testid="matrix-group" disabled={running}>
              <option value="">All nodes</option>
              {groups.map((g) => (
                <option key={g} value={g}>
                  Group {g}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <button type="button" className="btn btn-primary" onClick={() => void startFleet(group)} disabled={running || nodes.length === 0} data-testid="inspect-fleet">
          {running ? <span className="spinner spinner-small" aria-hidden="true" /> : <RefreshIcon />}
          {running ? 'Inspecting…' : group ? `Inspect ${group}` : 'Inspect fleet'}
        </button>
      </div>
    </header>
  );
}

/** The report's counts in a bar, and its export to HTML, CSV or JSON once complete. */
function MatrixSummaryBar({ summary, run }: { summary: MatrixSummary; run: FleetRunState }) {
  const exportReport = useApp((s) => s.exportFleetReport);
  const [exportError, setExportError] = useState<ErrorInfo | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const onExport = async (format: ArgsOf<'fleet.export'>['format']) => {
    setExportError(null);
    setExporting(format);
    const env = await exportReport(format);
    setExporting(null);
    if (!env.ok) setExportError(env.error);
    else download(env.result);
  };
  return (
    <>
      <div className="matrix-summary" data-testid="matrix-summary">
        <SummaryItem label="nodes at risk" value={summary.nodesAtRisk} alert={summary.nodesAtRisk > 0} testId="sum-nodes-at-risk" />
        <SummaryItem label="needed images at risk" value={summary.neededAtRisk} alert={summary.neededAtRisk > 0} testId="sum-needed" />
        <SummaryItem label="images losing their pin" value={summary.losingPins} alert={summary.losingPins > 0} testId="sum-losing" />
        {summary.lostPins > 0 ? <SummaryItem label="durable pins gone" value={summary.lostPins} alert testId="sum-lost" /> : null}
        <SummaryItem label="images drift" value={summary.drift} alert={summary.drift > 0} warn testId="sum-drift" />
        <SummaryItem label="low on disk" value={summary.lowDisk} alert={(summary.lowDisk ?? 0) > 0} warn testId="sum-low-disk" />
        <SummaryItem label="unreachable" value={summary.unreachable} alert={summary.unreachable > 0} testId="sum-unreachable" />
        <div className="spacer" />
        <div className="matrix-export" role="group" aria-label="Export the report">
          <span className="muted small">Export</span>
          {(['html', 'csv', 'json'] as const).map((f) => (
            <button
              key={f}
              type="button"
              className="btn btn-small"
              onClick={() => void onExport(f)}
              disabled={run.state !== 'done' || exporting !== null}
              title={run.state !== 'done' ? 'Available once the inspection is complete' : `Download the report as ${f.toUpperCase()}`}
              data-testid={`export-${f}`}
            >
              {f.toUpperCase()}
            </button>
          ))}
        </div>
      </div>
      {exportError ? (
        <div className="callout callout-error" role="alert">
          <strong>Export failed: {exportError.message}</strong>
          {exportError.hint ? <p>{exportError.hint}</p> : null}
        </div>
      ) : null}
    </>
  );
}

/** A node's column header: opens the node; says whether it answered and what is at risk there. */
function NodeColumnHead({ column: c }: { column: MatrixColumn }) {
  const select = useApp((s) => s.select);
  return (
    <th
      scope="col"
      className={`mx-col mx-col-${c.status}`}
      data-testid={`mx-col-${c.node}`}
      data-status={c.status}
      title={c.status === 'unreachable' ? `${c.error?.message ?? 'Unreachable'}${c.error?.hint ? `\n${c.error.hint}` : ''}` : undefined}
    >
      <button type="button" className="mx-col-open" onClick={() => select(c.node)} data-testid="mx-col-open">
        <span className="mx-col-name">{c.node}</span>
      </button>
      <span className="mx-col-meta">
        {c.status === 'pending' ? (
          <span className="muted">waiting…</span>
        ) : c.status === 'unreachable' ? (
          <span className="mx-col-error" data-testid="mx-col-error">
            Unreachable
          </span>
        ) : c.neededAtRisk > 0 || c.losingPins > 0 ? (
          <>
            {c.neededAtRisk > 0 ? (
              <span className="mx-col-needed" data-testid="mx-col-needed" title={`Needed images at risk on this node: missing, not pinned, or losing their pin at the next ${distroDisplayName(c.distro)} start`}>
                {c.neededAtRisk} needed at risk
              </span>
            ) : null}
            {c.losingPins > 0 ? <span className="mx-col-risk">{c.losingPins} lose pin</span> : null}
          </>
        ) : (
          <span className="muted">ok</span>
        )}
        {c.unverified ? (
          <span className="mx-col-unverified" data-testid="mx-col-unverified" title="Images on this node without a signature Holdfast verified (refused, or never verified)">
            {c.unverified} not verified
          </span>
        ) : null}
        {c.lowDisk ? <span className="mx-col-disk" title={c.freeBytes !== null ? `${formatBytes(c.freeBytes)} free` : undefined}>low disk</span> : null}
        {c.lostPins > 0 ? (
          <span className="mx-col-lost" data-testid="mx-col-lost" title="Durable pins Holdfast made that are gone: open the node for causes and remedy">
            {c.lostPins} pins gone
          </span>
        ) : null}
        <GuardMark guard={c.guard} />
        {c.warnings.length ? (
          <span className="mx-col-capability" data-testid="mx-col-capability" title={c.warnings.map((w) => w.message).join('\n')}>
            {c.warnings.some((w) => w.kind === 'no-cri-pinning') ? 'no CRI pinning' : `${distroDisplayName(c.distro)} pins nothing`}
          </span>
        ) : null}
      </span>
    </th>
  );
}

/** One image across the nodes: its name, a drift mark when they disagree, a cell per node. */
function ImageRow({ row: r, columns, matrix, selected, onSelect }: { row: MatrixRowData; columns: number[]; matrix: Matrix; selected: boolean; onSelect(name: string, on: boolean): void }) {
  return (
    <tr className={`mx-row${r.drift ? ' mx-drift' : ''}${r.atRisk ? ' mx-row-risk' : ''}`} data-testid="mx-row" data-name={r.name} data-drift={r.drift || undefined}>
      <th scope="row" className="mx-name" title={r.name}>
        <span className="mx-name-line">
          <input type="checkbox" className="mx-select" checked={selected} onChange={(e) => onSelect(r.name, e.target.checked)} aria-label={`Select ${r.name} for a pin set`} data-testid="mx-select" />
          {r.drift ? (
            <span className="mx-drift-mark" title="The nodes disagree about this image (missing or pinned differently)" data-testid="mx-drift">
              drift
            </span>
          ) : null}
          <span className="mx-name-text">
            <RefText name={r.name} />
          </span>
        </span>
      </th>
      {columns.map((ci) => (
        <Cell key={ci} cell={r.cells[ci]!} node={matrix.columns[ci]!.node} who={distroDisplayName(matrix.columns[ci]!.distro)} />
      ))}
    </tr>
  );
}

export function FleetMatrix() {
  const nodes = useApp((s) => s.nodes);
  const run = useApp((s) => s.fleetRun);
  // The distro the empty state names: the connected nodes' ("RKE2"), k3s/RKE2 when they differ.
  const fleetWho = useApp((s) => distrosDisplayName(s.nodes.map((n) => statusOf(s, n.name).info?.distro ?? 'unknown')));
  const [group, setGroup] = useState('');
  const [problem, setProblem] = useState<ProblemFilter>('all');
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const onSelect = (name: string, on: boolean) => setSelected((cur) => (on ? new Set(cur).add(name) : new Set([...cur].filter((x) => x !== name))));
  const scrollRef = useRef<HTMLDivElement>(null);
  const headRef = useRef<HTMLTableSectionElement>(null);

  const groups = useMemo(() => [...new Set(nodes.map((n) => n.group).filter((g): g is string => Boolean(g)))].sort(), [nodes]);
  const groupOf = useMemo(() => Object.fromEntries(nodes.map((n) => [n.name, n.group])), [nodes]);
  const matrix = useMemo(() => buildMatrix(run.nodes, run.results, { report: run.state === 'done' ? run.report : null, groups: groupOf }), [run, groupOf]);
  const summary = useMemo(() => summarizeMatrix(matrix), [matrix]);
  // Each node's result as it answered (the finished report's, once there): its registries and peers.
  const fleetNodes = useMemo(() => (run.state === 'done' && run.report ? run.report.nodes : run.nodes.flatMap((n) => run.results[n] ?? [])), [run]);
  const view = useMemo(() => filterMatrix(matrix, { group, problem, query }), [matrix, group, problem, query]);
  const rows = useVirtualRows({
    count: view.rows.length,
    rowHeight: ROW_HEIGHT,
    extraOf: () => 0,
    extraKey: 0,
    scrollRef,
    headerRef: headRef,
  });

  const running = run.state === 'running' || run.state === 'starting';
  const hasData = run.nodes.length > 0;

  return (
    <main className="detail matrix" aria-labelledby="matrix-title" data-testid="fleet-matrix">
      <MatrixHeader run={run} summary={summary} groups={groups} group={group} onGroup={setGroup} running={running} />
      <div className="detail-body matrix-body">
        {run.state === 'error' && run.error ? (
          <div className="callout callout-error" role="alert" data-testid="matrix-error">
            <strong>Could not start the inspection: {run.error.message}</strong>
            {run.error.hint ? <p>{run.error.hint}</p> : null}
          </div>
        ) : null}
        {running ? (
          <div className="matrix-progress" role="status" aria-live="polite" data-testid="matrix-progress">
            <span>
              {summary.answered} of {summary.total} nodes answered
            </span>
            <progress max={Math.max(1, summary.total)} value={summary.answered} />
          </div>
        ) : null}
        {!hasData && !running ? (
          <div className="empty" data-testid="matrix-empty">
            <p className="empty-title">No fleet report yet</p>
            <p className="muted">
              Inspect the fleet to see every image on every node, which pins the next {fleetWho} start removes, and where the nodes disagree.
            </p>
          </div>
        ) : null}
        {hasData ? (
          <>
            <MatrixSummaryBar summary={summary} run={run} />
            <div className="toolbar">
              <SearchField id="matrix-search" label="Search images" placeholder="Search image name" value={query} onChange={setQuery} testId="matrix-search" />
              <div className="segmented" role="group" aria-label="Show problems">
                {PROBLEMS.map((p) => (
                  <SegButton key={p.value} active={problem === p.value} onClick={() => setProblem(p.value)} testId={`mx-filter-${p.value}`}>
                    {p.label}
                  </SegButton>
                ))}
              </div>
              <SavePinSetButton images={[...selected]} group={group} />
              <Legend who={distrosDisplayName(matrix.columns.map((c) => c.distro))} />
            </div>
            <div className="table-wrap matrix-wrap" ref={scrollRef} data-testid="matrix-scroll">
              <table className="matrix-table" data-testid="matrix-table" aria-rowcount={view.rows.length + 1}>
                <caption className="visually-hidden">Pin state of every image (rows) on every node (columns). Open a node with its column header.</caption>
                <thead ref={headRef}>
                  <tr>
                    <th scope="col" className="mx-name-head">
                      Image <span className="muted">({view.rows.length})</span>
                    </th>
                    {view.columns.map((ci) => (
                      <NodeColumnHead key={matrix.columns[ci]!.node} column={matrix.columns[ci]!} />
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.padTop > 0 ? (
                    <tr aria-hidden="true" className="spacer-row">
                      <td style={{ height: rows.padTop }} colSpan={view.columns.length + 1} />
                    </tr>
                  ) : null}
                  {view.rows.slice(rows.start, rows.end).map((r) => (
                    <ImageRow key={r.name} row={r} columns={view.columns} matrix={matrix} selected={selected.has(r.name)} onSelect={onSelect} />
                  ))}
                  {rows.padBottom > 0 ? (
                    <tr aria-hidden="true" className="spacer-row">
                      <td style={{ height: rows.padBottom }} colSpan={view.columns.length + 1} />
                    </tr>
                  ) : null}
                </tbody>
              </table>
              {view.rows.length === 0 ? <p className="muted matrix-none">No image matches these filters.</p> : null}
            </div>
            <UnreachableList matrix={matrix} columns={view.columns} />
            <FleetGuards nodes={fleetNodes} />
            <FleetRegistries nodes={fleetNodes} groupOf={(n) => groupOf[n]} />
          </>
        ) : null}
      </div>
    </main>
  );
}

function UnreachableList({ matrix, columns }: { matrix: ReturnType<typeof buildMatrix>; columns: number[] }) {
  const down = columns.map((i) => matrix.columns[i]!).filter((c) => c.status === 'unreachable');
  if (down.length === 0) return null;
  return (
    <ul className="matrix-unreachable" data-testid="matrix-unreachable">
      {down.map((c) => (
        <li key={c.node} className="callout callout-warning">
          <AlertIcon />
          <div>
            <strong>
              {c.node} was not inspected: {c.error?.message ?? 'unreachable'}
            </strong>
            {c.error?.hint ? <p>{c.error.hint}</p> : null}
            <p className="muted small">Its column is unknown, not empty: nothing is counted as missing there.</p>
          </div>
        </li>
      ))}
    </ul>
  );
}

function SummaryItem(props: { label: string; value: number | null; alert: boolean; warn?: boolean; testId: string }) {
  return (
    <div className={`mx-sum${props.alert ? (props.warn ? ' mx-sum-warn' : ' mx-sum-alert') : ''}`} data-testid={props.testId}>
      <span className="mx-sum-value">{props.value ?? '…'}</span>
      <span className="mx-sum-label">{props.label}</span>
    </div>
  );
}

function Legend({ who }: { who: string }) {
  return (
    <div className="mx-legend muted small" aria-hidden="true">
      {(['durable', 'distro', 'none', 'missing'] as const).map((p) => (
        <span key={p} className={`mx-legend-item mx-${p}`}>
          <span className="mx-chip">
            <CellIcon pin={p} />
          </span>
          {cellText(p, who)}
        </span>
      ))}
      <span className="mx-legend-item">
        <span className="mx-chip mx-chip-risk">
          <span className="mx-risk">!</span>
        </span>
        loses pin at next start
      </span>
      <span className="mx-legend-item">
        <span className="mx-need">needed</span>
        needed by the site, at risk
      </span>
    </div>
  );
}
