// Remove an archive from the node's images dir: first the backend's RemovalCheck (are the images
// present, complete and durably pinned?), then an explicit Remove. When the check refuses, the
// only way on is "Force remove…", which needs the path typed exactly and says what is lost.
import { useEffect, useId, useState } from 'react';
import type { RemovalCheck } from '../../shared/domain/archives';
import type { AuditEntry } from '../../shared/domain/audit';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { removalVerdict } from '../../shared/removalVerdict';
import { distroDisplayName } from '../../shared/distro';
import { statusOf } from '../store';
import { plural } from '../../shared/wording';
import { appText } from '../appText';
import { displayRef } from '../model/refs';
import { visibleControls } from '../../shared/visibleControls';
import { formatBytes } from '../../shared/format';
import { breakable } from './Breakable';
import { ErrorCallout } from './ErrorCallout';
import { AlertIcon, CheckIcon, CrossIcon, ShieldIcon, TrashIcon } from './icons';
import { Modal } from './Modal';

type Phase =
  | { kind: 'checking' }
  | { kind: 'preview'; check: RemovalCheck; error?: ErrorInfo }
  | { kind: 'removing'; check: RemovalCheck; forced: boolean }
  | { kind: 'done'; entry: AuditEntry }
  | { kind: 'failed'; error: ErrorInfo };

function YesNo({ value, yes, no }: { value: boolean; yes: string; no: string }) {
  return (
    <span className={value ? 'yn yn-yes' : 'yn yn-no'}>
      {value ? <CheckIcon /> : <CrossIcon />}
      {value ? yes : no}
    </span>
  );
}

/** What a forced removal loses, per image, in words (`who`: the node's distro, shared/distro distroDisplayName). */
export function forcedLosses(check: RemovalCheck, who = 'k3s'): string[] {
  const out: string[] = [];
  for (const i of check.images) {
    if (!i.present) out.push(`${i.name} is not in containerd: the archive is its only copy on this node.`);
    else if (!i.complete) out.push(`${i.name} is incomplete (missing ${i.missing.length || 'some'} blobs): the archive is the only complete copy.`);
    else if (!i.durable) out.push(`${i.name} loses its pin at the next ${who} start; kubelet may then delete it.`);
  }
  return out;
}

/**
 * The check's verdict and what the removal sets off: one rule decides the tone (shared/removalVerdict),
 * so a warning never stands beside a green "safe… loses nothing".
 */
export function RemovalVerdictView({ check: c, busy, onMakeDurable }: { check: RemovalCheck; busy: boolean; onMakeDurable(): void }) {
  const verdict = removalVerdict(c);
  return (
    <>
      {verdict.tone === 'refused' ? (
        <div className="callout callout-warning" data-testid="removal-blocked">
          <strong>
            <AlertIcon /> Removing this archive now would lose pins
          </strong>
          <ul className="problems" data-testid="removal-problems">
            {c.problems
              .map((p) => appText(p, 'the button below does that'))
              .map((p) => (
                <li key={p}>{p}</li>
              ))}
          </ul>
          <p>
            <strong>What to do:</strong> make its pins durable first, then check again.
          </p>
          <button type="button" className="btn btn-small btn-primary" onClick={onMakeDurable} disabled={busy}>
            <ShieldIcon /> Make its pins durable first
          </button>
        </div>
      ) : (
        <div className={verdict.tone === 'safe' ? 'callout callout-success' : 'callout callout-warning'} data-testid="removal-allowed" data-tone={verdict.tone}>
          <strong>
            {verdict.tone === 'safe' ? <ShieldIcon /> : <AlertIcon />} {verdict.heading}
          </strong>
          <p>{verdict.detail}</p>
          {/* What the removal sets off without blocking it (shared/rke2Lists), in the verdict's own box: said once. */}
          {c.warnings?.map((w) => (
            <p key={w} data-testid="removal-warning">
              {w}
            </p>
          ))}
        </div>
      )}
      {verdict.tone === 'refused'
        ? c.warnings?.map((w) => (
            <div key={w} className="callout callout-warning" data-testid="removal-warning">
              <p>
                <AlertIcon /> {w}
              </p>
            </div>
          ))
        : null}
    </>
  );
}

/** What was removed, once the removal went through: the file, its size and its digest. */
function RemovedSummary({ entry }: { entry: AuditEntry }) {
  return (
    <div className="callout callout-success" role="status" data-testid="remove-done">
      <strong>
        <CheckIcon /> {entry.forced ? 'Archive removed (forced).' : 'Archive removed.'}
      </strong>
      {entry.archive ? (
        <dl className="kv">
          <dt>File</dt>
          <dd>
            <code>{visibleControls(entry.archive.path)}</code> ({formatBytes(entry.archive.size)})
          </dd>
          <dt>sha256</dt>
          <dd>
            <code className="hash" data-testid="removed-sha256">
              {entry.archive.sha256}
            </code>
          </dd>
        </dl>
      ) : null}
      <p>Recorded in the node's log. The archives and images lists have been refreshed.</p>
    </div>
  );
}

/** Each image the archive brings: in containerd, complete, durably pinned. */
function RemovalImagesTable({ images }: { images: RemovalCheck['images'] }) {
  return images.length ? (
    <table className="mini-table" data-testid="removal-images">
      <caption className="visually-hidden">Images the archive brings</caption>
      <thead>
        <tr>
          <th scope="col">Image</th>
          <th scope="col">In containerd</th>
          <th scope="col">Complete</th>
          <th scope="col">Durable pin</th>
        </tr>
      </thead>
      <tbody>
        {images.map((i) => (
          <tr key={i.name} data-testid="removal-image">
            <td>
              <code title={visibleControls(i.name)}>{breakable(displayRef(i.name))}</code>
              {i.missing.length ? (
                <span className="missing" title={i.missing.join('\n')}>
                  missing {plural(i.missing.length, 'blob')}
                </span>
              ) : null}
            </td>
            <td>
              <YesNo value={i.present} yes="Present" no="Absent" />
            </td>
            <td>
              <YesNo value={i.complete} yes="Complete" no="Incomplete" />
            </td>
            <td>
              <YesNo value={i.durable} yes="Durable" no="Not durable" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  ) : (
    <p className="muted">The archive brings no images Holdfast could read.</p>
  );
}

/** "Force remove…" opened: what is lost, and the archive's path to type before the button unlocks. */
function ForceRemoveSection(props: { path: string; losses: string[]; typed: string; onType(typed: string): void; busy: boolean }) {
  const { path, losses, typed, onType, busy } = props;
  const confirmId = useId();
  return (
    <div className="force" data-testid="force-section">
      <p className="force-title">
        <AlertIcon /> Force removal — this loses pins
      </p>
      {losses.length ? (
        <ul className="problems">
          {losses.map((l) => (
            <li key={l}>{l}</li>
          ))}
        </ul>
      ) : null}
      <p>A pod that needs one of these images at an air-gapped site may not start again.</p>
      <label htmlFor={confirmId}>
        Type the archive's path <code>{path}</code> to confirm
      </label>
      <input
        id={confirmId}
        className="mono"
        value={typed}
        onChange={(e) => onType(e.target.value)}
        autoComplete="off"
        spellCheck={false}
        autoFocus
        disabled={busy}
        data-testid="force-confirm"
      />
    </div>
  );
}

export function RemoveArchiveDialog(props: {
  node: NodeDef;
  path: string;
  onClose(): void;
  /** "Make its pins durable first": hands over to the pin preview for this archive. */
  onMakeDurable(path: string): void;
}) {
  const { node, path } = props;
  const check = useApp((s) => s.checkArchiveRemoval);
  const removeArchive = useApp((s) => s.removeArchive);
  const who = distroDisplayName(useApp((s) => statusOf(s, node.name).info?.distro) ?? 'unknown');
  const [phase, setPhase] = useState<Phase>({ kind: 'checking' });
  const [attempt, setAttempt] = useState(0);
  const [forceOpen, setForceOpen] = useState(false);
  const [typed, setTyped] = useState('');

  useEffect(() => {
    let live = true;
    setPhase({ kind: 'checking' });
    void check(node.name, path).then((env) => {
      if (live) setPhase(env.ok ? { kind: 'preview', check: env.result } : { kind: 'failed', error: env.error });
    });
    return () => {
      live = false;
    };
  }, [node.name, path, check, attempt]);

  const busy = phase.kind === 'removing';
  const close = () => {
    if (!busy) props.onClose();
  };
  const remove = async (c: RemovalCheck, forced: boolean) => {
    setPhase({ kind: 'removing', check: c, forced });
    const env = await removeArchive(node.name, path, forced ? { confirm: typed } : undefined);
    setPhase(env.ok ? { kind: 'done', entry: env.result } : { kind: 'preview', check: c, error: env.error });
  };

  const c = phase.kind === 'preview' || phase.kind === 'removing' ? phase.check : null;
  const losses = c ? forcedLosses(c, who) : [];

  return (
    <Modal title="Remove archive safely" onClose={close} testId="remove-dialog" className="modal-wide">
      <div className="modal-body">
        <p className="dialog-subject">
          <code className="path">{path}</code> in <code>{node.imagesDir}</code> on <strong>{node.name}</strong>.
        </p>

        {phase.kind === 'checking' ? (
          <div className="dialog-loading" aria-live="polite" data-testid="check-loading">
            <span className="spinner" aria-hidden="true" />
            <p>Checking every image the archive brings…</p>
          </div>
        ) : null}

        {phase.kind === 'failed' ? (
          <ErrorCallout error={phase.error} title="Could not check the archive">
            <button type="button" className="btn btn-small" onClick={() => setAttempt((a) => a + 1)}>
              Try again
            </button>
          </ErrorCallout>
        ) : null}

        {phase.kind === 'done' ? <RemovedSummary entry={phase.entry} /> : null}

        {c ? (
          <>
            <RemovalVerdictView check={c} busy={busy} onMakeDurable={() => props.onMakeDurable(path)} />

            <RemovalImagesTable images={c.images} />

            {!c.allowed && forceOpen ? <ForceRemoveSection path={path} losses={losses} typed={typed} onType={setTyped} busy={busy} /> : null}

            {phase.kind === 'preview' && phase.error ? <ErrorCallout error={phase.error} title="Not removed" /> : null}
          </>
        ) : null}
      </div>

      <div className="modal-actions">
        {phase.kind === 'done' || phase.kind === 'failed' ? (
          <button type="button" className="btn btn-primary" onClick={props.onClose} autoFocus>
            Close
          </button>
        ) : (
          <>
            {c && !c.allowed && !forceOpen ? (
              <button type="button" className="btn btn-danger-quiet btn-left" onClick={() => setForceOpen(true)}>
                Force remove…
              </button>
            ) : null}
            <button type="button" className="btn" onClick={close} disabled={busy}>
              Cancel
            </button>
            {c && !c.allowed && forceOpen ? (
              <button
                type="button"
                className="btn btn-danger"
                disabled={typed !== path || busy}
                onClick={() => void remove(c, true)}
                aria-busy={busy || undefined}
                data-testid="force-remove"
              >
                {busy ? <span className="spinner spinner-small" aria-hidden="true" /> : <TrashIcon />}
                {busy ? 'Removing…' : 'Force remove'}
              </button>
            ) : (
              <button
                type="button"
                className="btn btn-primary"
                disabled={!c || !c.allowed || busy}
                onClick={() => c && void remove(c, false)}
                aria-busy={busy || undefined}
                data-testid="remove-archive"
              >
                {busy ? <span className="spinner spinner-small" aria-hidden="true" /> : <TrashIcon />}
                {busy ? 'Removing…' : 'Remove archive'}
              </button>
            )}
          </>
        )}
      </div>
    </Modal>
  );
}
