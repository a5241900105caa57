import type { NodeDef, NodeStatus } from '../../shared/domain';
import { useApp } from '../context';
import { statusOf } from '../store';
import { ConnectionPanel } from './ConnectionPanel';
import { EditIcon, ServerIcon, TrashIcon } from './icons';
import { ImagesPanel } from './ImagesPanel';
import { StatusDot, statusText } from './Sidebar';

function Versions({ status }: { status: NodeStatus }) {
  const info = status.info;
  if (!info) return null;
  const distro = info.distro === 'unknown' ? 'distro' : info.distro;
  return (
    <dl className="versions" data-testid="node-versions">
      <div>
        <dt>containerd</dt>
        <dd title={info.containerdRevision ? `revision ${info.containerdRevision}` : undefined}>{info.containerdVersion}</dd>
      </div>
      <div>
        <dt>{distro}</dt>
        <dd>{info.distroVersion ?? 'unknown'}</dd>
      </div>
    </dl>
  );
}

export function NodeDetail({ node, onEdit, onRemove }: { node: NodeDef; onEdit(): void; onRemove(): void }) {
  const status = useApp((s) => statusOf(s, node.name));
  const connect = useApp((s) => s.connect);
  const resetStatus = useApp((s) => s.resetStatus);

  return (
    <main className="detail" aria-labelledby="node-title">
      <header className="detail-head">
        <div className="detail-title">
          <ServerIcon className="detail-icon" />
          <div>
            <h1 id="node-title">{node.name}</h1>
            <p className="muted small mono">
              {node.user}@{node.host}:{node.port}
            </p>
          </div>
          <span className={`state-pill state-${status.state}`} data-testid="node-state">
            <StatusDot state={status.state} />
            {statusText(status)}
          </span>
        </div>
        <Versions status={status} />
        <div className="detail-actions">
          <button type="button" className="btn" onClick={onEdit}>
            <EditIcon /> Edit
          </button>
          <button type="button" className="btn btn-danger-quiet" onClick={onRemove}>
            <TrashIcon /> Remove
          </button>
        </div>
      </header>

      <div className="detail-body">
        {status.state === 'connecting' ? (
          <div className="empty" aria-live="polite" data-testid="connecting">
            <span className="spinner" aria-hidden="true" />
            <p>
              Connecting to {node.host} over SSH…
            </p>
          </div>
        ) : status.state === 'error' && status.error ? (
          <ConnectionPanel node={node} error={status.error} onCancel={() => resetStatus(node.name)} />
        ) : status.state === 'connected' ? (
          <ImagesPanel node={node} />
        ) : (
          <div className="empty" data-testid="not-connected">
            <p className="empty-title">Not connected</p>
            <p className="muted">Connect to list the images on this node.</p>
            <button type="button" className="btn btn-primary" onClick={() => void connect(node.name)}>
              Connect
            </button>
          </div>
        )}
      </div>
    </main>
  );
}
