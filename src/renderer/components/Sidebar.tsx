import type { ErrorCode, NodeConnState, NodeStatus } from '../../shared/domain';
import { useApp } from '../context';
import { LogoIcon, PlusIcon, UploadIcon } from './icons';
import { JobsIndicator } from './JobsPanel';

export const STATE_TEXT: Record<NodeConnState, string> = {
  unknown: 'Not connected',
  connecting: 'Connecting…',
  connected: 'Connected',
  error: 'Connection failed',
};

/** A few words for the sidebar and header: why a node is not connected. */
export function errorShortText(code: ErrorCode | undefined): string {
  switch (code) {
    case 'HOST_KEY_UNKNOWN':
      return 'Host key not trusted yet';
    case 'HOST_KEY_CHANGED':
      return 'Host key changed';
    case 'AUTH_FAILED':
      return 'Authentication failed';
    case 'UNREACHABLE':
      return 'Unreachable';
    case 'TIMEOUT':
      return 'Timed out';
    case 'CONTAINERD_UNAVAILABLE':
      return 'containerd unavailable';
    default:
      return 'Connection failed';
  }
}

export function statusText(status: NodeStatus): string {
  return status.state === 'error' ? errorShortText(status.error?.code) : STATE_TEXT[status.state];
}

export function StatusDot({ state }: { state: NodeConnState }) {
  return <span className={`dot dot-${state}`} aria-hidden="true" data-testid="status-dot" data-state={state} />;
}

export function Sidebar({ onAdd }: { onAdd(): void }) {
  const nodes = useApp((s) => s.nodes);
  const nodesState = useApp((s) => s.nodesState);
  const nodesError = useApp((s) => s.nodesError);
  const selected = useApp((s) => s.selected);
  const statuses = useApp((s) => s.statuses);
  const select = useApp((s) => s.select);
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
      <ul className="node-list">
        {nodes.map((n) => {
          const status = statuses[n.name] ?? { name: n.name, state: 'unknown' as const };
          const st = status.state;
          const text = statusText(status);
          const active = view === 'node' && n.name === selected;
          return (
            <li key={n.name}>
              <button
                type="button"
                className={`node-item${active ? ' active' : ''}`}
                aria-current={active ? 'page' : undefined}
                data-testid={`node-item-${n.name}`}
                title={`${n.name} — ${text}`}
                onClick={() => select(n.name)}
              >
                <StatusDot state={st} />
                <span className="node-item-text">
                  <span className="node-item-name">{n.name}</span>
                  <span className="node-item-host">
                    {n.user}@{n.host}
                    {n.port !== 22 ? `:${n.port}` : ''}
                  </span>
                  {st === 'error' ? <span className="node-item-problem">{text}</span> : null}
                </span>
                {st !== 'error' ? <span className="visually-hidden">, {text}</span> : null}
              </button>
            </li>
          );
        })}
      </ul>
      <div className="sidebar-foot">
        <JobsIndicator />
      </div>
    </nav>
  );
}
