// "Save as pin set…" in the fleet matrix (#50): the images the technician ticked become a pin set
// for `holdfast guard`, as its own file or as the ConfigMap deploy/guard.yaml mounts. The service
// writes and checks it (pinset.save); the app saves it through its native dialog, the browser
// under `holdfast serve` downloads it.
import { useId, useState } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import { useApp } from '../context';
import { download } from '../download';
import { Modal } from './Modal';

type Kind = 'pinset' | 'configmap';

/** A pin set name from a group's: lower case, digits and "-" (metadata.name; the service checks it again). */
const nameFrom = (group: string) =>
  group
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'site';

function SavePinSetDialog({ images, group, onClose }: { images: string[]; group: string; onClose(): void }) {
  const save = useApp((s) => s.savePinSet);
  const [name, setName] = useState(nameFrom(group));
  const [as, setAs] = useState<Kind>('pinset');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorInfo | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const nameId = useId();
  const onSave = async () => {
    setBusy(true);
    setError(null);
    const env = await save({ name, images, as });
    setBusy(false);
    if (!env.ok) return setError(env.error);
    if ('download' in env.result) {
      download(env.result.download);
      return setSaved(env.result.download.filename);
    }
    if (env.result.saved) setSaved(env.result.saved);
  };
  return (
    <Modal title="Save as pin set" onClose={onClose} testId="pinset-dialog">
      <div className="modal-body">
        <p className="muted small">
          {images.length === 1 ? '1 image' : `${images.length} images`} for <span className="mono">holdfast guard --pin-set</span>: every node that keeps this set keeps them durable.
        </p>
        <div className="field">
          <label htmlFor={nameId}>Name</label>
          <input id={nameId} value={name} onChange={(e) => (setName(e.target.value), setError(null))} spellCheck={false} data-testid="pinset-name" />
        </div>
        <fieldset className="field pinset-kind">
          <legend>Write it as</legend>
          <label>
            <input type="radio" name="pinset-kind" checked={as === 'pinset'} onChange={() => setAs('pinset')} data-testid="pinset-as-file" /> a pin set file (for the systemd unit)
          </label>
          <label>
            <input type="radio" name="pinset-kind" checked={as === 'configmap'} onChange={() => setAs('configmap')} data-testid="pinset-as-configmap" /> the ConfigMap manifest (namespace holdfast, for the DaemonSet)
          </label>
        </fieldset>
        {error ? (
          <p className="field-error" role="alert" data-testid="pinset-error">
            {error.message}
            {error.hint ? ` ${error.hint}` : ''}
          </p>
        ) : null}
        {saved ? (
          <p className="small" role="status" data-testid="pinset-saved">
            Saved: <span className="mono">{saved}</span>
          </p>
        ) : null}
      </div>
      <div className="modal-actions">
        <button type="button" className="btn" onClick={onClose}>
          {saved ? 'Close' : 'Cancel'}
        </button>
        <button type="button" className="btn btn-primary" onClick={() => void onSave()} disabled={busy || !name} aria-busy={busy || undefined} data-testid="pinset-save">
          {busy ? 'Saving…' : 'Save…'}
        </button>
      </div>
    </Modal>
  );
}

/** The toolbar's button: enabled once an image is ticked; opens the dialog. */
export function SavePinSetButton({ images, group }: { images: string[]; group: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="btn" onClick={() => setOpen(true)} disabled={images.length === 0} data-testid="save-pinset" title="A pin set of the ticked images, for holdfast guard">
        Save as pin set…{images.length ? ` (${images.length})` : ''}
      </button>
      {open ? <SavePinSetDialog images={images} group={group} onClose={() => setOpen(false)} /> : null}
    </>
  );
}
