import type { KeyboardEvent, ReactNode } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { liveOf, statusOf } from '../store';
import { GridIcon, ListIcon, LogoIcon, PlusIcon, UploadIcon } from './icons';
import { JobsIndicator } from './JobsPanel';
import { useDisplayStatus, type DotState } from './LiveStatus';
import { compareText } from '../../shared/compareText';

// The status wording lives with the rest of the status display (./LiveStatus); re-exported
// for the views that import it from here.
export { errorShortText, STATE_TEXT, statusText } from './LiveStatus';

export function StatusDot({ state }: { state: DotState }) {
  return <span className={`dot dot-${state}`} aria-hidden="true" data-testid="status-dot" data-state={state} />;
}

/** Up/Down (and Home/End) move between the buttons of a list; Tab leaves it. */
export function moveFocus(e: KeyboardEvent<HTMLElement>) {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
  const items = [...e.currentTarget.querySelectorAll<HTMLElement>('button.node-item')];
  const i = items.indexOf(document.activeElement as HTMLElement);
  if (i < 0) return;
  e.preventDefault();
  const j = e.key === 'Home' ? 0 : e.key === 'End' ? items.length - 1 : Math.min(items.length - 1, Math.max(0, i + (e.key === 'ArrowDown' ? 1 : -1)));
  items[j]?.focus();
}

function NodeItem({ node: n, active, onSelect }: { node: NodeDef; active: boolean; onSelect(): void }) {
  const status = useApp((s) => statusOf(s, n.name));
  const live = useApp((s) => liveOf(s, n.name));
  const shown = useDisplayStatus(status, live);
  const problem = shown.dot === 'error' || shown.dot === 'reconnecting';
  return (
    <button
      type="button"
      className={`node-item${active ? ' active' : ''}`}
      aria-current={active ? 'page' : undefined}
      data-testid={`node-item-${n.name}`}
      title={`${n.name} — ${shown.text}`}
      onClick={onSelect}
    >
      <StatusDot state={shown.dot} />
      <span className="node-item-text">
        <span className="node-item-name">{n.name}</span>
        <span className="node-item-host">
          {n.user}@{n.host}
          {n.port !== 22 ? `:${n.port}` : ''}
        </span>
        {problem ? (
          <span className={`node-item-problem${shown.dot === 'reconnecting' ? ' node-item-retry' : ''}`} data-testid="node-item-problem">
            {shown.text}
          </span>
        ) : null}
      </span>
      {!problem ? <span className="visually-hidden">, {shown.text}</span> : null}
    </button>
  );
}

/**
 * Nodes by group (site), groups alphabetically, ungrouped nodes last under '' — or one list
 * (group null) when no node has a group.
 */
export function groupNodes(nodes: readonly NodeDef[]): [string | null, NodeDef[]][] {
  if (!nodes.some((n) => n.group)) return [[null, [...nodes]]];
  const by = new Map<string, NodeDef[]>();
  for (const n of nodes) by.set(n.group ?? '', [...(by.get(n.group ?? '') ?? []), n]);
  return [...by.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : compareText(a, b)));
}

export function Sidebar({ onAdd }: { onAdd(): void }) {
  const nodes = useApp((s) => s.nodes);
  const nodesState = useApp((s) => s.nodesState);
  const nodesError = useApp((s) => s.nodesError);
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  const showFleet = useApp((s) => s.showFleet);
  const showMatrix = useApp((s) => s.showMatrix);
  const init = useApp((s) => s.init);
  const view = useApp((s) => s.view);
  const openImport = useApp((s) => s.openImport);

  return (
    <nav className="sidebar" aria-label="Nodes">
      <div className="brand">
        <LogoIcon className="brand-logo" />
        <span className="brand-name">Holdfast</span>
      </div>
      <div className="sidebar-import">
        <button
          type="button"
          className={`btn btn-primary btn-block${view === 'import' ? ' active' : ''}`}
          aria-current={view === 'import' ? 'page' : undefined}
          onClick={openImport}
          data-testid="open-import"
        >
          <UploadIcon /> Import archives
        </button>
      </div>
      <div className="sidebar-head">
        <h2 className="sidebar-title">
          Nodes{nodesState === 'ready' ? <span className="count">{nodes.length}</span> : null}
        </h2>
        <button type="button" className="btn btn-small" onClick={onAdd}>
          <PlusIcon /> Add node
        </button>
      </div>
      {nodesState === 'loading' ? <p className="sidebar-note">Loading nodes…</p> : null}
      {nodesState === 'error' ? (
        <div className="sidebar-note sidebar-error" role="alert">
          <strong>Could not load the node list.</strong>
          <p>{nodesError?.message}</p>
          {nodesError?.hint ? <p>{nodesError.hint}</p> : null}
          <button type="button" className="btn btn-small" onClick={() => void init()}>
            Retry
          </button>
        </div>
      ) : null}
      {nodesState === 'ready' && nodes.length === 0 ? (
        <p className="sidebar-note">No nodes yet. Add the first node you look after: its SSH address is enough.</p>
      ) : null}
      {nodes.length > 1 ? (
        <div className="sidebar-views">
          <FleetViewItem active={view === 'fleet'} onClick={showFleet} testId="open-fleet" icon={<GridIcon className="fleet-item-icon" />} name="Fleet overview" note="every node, pins at risk" />
          <FleetViewItem active={view === 'matrix'} onClick={showMatrix} testId="open-matrix" icon={<ListIcon className="fleet-item-icon" />} name="Fleet matrix" note="images × nodes, drift" />
        </div>
      ) : null}
      {groupNodes(nodes).map(([group, list]) => (
        <div key={group ?? ''} className="node-group" data-testid={group !== null ? `node-group-${group}` : undefined}>
          {group !== null ? (
            <h3 className="node-group-title">
              {group || 'No group'}
              <span className="count">{list.length}</span>
            </h3>
          ) : null}
          <ul className="node-list" onKeyDown={moveFocus} aria-label={group !== null ? `Group ${group || 'none'}` : undefined}>
            {list.map((n) => (
              <li key={n.name}>
                <NodeItem node={n} active={view === 'node' && n.name === selected} onSelect={() => select(n.name)} />
              </li>
            ))}
          </ul>
        </div>
      ))}
      <div className="sidebar-foot">
        <JobsIndicator />
      </div>
    </nav>
  );
}

/** One of the fleet-wide views above the node list (the overview, the matrix). */
function FleetViewItem({ active, onClick, testId, icon, name, note }: { active: boolean; onClick(): void; testId: string; icon: ReactNode; name: string; note: string }) {
  return (
    <button type="button" className={`node-item fleet-item${active ? ' active' : ''}`} aria-current={active ? 'page' : undefined} onClick={onClick} data-testid={testId}>
      {icon}
      <span className="node-item-text">
        <span className="node-item-name">{name}</span>
        <span className="node-item-host">{note}</span>
      </span>
    </button>
  );
}
