import { useState, type ReactNode } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import { ErrorNote } from './ErrorCallout';
import { Modal } from './Modal';

export function ConfirmDialog(props: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): Promise<ErrorInfo | null>;
  onClose(): void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorInfo | null>(null);
  return (
    <Modal title={props.title} onClose={props.onClose} testId="confirm-dialog" className="modal-narrow">
      <div className="modal-body">{props.children}</div>
      <ErrorNote error={error} />
      <div className="modal-actions">
        <button type="button" className="btn" onClick={props.onClose} autoFocus>
          Cancel
        </button>
        <button
          type="button"
          className={props.danger ? 'btn btn-danger' : 'btn btn-primary'}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            const err = await props.onConfirm();
            setBusy(false);
            if (err) setError(err);
            else props.onClose();
          }}
        >
          {props.confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
