import { useEffect, useId, useMemo, useRef, useState, type ClipboardEvent, type DragEvent } from 'react';
import type { ErrorInfo, Job } from '../../shared/domain';
import { useApp } from '../context';
import { basename, humanSize, isAbsoluteLocalPath, isJobFinished, nodesToRetry, parsePathInput, sortPlatforms } from '../model';
import type { DraftArchive, WizardStep } from '../store';
import { compressionName, plural } from '../../shared/wording';
import { breakable } from './Breakable';
import { Coded } from './Coded';
import { CopyButton } from './CopyButton';
import { ErrorCallout } from './ErrorCallout';
import { AlertIcon, ArrowRightIcon, BoxIcon, CheckIcon, CrossIcon, FolderIcon, InfoIcon, TrashIcon, UploadIcon } from './icons';
import { JobCard } from './JobCard';
import { StatusDot, statusText } from './Sidebar';

const STEPS: { id: WizardStep; label: string }[] = [
  { id: 'choose', label: 'Choose archives' },
  { id: 'review', label: 'Review contents' },
  { id: 'nodes', label: 'Choose nodes' },
  { id: 'run', label: 'Run' },
  { id: 'summary', label: 'Summary' },
];

function Stepper({ step, onGo }: { step: WizardStep; onGo(step: WizardStep): void }) {
  const at = STEPS.findIndex((s) => s.id === step);
  const started = at >= 3;
  return (
    <ol className="stepper" aria-label="Import steps">
      {STEPS.map((s, i) => {
        const done = i < at;
        // Before the run the user may go back to any earlier step; after it, the past is fixed.
        const canGo = done && !started;
        const content = (
          <>
            <span className="stepper-num" aria-hidden="true">
              {done ? <CheckIcon /> : i + 1}
            </span>
            <span className="stepper-label">{s.label}</span>
          </>
        );
        return (
          <li key={s.id} className={`stepper-step${i === at ? ' current' : ''}${done ? ' done' : ''}`} aria-current={i === at ? 'step' : undefined}>
            {canGo ? (
              <button type="button" className="stepper-btn" onClick={() => onGo(s.id)}>
                {content}
                <span className="visually-hidden"> (go back)</span>
              </button>
            ) : (
              <span className="stepper-btn">{content}</span>
            )}
          </li>
        );
      })}
    </ol>
  );
}

function draftSummary(a: DraftArchive): string {
  if (a.state === 'inspecting') return 'Checking…';
  if (a.state === 'ok' && a.archive) {
    const w = a.archive.warnings?.length ?? 0;
    return `${a.archive.format} · ${compressionName(a.archive.compression)} · ${humanSize(a.archive.size)} · ${plural(a.archive.images.length, 'image')}${w ? ` · ${plural(w, 'warning')}` : ''}`;
  }
  return a.state === 'refused' ? 'Refused' : 'Cannot be read';
}

// ---------------------------------------------------------------------------------------------
// Step 1: choose archives

function ChooseStep({ onNext }: { onNext(): void }) {
  const archives = useApp((s) => s.wizard.archives);
  const addArchivePaths = useApp((s) => s.addArchivePaths);
  const removeArchivePath = useApp((s) => s.removeArchivePath);
  const pickArchives = useApp((s) => s.pickArchives);
  const pathForFile = useApp((s) => s.pathForFile);
  const desktop = pathForFile !== null;
  const [text, setText] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [dialogError, setDialogError] = useState<ErrorInfo | null>(null);
  const [dropNote, setDropNote] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [picking, setPicking] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const fieldId = useId();
  const helpId = useId();

  const add = (paths: string[]) => {
    const bad = paths.filter((p) => !isAbsoluteLocalPath(p));
    if (bad.length) {
      setFieldError(`Type the full path, starting with "/" (or a drive letter on Windows): ${bad[0]}`);
      return false;
    }
    setFieldError(null);
    addArchivePaths(paths);
    return true;
  };
  const submit = () => {
    const paths = parsePathInput(text);
    if (paths.length === 0) {
      setFieldError('Type the full path of an archive on this machine.');
      return;
    }
    if (add(paths)) setText('');
  };
  const onPaste = (e: ClipboardEvent<HTMLInputElement>) => {
    const t = e.clipboardData.getData('text');
    if (!/\r?\n/.test(t.trim())) return;
    // Several paths at once (one per line): add them all.
    e.preventDefault();
    add(parsePathInput(t));
  };
  const pick = async () => {
    setPicking(true);
    const err = await pickArchives();
    setPicking(false);
    setDialogError(err);
    if (err) inputRef.current?.focus();
  };
  const onDragOver = (e: DragEvent) => {
    // Always take the drop: otherwise the browser would navigate to the dropped file.
    e.preventDefault();
    e.dataTransfer.dropEffect = desktop ? 'copy' : 'none';
    setDragging(true);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = [...e.dataTransfer.files];
    if (!desktop) {
      setDropNote('A browser does not tell Holdfast where a dropped file is on disk. Type or paste its full path in the field below instead.');
      inputRef.current?.focus();
      return;
    }
    const paths = files.map((f) => pathForFile(f)).filter(Boolean);
    if (paths.length === 0) {
      setDropNote('Nothing usable was dropped: drop archive files from your file manager, or type their paths below.');
      return;
    }
    setDropNote(paths.length < files.length ? 'Some dropped items are not files on this machine and were left out.' : null);
    add(paths);
  };

  const ok = archives.filter((a) => a.state === 'ok').length;

  return (
    <section className="wizard-step" aria-labelledby="step-title" onDragOver={onDragOver} onDragLeave={() => setDragging(false)} onDrop={onDrop}>
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Choose the archives to import
      </h2>
      <p className="muted step-lead">
        Image archives as k3s imports them: <code>.tar</code>, <code>.tar.gz</code>/<code>.tgz</code>,{' '}
        <code>.tar.zst</code>/<code>.tzst</code>, <code>.tar.bz2</code>/<code>.tbz</code> or <code>.tar.lz4</code> (docker save or OCI
        layout). Each one is checked on this machine before any byte is sent.
      </p>

      {desktop ? (
        <div className={`dropzone${dragging ? ' dragging' : ''}`} data-testid="dropzone">
          <UploadIcon className="dropzone-icon" />
          <p>
            <strong>Drop archives here</strong>
          </p>
          <p className="muted small">or</p>
          <button type="button" className="btn btn-primary" onClick={() => void pick()} disabled={picking}>
            <FolderIcon /> {picking ? 'Choosing…' : 'Choose files…'}
          </button>
        </div>
      ) : (
        <div className="note" data-testid="browser-note">
          <InfoIcon />
          <span>
            In the browser there is no file dialog, and a dropped file has no path Holdfast could read. Type or paste the
            full path of each archive on this machine.
          </span>
        </div>
      )}
      {dialogError ? (
        <ErrorCallout error={dialogError} title="No file dialog" testId="dialog-error">
          <p>Type or paste the path in the field below instead.</p>
        </ErrorCallout>
      ) : null}
      {dropNote ? (
        <div className="note note-warning" role="status" data-testid="drop-note">
          <AlertIcon />
          <span>{dropNote}</span>
        </div>
      ) : null}

      <form
        className="path-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <div className="field">
          <label htmlFor={fieldId}>Archive path</label>
          <div className="path-row">
            <input
              ref={inputRef}
              id={fieldId}
              className="mono"
              type="text"
              value={text}
              spellCheck={false}
              autoComplete="off"
              placeholder="/home/tech/bundles/site-apps-2.4.tar.gz"
              aria-describedby={helpId}
              aria-invalid={fieldError ? true : undefined}
              onChange={(e) => {
                setText(e.target.value);
                setFieldError(null);
              }}
              onPaste={onPaste}
            />
            <button type="submit" className="btn">
              Add
            </button>
          </div>
          {fieldError ? (
            <p className="field-error" role="alert">
              {fieldError}
            </p>
          ) : (
            <p className="help" id={helpId}>
              The full path on the machine running Holdfast. Press Enter to add it; paste several lines to add several.
            </p>
          )}
        </div>
      </form>

      {archives.length ? (
        <ul className="chosen" aria-label="Chosen archives" data-testid="chosen-list">
          {archives.map((a) => (
            <li key={a.path} className={`chosen-item chosen-${a.state}`} data-testid="chosen-archive" data-path={a.path}>
              {a.state === 'inspecting' ? (
                <span className="spinner spinner-inline" aria-hidden="true" />
              ) : a.state === 'ok' ? (
                <CheckIcon className="st-icon st-ok" />
              ) : (
                <CrossIcon className="st-icon st-failed" />
              )}
              <span className="chosen-text">
                <code className="chosen-path">{breakable(a.path)}</code>
                <span className="chosen-summary small">{draftSummary(a)}</span>
              </span>
              <button type="button" className="btn btn-small btn-quiet" onClick={() => removeArchivePath(a.path)} aria-label={`Remove ${a.path} from the list`}>
                <TrashIcon />
              </button>
            </li>
          ))}
        </ul>
      ) : null}

      <div className="wizard-actions">
        <span className="muted small">
          {archives.length ? `${archives.length} chosen${ok !== archives.length ? `, ${ok} checked so far` : ''}` : 'Nothing chosen yet'}
        </span>
        <div className="spacer" />
        <button type="button" className="btn btn-primary" disabled={archives.length === 0} onClick={onNext}>
          Next: review contents <ArrowRightIcon />
        </button>
      </div>
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// Step 2: review contents

function ArchiveReview({ a }: { a: DraftArchive }) {
  const remove = useApp((s) => s.removeArchivePath);
  const name = basename(a.path);
  if (a.state === 'inspecting') {
    return (
      <article className="review-card" data-testid="review-archive" data-state="inspecting" aria-label={name}>
        <div className="review-head">
          <BoxIcon className="review-icon" />
          <h3 className="review-name">{name}</h3>
        </div>
        <p className="dialog-loading">
          <span className="spinner" aria-hidden="true" /> Reading the archive and computing its SHA-256…
        </p>
      </article>
    );
  }
  if (a.state !== 'ok' || !a.archive) {
    return (
      <article className="review-card review-refused" data-testid="review-archive" data-state={a.state} aria-label={name}>
        <div className="review-head">
          <CrossIcon className="review-icon" />
          <div className="review-title">
            <h3 className="review-name">{name}</h3>
            <code className="muted small">{breakable(a.path)}</code>
          </div>
          <span className="tag tag-danger" data-testid="excluded">
            {a.state === 'refused' ? 'Refused · excluded' : 'Excluded'}
          </span>
        </div>
        <div className="review-reason" data-testid="refused-reason">
          <strong>{a.error?.message ?? 'The archive could not be read.'}</strong>
          {a.error?.hint ? <p>{a.error.hint}</p> : null}
        </div>
        <div>
          <button type="button" className="btn btn-small" onClick={() => remove(a.path)}>
            Remove from the list
          </button>
        </div>
      </article>
    );
  }
  const ar = a.archive;
  return (
    <article className="review-card" data-testid="review-archive" data-state="ok" aria-label={name}>
      <div className="review-head">
        <BoxIcon className="review-icon review-icon-ok" />
        <div className="review-title">
          <h3 className="review-name">{name}</h3>
          <code className="muted small">{breakable(ar.path)}</code>
        </div>
      </div>
      <dl className="review-facts">
        <div>
          <dt>Format</dt>
          <dd data-testid="review-format">{ar.format === 'oci' ? 'OCI layout' : 'docker save'}</dd>
        </div>
        <div>
          <dt>Compression</dt>
          <dd data-testid="review-compression">{compressionName(ar.compression)}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd className="num-text" data-testid="review-size">
            {humanSize(ar.size)}
            {ar.uncompressedBytes > ar.size ? <span className="muted"> ({humanSize(ar.uncompressedBytes)} unpacked)</span> : null}
          </dd>
        </div>
        <div>
          <dt>SHA-256</dt>
          <dd className="sha">
            <code title={ar.sha256} data-testid="review-sha256" data-full={ar.sha256}>
              {ar.sha256.slice(0, 16)}…
            </code>
            <CopyButton text={ar.sha256} label={`Copy the SHA-256 of ${name}`} />
          </dd>
        </div>
      </dl>
      {ar.warnings?.length ? (
        // k3s imports it, but not all of it ends up usable (e.g. a single-platform `ctr export`
        // listing platforms whose blobs it lacks): said before anything is sent.
        <div className="note note-warning review-warnings" role="note" data-testid="review-warnings">
          <AlertIcon />
          <div>
            <strong>{ar.warnings.length === 1 ? 'k3s imports it, with one catch:' : `k3s imports it, with ${ar.warnings.length} catches:`}</strong>
            <ul>
              {ar.warnings.map((w) => (
                <li key={w} data-testid="review-warning">
                  <Coded text={w} />
                </li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
      <table className="mini-table review-images" data-testid="review-images">
        <caption className="visually-hidden">Images in {name}</caption>
        <thead>
          <tr>
            <th scope="col">Image ({ar.images.length})</th>
            <th scope="col">Platforms</th>
          </tr>
        </thead>
        <tbody>
          {ar.images.map((img, i) => (
            <tr key={`${img.name ?? ''}-${i}`} data-testid="review-image">
              <td>{img.name ? <code>{breakable(img.name)}</code> : <span className="muted">untagged ({img.configDigest?.slice(7, 19) ?? '—'})</span>}</td>
              <td className="platforms">
                {sortPlatforms(img.platforms).map((p) => (
                  <span key={p} className="label-chip">
                    {p}
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

function ReviewStep({ onBack, onNext }: { onBack(): void; onNext(): void }) {
  const archives = useApp((s) => s.wizard.archives);
  const ok = archives.filter((a) => a.state === 'ok').length;
  const pending = archives.filter((a) => a.state === 'inspecting').length;
  const excluded = archives.length - ok - pending;
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Review what will be imported
      </h2>
      <p className="muted step-lead">
        This is what k3s will import and pin on each node. Compare the SHA-256 with the one published with the bundle.
      </p>
      <div className="review-list">
        {archives.map((a) => (
          <ArchiveReview key={a.path} a={a} />
        ))}
      </div>
      <div className="wizard-actions">
        <button type="button" className="btn" onClick={onBack}>
          Back
        </button>
        <span className="muted small" data-testid="review-summary">
          {pending ? `Checking ${pending}…` : `${ok} to import${excluded ? `, ${excluded} excluded` : ''}`}
        </span>
        <div className="spacer" />
        <button type="button" className="btn btn-primary" disabled={ok === 0 || pending > 0} onClick={onNext}>
          Next: choose nodes <ArrowRightIcon />
        </button>
      </div>
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// Step 3: choose nodes and options

function NodesStep({ onBack }: { onBack(): void }) {
  const nodes = useApp((s) => s.nodes);
  const wizard = useApp((s) => s.wizard);
  const statuses = useApp((s) => s.statuses);
  const setWizard = useApp((s) => s.setWizard);
  const startImports = useApp((s) => s.startImports);
  const allRef = useRef<HTMLInputElement>(null);
  const chosen = new Set(wizard.nodes.filter((n) => nodes.some((d) => d.name === n)));
  const all = nodes.length > 0 && chosen.size === nodes.length;
  const some = chosen.size > 0 && !all;
  const ready = wizard.archives.filter((a) => a.state === 'ok').length;
  const removeReasonId = useId();

  useEffect(() => {
    if (allRef.current) allRef.current.indeterminate = some;
  }, [some]);

  const toggle = (name: string, on: boolean) => setWizard({ nodes: on ? [...chosen, name] : [...chosen].filter((n) => n !== name) });

  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Choose the nodes
      </h2>
      <fieldset className="node-pick">
        <legend className="visually-hidden">Nodes to import to</legend>
        <label className="check check-all">
          <input ref={allRef} type="checkbox" checked={all} onChange={(e) => setWizard({ nodes: e.target.checked ? nodes.map((n) => n.name) : [] })} />
          <span>Select all ({nodes.length})</span>
        </label>
        <ul className="node-checks">
          {nodes.map((n) => {
            const status = statuses[n.name] ?? { name: n.name, state: 'unknown' as const };
            return (
              <li key={n.name}>
                <label className="check node-check" data-testid={`pick-node-${n.name}`}>
                  <input type="checkbox" checked={chosen.has(n.name)} onChange={(e) => toggle(n.name, e.target.checked)} />
                  <span className="node-check-text">
                    <strong>{n.name}</strong>
                    <span className="mono small muted">
                      {n.user}@{n.host}
                      {n.port !== 22 ? `:${n.port}` : ''}
                    </span>
                  </span>
                  <span className={`node-check-status state-${status.state}`}>
                    <StatusDot state={status.state} /> {statusText(status)}
                  </span>
                </label>
              </li>
            );
          })}
        </ul>
        {nodes.length === 0 ? <p className="muted">No nodes configured yet: add one first.</p> : null}
      </fieldset>
      {[...chosen].some((n) => statuses[n]?.state === 'error') ? (
        <div className="note note-warning">
          <AlertIcon />
          <span>Some chosen nodes are not connected now. Holdfast connects again when the import starts; if that fails, that node's part fails and the others go on.</span>
        </div>
      ) : null}

      <fieldset className="options">
        <legend>Options</legend>
        <label className="check option">
          <input type="checkbox" checked={wizard.pin} onChange={(e) => setWizard({ pin: e.target.checked, removeArchive: e.target.checked })} />
          <span>
            <strong>Make pins durable</strong>
            <span className="help">
              After k3s imports the archive, its images keep only <code>io.cri-containerd.pinned</code>: k3s never strips that
              pin at a restart, and kubelet never garbage-collects the images.
            </span>
          </span>
        </label>
        <label className={`check option${wizard.pin ? '' : ' option-disabled'}`}>
          <input
            type="checkbox"
            checked={wizard.pin && wizard.removeArchive}
            disabled={!wizard.pin}
            aria-describedby={removeReasonId}
            onChange={(e) => setWizard({ removeArchive: e.target.checked })}
          />
          <span>
            <strong>Remove the archive after it is safely pinned</strong>
            <span className="help" id={removeReasonId}>
              {wizard.pin
                ? 'Frees the disk and stops the next k3s start from re-importing it (which would turn durable pins back into k3s pins). Only removed once every image is complete and durably pinned.'
                : 'Needs durable pins: without them, removing the archive means the images lose their pin at the next k3s start.'}
            </span>
          </span>
        </label>
      </fieldset>
      <StartErrors />

      <div className="wizard-actions">
        <button type="button" className="btn" onClick={onBack}>
          Back
        </button>
        <div className="spacer" />
        <button type="button" className="btn btn-primary" disabled={chosen.size === 0 || ready === 0 || wizard.starting} onClick={() => void startImports()}>
          <UploadIcon />
          {wizard.starting
            ? 'Starting…'
            : `Import ${ready} ${ready === 1 ? 'archive' : 'archives'} to ${chosen.size} ${chosen.size === 1 ? 'node' : 'nodes'}`}
        </button>
      </div>
    </section>
  );
}

function StartErrors() {
  const errors = useApp((s) => s.wizard.startErrors);
  return (
    <>
      {errors.map((e) => (
        <ErrorCallout key={e.path} error={e.error} title={`${basename(e.path)} was not started`} testId="start-error" />
      ))}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Steps 4 and 5: run and summary

function useWizardJobs(): (Job | undefined)[] {
  const jobIds = useApp((s) => s.wizard.jobIds);
  const jobs = useApp((s) => s.jobs);
  return useMemo(() => jobIds.map((id) => jobs.find((j) => j.id === id)), [jobIds, jobs]);
}

function RunStep() {
  const jobs = useWizardJobs();
  const cancelJob = useApp((s) => s.cancelJob);
  const closeImport = useApp((s) => s.closeImport);
  const [error, setError] = useState<ErrorInfo | null>(null);
  const running = jobs.filter((j) => j && !isJobFinished(j.state));
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Importing
      </h2>
      <p className="muted step-lead">
        Each node: check what it has → upload (resumable, SHA-256 verified) → wait for k3s to import → make the pins durable →
        remove the archive safely. You can leave this page: the import goes on, and the jobs panel in the sidebar follows it.
      </p>
      {error ? <ErrorCallout error={error} title="Could not cancel" /> : null}
      <StartErrors />
      <div className="job-list" aria-live="off">
        {jobs.map((j, i) => (j ? <JobCard key={j.id} job={j} onCancel={(id) => void cancelJob(id).then(setError)} /> : <p key={i}>Waiting for the job…</p>))}
      </div>
      <div className="wizard-actions">
        <span className="muted small" role="status">
          {running.length ? `${running.length} of ${jobs.length} still running` : 'All finished'}
        </span>
        <div className="spacer" />
        <button type="button" className="btn" onClick={closeImport}>
          Continue in the background
        </button>
      </div>
    </section>
  );
}

function SummaryStep() {
  const jobs = useWizardJobs();
  const select = useApp((s) => s.select);
  const retryJob = useApp((s) => s.retryJob);
  const resetImport = useApp((s) => s.resetImport);
  const closeImport = useApp((s) => s.closeImport);
  const [errors, setErrors] = useState<Record<string, ErrorInfo | null>>({});
  const results = jobs.flatMap((j) => (j ? j.nodes : []));
  const ok = results.filter((n) => n.state === 'succeeded').length;
  const failed = results.length - ok;
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Summary
      </h2>
      <div className={`callout ${failed ? 'callout-warning' : 'callout-success'}`} data-testid="summary-banner">
        <strong>
          {failed
            ? `${ok} of ${results.length} imports succeeded, ${failed} did not.`
            : `All ${results.length} ${results.length === 1 ? 'import' : 'imports'} succeeded.`}
        </strong>
        {failed ? <p>Running an import again is safe: it picks up where it stopped and skips what is already done.</p> : null}
      </div>
      <StartErrors />
      {jobs.map((j) =>
        j ? (
          <article key={j.id} className="summary-job" data-testid="summary-job" aria-label={basename(j.archive.path)}>
            <header className="summary-job-head">
              <h3>
                <code>{basename(j.archive.path)}</code>
              </h3>
              {nodesToRetry(j).length ? (
                <button type="button" className="btn btn-small" onClick={() => void retryJob(j.id).then((e) => setErrors((x) => ({ ...x, [j.id]: e })))}>
                  Run again on {nodesToRetry(j).length === 1 ? nodesToRetry(j)[0] : `${nodesToRetry(j).length} failed nodes`}
                </button>
              ) : null}
            </header>
            {errors[j.id] ? <ErrorCallout error={errors[j.id]!} title="Could not start again" /> : null}
            <ul className="summary-nodes">
              {j.nodes.map((n) => (
                <li key={n.node} className={`summary-node summary-${n.state}`} data-testid="summary-node" data-node={n.node} data-state={n.state}>
                  {n.state === 'succeeded' ? <CheckIcon className="st-icon st-ok" /> : <CrossIcon className="st-icon st-failed" />}
                  <div className="summary-node-text">
                    <p>
                      <strong>{n.node}</strong>{' '}
                      <span className={n.state === 'succeeded' ? 'yn yn-yes' : 'yn yn-no'}>{n.state === 'succeeded' ? 'OK' : n.state === 'cancelled' ? 'Cancelled' : 'Failed'}</span>
                    </p>
                    <p className="muted small" data-testid="summary-message">
                      {n.error ? n.error.message : n.message}
                    </p>
                    {n.error?.hint ? <p className="hint small">{n.error.hint}</p> : null}
                  </div>
                  <button type="button" className="btn btn-small" onClick={() => select(n.node)}>
                    Open {n.node}'s images
                  </button>
                </li>
              ))}
            </ul>
          </article>
        ) : null,
      )}
      <div className="wizard-actions">
        <button type="button" className="btn" onClick={resetImport}>
          Import more archives
        </button>
        <div className="spacer" />
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => {
            resetImport();
            closeImport();
          }}
        >
          Done
        </button>
      </div>
    </section>
  );
}

export function ImportWizard() {
  const step = useApp((s) => s.wizard.step);
  const setWizard = useApp((s) => s.setWizard);
  const closeImport = useApp((s) => s.closeImport);
  // Move focus to the new step's heading so keyboard and screen-reader users follow along.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('step-title')?.focus();
  }, [step]);

  return (
    <main className="detail wizard" aria-labelledby="wizard-title" data-testid="import-wizard" data-step={step}>
      <header className="detail-head wizard-head">
        <div className="detail-title">
          <UploadIcon className="detail-icon" />
          <div>
            <h1 id="wizard-title">
              Import archives
            </h1>
            <p className="muted small">Upload image archives, let k3s import them, make the pins durable, remove the archives safely.</p>
          </div>
        </div>
        <div className="detail-actions">
          <button type="button" className="btn" onClick={closeImport}>
            Close
          </button>
        </div>
      </header>
      <div className="detail-body wizard-body">
        <Stepper step={step} onGo={(s) => setWizard({ step: s })} />
        {step === 'choose' ? <ChooseStep onNext={() => setWizard({ step: 'review' })} /> : null}
        {step === 'review' ? <ReviewStep onBack={() => setWizard({ step: 'choose' })} onNext={() => setWizard({ step: 'nodes' })} /> : null}
        {step === 'nodes' ? <NodesStep onBack={() => setWizard({ step: 'review' })} /> : null}
        {step === 'run' ? <RunStep /> : null}
        {step === 'summary' ? <SummaryStep /> : null}
      </div>
    </main>
  );
}
