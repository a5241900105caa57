import { useEffect, useMemo } from 'react';
import type { AuditEntry } from '../../shared/domain/audit';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { AUDIT_ACTION_TEXT, sortAudit } from '../model/audit';
import { diffLabels } from '../model/labels';
import { displayRef } from '../model/refs';
import { formatDateTime } from '../model/text';
import { formatBytes } from '../../shared/format';
import { pinState } from '../../shared/pinState';
import { auditOf, statusOf } from '../store';
import { distroDisplayName } from '../../shared/distro';
import { ErrorCallout } from './ErrorCallout';
import { AlertIcon, ArrowRightIcon, RefreshIcon, ShieldIcon, TrashIcon, UnlockIcon } from './icons';
import { PinBadge } from './PinBadge';
import { imageName } from '../../shared/imageReference';
import { prunedImageText, prunedText } from '../../shared/prunePlan';
import { visibleControls } from '../../shared/visibleControls';

const labelsTitle = (before: Record<string, string>, after: Record<string, string>) => {
  const fmt = (l: Record<string, string>) => Object.entries(l).map(([k, v]) => `  ${k}=${v}`).join('\n') || '  (none)';
  return `Labels before:\n${fmt(before)}\nLabels after:\n${fmt(after)}`;
};

function ActionIcon({ action }: { action: AuditEntry['action'] }) {
  return action === 'pin' ? <ShieldIcon /> : action === 'unpin' ? <UnlockIcon /> : <TrashIcon />;
}

/** One entry; `who` names the node's distro in its pin badges (shared/distro distroDisplayName). */
function Entry({ e, who }: { e: AuditEntry; who: string }) {
  return (
    <li className={`log-entry${e.forced ? ' log-forced' : ''}`} data-testid="log-entry" data-action={e.action}>
      <div className="log-head">
        <span className={`log-action log-action-${e.action}`}>
          <ActionIcon action={e.action} />
          {AUDIT_ACTION_TEXT[e.action]}
        </span>
        {e.forced ? (
          <span className="tag tag-danger" data-testid="log-forced">
            <AlertIcon /> Forced
          </span>
        ) : null}
        <span className="spacer" />
        <span className="muted small">
          by <strong className="log-user">{e.user}</strong> ·{' '}
          <time dateTime={e.time} title={e.time}>
            {formatDateTime(e.time)}
          </time>
        </span>
      </div>
      {e.archive ? (
        <dl className="kv log-archive">
          <dt>Archive</dt>
          <dd>
            <code>{visibleControls(e.archive.path)}</code> <span className="muted">({formatBytes(e.archive.size)})</span>
          </dd>
          <dt>sha256</dt>
          <dd>
            <code className="hash" data-testid="log-sha256">
              {e.archive.sha256}
            </code>
          </dd>
        </dl>
      ) : null}
      {e.pruned ? (
        <div className="log-pruned" data-testid="log-pruned">
          <p className="small">{prunedText(e.pruned)}
          </p>
          <ul className="log-changes">
            {e.pruned.images.map((i) => (
              <li key={i.imageId ?? i.refs[0]} data-testid="log-pruned-image" title={[...i.refs, ...i.digests].join('\n')}>
                <code className="change-ref">{displayRef(imageName(i.refs, ''))}</code>{' '}
                <span className="muted small">{prunedImageText(i)}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {e.changes?.length ? (
        <ul className="log-changes">
          {e.changes.map((c) => {
            const diffs = diffLabels(c.before, c.after);
            return (
              <li key={c.ref} data-testid="log-change" title={labelsTitle(c.before, c.after)}>
                <code className="change-ref" title={c.ref}>
                  {displayRef(c.ref)}
                </code>
                <span className="change-pins">
                  <PinBadge pin={pinState(c.before)} who={who} />
                  <ArrowRightIcon className="change-arrow" />
                  <PinBadge pin={pinState(c.after)} who={who} />
                </span>
                {diffs.length ? (
                  <span className="log-diff">
                    {diffs.map((d) => (
                      <code key={d.key} className={`ld-inline ld-${d.kind}`}>
                        {d.kind === 'added' ? '+' : d.kind === 'removed' ? '−' : '~'}
                        {d.key}
                      </code>
                    ))}
                  </span>
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : null}
      {e.warnings?.length ? (
        <ul className="log-warnings">
          {e.warnings.map((w) => (
            <li key={w} data-testid="log-warning">
              <AlertIcon /> {w}
            </li>
          ))}
        </ul>
      ) : null}
      {e.note ? <p className="log-note">{e.note}</p> : null}
    </li>
  );
}

export function LogPanel({ node }: { node: NodeDef }) {
  const audit = useApp((s) => auditOf(s, node.name));
  const loadAudit = useApp((s) => s.loadAudit);
  const who = useApp((s) => distroDisplayName(statusOf(s, node.name).info?.distro ?? 'unknown'));
  const entries = useMemo(() => sortAudit(audit.items), [audit.items]);

  useEffect(() => {
    if (audit.state === 'idle') void loadAudit(node.name);
  }, [audit.state, loadAudit, node.name]);
  const refreshing = audit.state === 'loading';

  return (
    <section className="images" aria-labelledby="log-title">
      <div className="images-head">
        <h2 id="log-title" className="visually-hidden">Log</h2>
        {audit.loadedAt ? (
          <span className="muted small">
            {entries.length} {entries.length === 1 ? 'change' : 'changes'} made with Holdfast on {node.name}, newest first
          </span>
        ) : null}
        <div className="spacer" />
        <button type="button" className="btn" onClick={() => void loadAudit(node.name)} disabled={refreshing}>
          <RefreshIcon className={refreshing ? 'spin' : undefined} />
          {refreshing ? (audit.loadedAt ? 'Refreshing…' : 'Loading…') : 'Refresh'}
        </button>
      </div>
      {audit.state === 'error' && audit.error ? (
        <ErrorCallout error={audit.error} title="Could not read the log" testId="log-error">
          <button type="button" className="btn btn-small" onClick={() => void loadAudit(node.name)}>
            Retry
          </button>
        </ErrorCallout>
      ) : null}
      {!audit.loadedAt && audit.state !== 'error' ? (
        <div className="empty" aria-live="polite">
          <span className="spinner" aria-hidden="true" />
          <p>Reading the log…</p>
        </div>
      ) : audit.loadedAt && entries.length === 0 ? (
        <div className="empty" data-testid="log-empty">
          <p className="empty-title">Nothing recorded yet</p>
          <p className="muted">Every pin change and archive removal made with Holdfast on this node is listed here.</p>
        </div>
      ) : audit.loadedAt ? (
        <ol className="log" data-testid="log-list">
          {entries.map((e, i) => (
            <Entry key={`${e.time}-${i}`} e={e} who={who} />
          ))}
        </ol>
      ) : null}
    </section>
  );
}
