import { useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { NodeStatus } from '../../shared/domain/connection';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { countsOfRefs, criModeOf } from '../model/images';
import { nodeAtRisk } from '../needsView';
import { archivesOf, diskOf, imagesOf, liveOf, statusOf } from '../store';
import { ArchivesPanel } from './ArchivesPanel';
import { ConnectionPanel } from './ConnectionPanel';
import { DiskPanel } from './DiskPanel';
import { PruneDialog } from './PruneDialog';
import { EditIcon, RefreshIcon, ServerIcon, TrashIcon } from './icons';
import { ImagesPanel } from './ImagesPanel';
import { LogPanel } from './LogPanel';
import { CapabilityBanner, LostPinsBanner, NeededAtRiskBanner } from './NodeNotices';
import { PinDialog, type PinRequest } from './PinDialog';
import { RemoveArchiveDialog } from './RemoveArchiveDialog';
import { distroText } from '../distroText';
import { distroDisplayName } from '../../shared/distro';
import { useDisplayStatus } from './LiveStatus';
import { StatusDot } from './Sidebar';

type Tab = 'images' | 'archives' | 'disk' | 'log';
const TABS: { id: Tab; label: string }[] = [
  { id: 'images', label: 'Images' },
  { id: 'archives', label: 'Archives' },
  { id: 'disk', label: 'Disk' },
  { id: 'log', label: 'Log' },
];

type Action = { kind: 'pin'; request: PinRequest } | { kind: 'remove'; path: string } | { kind: 'prune' } | null;

/** WAI-ARIA tabs with automatic activation: arrows, Home and End move and select. */
function TabList(props: { active: Tab; onChange(tab: Tab): void; counts: Partial<Record<Tab, { n: number; alert?: boolean; label: string }>> }) {
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const onKey = (e: KeyboardEvent) => {
    const i = TABS.findIndex((t) => t.id === props.active);
    let j = i;
    if (e.key === 'ArrowRight') j = (i + 1) % TABS.length;
    else if (e.key === 'ArrowLeft') j = (i - 1 + TABS.length) % TABS.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = TABS.length - 1;
    else return;
    e.preventDefault();
    const tab = TABS[j]!.id;
    props.onChange(tab);
    refs.current[tab]?.focus();
  };
  return (
    <div className="tabs" role="tablist" aria-label="Node views" onKeyDown={onKey}>
      {TABS.map((t) => {
        const selected = t.id === props.active;
        const count = props.counts[t.id];
        return (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[t.id] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={selected}
            aria-controls={`tabpanel-${t.id}`}
            tabIndex={selected ? 0 : -1}
            className={selected ? 'tab active' : 'tab'}
            onClick={() => props.onChange(t.id)}
            data-testid={`tab-${t.id}`}
          >
            {t.label}
            {count ? (
              <span className={count.alert ? 'tab-count tab-count-alert' : 'tab-count'} title={count.label}>
                {count.n}
                <span className="visually-hidden"> {count.label}</span>
              </span>
            ) : null}
          </button>
        );
      })}
    </div>
  );
}

function ConnectedBody({ node }: { node: NodeDef }) {
  const [tab, setTab] = useState<Tab>('images');
  const [action, setAction] = useState<Action>(null);
  const images = useApp((s) => imagesOf(s, node.name));
  const archives = useApp((s) => archivesOf(s, node.name));
  const info = useApp((s) => statusOf(s, node.name).info);
  // (with the distro's name, as the Images tab asks: one memoised grouping for both)
  const atRisk = useMemo(() => countsOfRefs(images.items, criModeOf(info), distroDisplayName(info?.distro ?? 'unknown')).atRisk, [images.items, info]);
  // The tab's count: the needed images at risk when the node's needs are known (shared/needs),
  // else the images whose pin the next k3s start removes.
  const needed = useMemo(() => (images.needs ? nodeAtRisk(images) : null), [images]);
  // Needed images kubelet's GC would delete (once the Disk tab has been read).
  const neededAtRisk = useApp((s) => diskOf(s, node.name).picture?.forecast?.neededDeleted ?? 0);

  const pin = (request: PinRequest) => setAction({ kind: 'pin', request });
  const pinArchive = (path: string) =>
    pin({ action: 'pin', target: { archive: path }, title: 'Make the archive’s pins durable', subject: `the images of archive ${path}` });

  return (
    <>
      <CapabilityBanner info={info} />
      {/* On the Images tab the banner over the table lists them, with the action. */}
      {tab !== 'images' ? <NeededAtRiskBanner node={node.name} onShow={() => setTab('images')} /> : null}
      <LostPinsBanner
        node={node.name}
        onRepin={(target, subject) => pin({ action: 'pin', target, title: 'Make the lost pin durable again', subject: `the image of ${subject}` })}
      />
      <TabList
        active={tab}
        onChange={setTab}
        counts={{
          images: needed
            ? needed.length
              ? { n: needed.length, alert: true, label: needed.length === 1 ? 'needed image at risk' : 'needed images at risk' }
              : undefined
            : atRisk
              ? { n: atRisk, alert: true, label: atRisk === 1 ? 'image at risk' : 'images at risk' }
              : undefined,
          archives: archives.loadedAt ? { n: archives.items.length, label: archives.items.length === 1 ? 'file' : 'files' } : undefined,
          disk: neededAtRisk
            ? { n: neededAtRisk, alert: true, label: neededAtRisk === 1 ? "needed image kubelet's GC would delete" : "needed images kubelet's GC would delete" }
            : undefined,
        }}
      />
      <div
        role="tabpanel"
        id={`tabpanel-${tab}`}
        aria-labelledby={`tab-${tab}`}
        className={tab === 'images' ? 'tabpanel tabpanel-fill' : 'tabpanel'}
        tabIndex={-1}
        data-testid={`tabpanel-${tab}`}
      >
        {tab === 'images' ? <ImagesPanel node={node} onPin={pin} /> : null}
        {tab === 'archives' ? (
          <ArchivesPanel node={node} onMakeDurable={pinArchive} onRemove={(path) => setAction({ kind: 'remove', path })} />
        ) : null}
        {tab === 'disk' ? <DiskPanel node={node} onPrune={() => setAction({ kind: 'prune' })} /> : null}
        {tab === 'log' ? <LogPanel node={node} /> : null}
      </div>
      {action?.kind === 'pin' ? <PinDialog node={node} request={action.request} onClose={() => setAction(null)} /> : null}
      {action?.kind === 'prune' ? <PruneDialog node={node} onClose={() => setAction(null)} /> : null}
      {action?.kind === 'remove' ? (
        <RemoveArchiveDialog node={node} path={action.path} onClose={() => setAction(null)} onMakeDurable={pinArchive} />
      ) : null}
    </>
  );
}

function Versions({ status }: { status: NodeStatus }) {
  const info = status.info;
  if (!info) return null;
  const distro = distroText(info);
  return (
    <dl className="versions" data-testid="node-versions">
      <div>
        <dt>containerd</dt>
        <dd title={info.containerdRevision ? `revision ${info.containerdRevision}` : undefined}>{info.containerdVersion}</dd>
      </div>
      <div data-testid="node-distro">
        <dt>{distro.name}</dt>
        <dd title={distro.help ?? undefined}>
          {distro.version}
          {distro.note ? <span className="versions-note">{unbrokenFlags(distro.note)}</span> : null}
        </dd>
      </div>
    </dl>
  );
}

/** Text with each command-line flag (`--version`) kept on one line: browsers break after a hyphen. */
function unbrokenFlags(text: string): ReactNode[] {
  return text.split(/(--[a-z][a-z-]*)/).map((part, i) => (i % 2 ? <span key={i} className="nowrap">{part}</span> : part));
}

export function NodeDetail({ node, onEdit, onRemove }: { node: NodeDef; onEdit(): void; onRemove(): void }) {
  const status = useApp((s) => statusOf(s, node.name));
  const live = useApp((s) => liveOf(s, node.name));
  const shown = useDisplayStatus(status, live);
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
          <span className={`state-pill state-${shown.dot}`} data-testid="node-state" aria-live="polite">
            <StatusDot state={shown.dot} />
            {shown.text}
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
        {shown.dot === 'reconnecting' ? (
          <div className="banner banner-warning" role="status" data-testid="reconnecting-banner">
            <RefreshIcon className="banner-icon spin" />
            <div className="banner-text">
              <strong>
                Connection to {node.name} lost — {shown.text.charAt(0).toLowerCase() + shown.text.slice(1)}
              </strong>
              <span>
                {shown.attempt ? `Attempt ${shown.attempt}. ` : ''}Holdfast keeps retrying (up to every 30 s); what you see below
                is the last known state and refreshes once the node is back.
                {live?.error?.message ? ` Last error: ${live.error.message}` : ''}
              </span>
            </div>
            <div className="banner-actions">
              <button type="button" className="btn btn-small" onClick={() => void connect(node.name)}>
                Retry now
              </button>
            </div>
          </div>
        ) : null}
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
          <ConnectedBody node={node} />
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
