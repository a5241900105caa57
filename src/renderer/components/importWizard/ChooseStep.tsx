// Step 1 of the import wizard: choose archives on this machine (typed or pasted paths, the native
// file dialog or a drop on the desktop), each inspected locally before any byte is sent.
import { useId, useRef, useState, type ClipboardEvent, type DragEvent } from 'react';
import type { ErrorInfo } from '../../../shared/domain/errors';
import { compressionName, plural } from '../../../shared/wording';
import { useApp } from '../../context';
import { formatBytes } from '../../../shared/format';
import { isAbsoluteLocalPath, parsePathInput } from '../../model/paths';
import type { DraftArchive } from '../../store';
import { breakable } from '../Breakable';
import { ErrorCallout } from '../ErrorCallout';
import { AlertIcon, ArrowRightIcon, CheckIcon, CrossIcon, FolderIcon, InfoIcon, TrashIcon, UploadIcon } from '../icons';
import { archiveReason } from './archiveReason';
import { PathField } from './PathField';

function draftSummary(a: DraftArchive): string {
  if (a.state === 'inspecting') return 'Checking…';
  if (a.state === 'ok' && a.archive) {
    const w = a.archive.warnings?.length ?? 0;
    return `${a.archive.format} · ${compressionName(a.archive.compression)} · ${formatBytes(a.archive.size)} · ${plural(a.archive.images.length, 'image')}${w ? ` · ${plural(w, 'warning')}` : ''}`;
  }
  return a.state === 'refused' ? 'Refused' : 'Cannot be read';
}

/**
 * A refused or unreadable archive: the verdict and why in one short clause on its line; the
 * whole message and what to do on hover, and when the clause is opened (keyboard, touch).
 */
function DraftProblem({ a }: { a: DraftArchive }) {
  const why = archiveReason(a.path, a.error);
  return (
    <details className="chosen-why" data-testid="chosen-reason">
      <summary className="chosen-summary small" title={why.long}>
        {draftSummary(a)} · <span data-testid="chosen-reason-short">{why.short}</span>
      </summary>
      <div className="chosen-why-long" data-testid="chosen-reason-long">
        <p>{a.error?.message ?? why.long}</p>
        {a.error?.hint ? <p className="muted">{a.error.hint}</p> : null}
      </div>
    </details>
  );
}

/** Why "Next" cannot be pressed yet, or null when it can. */
function nextBlocked(archives: readonly DraftArchive[]): string | null {
  if (archives.some((a) => a.state === 'ok')) return null;
  if (archives.length === 0) return 'Add an archive to go on.';
  const checking = archives.filter((a) => a.state === 'inspecting').length;
  if (checking) return `Checking ${plural(checking, 'archive')}: Next opens once one can be imported.`;
  return archives.length === 1
    ? 'This archive cannot be imported: remove it, or add another.'
    : 'None of these archives can be imported: remove them, or add another.';
}

export function ChooseStep({ onNext }: { onNext(): void }) {
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
  const blocked = nextBlocked(archives);
  const blockedId = useId();

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

      <DropSource desktop={desktop} dragging={dragging} picking={picking} onPick={() => void pick()} />
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

      <PathField
        label="Archive path"
        placeholder="/home/tech/bundles/site-apps-2.4.tar.gz"
        help="The full path on the machine running Holdfast. Press Enter to add it; paste several lines to add several."
        text={text}
        error={fieldError}
        onText={(t) => {
          setText(t);
          setFieldError(null);
        }}
        onSubmit={submit}
        onPaste={onPaste}
        inputRef={inputRef}
      />

      <ChosenList archives={archives} onRemove={removeArchivePath} />

      <div className="wizard-actions">
        <span className="muted small" data-testid="choose-status">
          {archives.length ? `${archives.length} chosen${ok !== archives.length ? `, ${ok} can be imported` : ''}` : 'Nothing chosen yet'}
        </span>
        <div className="spacer" />
        {blocked ? (
          <span className="small next-blocked" id={blockedId} data-testid="next-blocked">
            {blocked}
          </span>
        ) : null}
        <button type="button" className="btn btn-primary" disabled={blocked !== null} aria-describedby={blocked ? blockedId : undefined} onClick={onNext}>
          Next: review contents <ArrowRightIcon />
        </button>
      </div>
    </section>
  );
}

/** On the desktop, where archives are dropped or picked in a file dialog; in a browser, why neither works. */
function DropSource(props: { desktop: boolean; dragging: boolean; picking: boolean; onPick(): void }) {
  if (!props.desktop) {
    return (
      <div className="note" data-testid="browser-note">
        <InfoIcon />
        <span>
          In the browser there is no file dialog, and a dropped file has no path Holdfast could read. Type or paste the
          full path of each archive on this machine.
        </span>
      </div>
    );
  }
  return (
    <div className={`dropzone${props.dragging ? ' dragging' : ''}`} data-testid="dropzone">
      <UploadIcon className="dropzone-icon" />
      <p>
        <strong>Drop archives here</strong>
      </p>
      <p className="muted small">or</p>
      <button type="button" className="btn btn-primary" onClick={props.onPick} disabled={props.picking}>
        <FolderIcon /> {props.picking ? 'Choosing…' : 'Choose files…'}
      </button>
    </div>
  );
}

/** The archives chosen so far, each with its check's verdict and a button to remove it. */
function ChosenList({ archives, onRemove }: { archives: readonly DraftArchive[]; onRemove(path: string): void }) {
  if (!archives.length) return null;
  return (
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
          <div className="chosen-text">
            <code className="chosen-path">{breakable(a.path)}</code>
            {a.state === 'refused' || a.state === 'error' ? <DraftProblem a={a} /> : <span className="chosen-summary small">{draftSummary(a)}</span>}
          </div>
          <button type="button" className="btn btn-small btn-quiet" onClick={() => onRemove(a.path)} aria-label={`Remove ${a.path} from the list`}>
            <TrashIcon />
          </button>
        </li>
      ))}
    </ul>
  );
}
