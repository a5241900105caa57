// The parts of a preview-then-apply dialog (pins, prune) that do not depend on what is planned:
// the body while planning or when planning failed, and the footer — Cancel and the apply button
// while there is something to decide, one Close once it is done or failed. One home, so both
// dialogs announce, retry, disable and label the same way.
import type { ReactNode } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import { ErrorCallout } from './ErrorCallout';
import type { PlanApplyPhase } from './usePlanApply';

/** The body while the plan is being made, or when it could not be (with Try again). */
export function PlanPending(props: { phase: { kind: 'planning' } | { kind: 'failed'; error: ErrorInfo }; working: string; testId: string; onRetry(): void }) {
  if (props.phase.kind === 'planning') {
    return (
      <div className="dialog-loading" aria-live="polite" data-testid={props.testId}>
        <span className="spinner" aria-hidden="true" />
        <p>{props.working}</p>
      </div>
    );
  }
  return (
    <ErrorCallout error={props.phase.error} title="Could not prepare the preview">
      <button type="button" className="btn btn-small" onClick={props.onRetry}>
        Try again
      </button>
    </ErrorCallout>
  );
}

/** Why applying failed, under the preview it failed to apply (the preview stays to try again). */
export function ApplyError({ phase, title }: { phase: PlanApplyPhase<unknown, unknown>; title: string }) {
  return phase.kind === 'preview' && phase.error ? <ErrorCallout error={phase.error} title={title} /> : null;
}

export function PreviewApplyActions(props: {
  /** Done or failed: only Close is offered. */
  finished: boolean;
  busy: boolean;
  /** The apply button may be pressed (a plan with changes, and whatever else the dialog asks). */
  canApply: boolean;
  onApply(): void;
  /** Cancel (may be refused while busy). */
  onCancel(): void;
  onClose(): void;
  /** The apply button's text when idle, and while it runs. */
  label: string;
  busyLabel: string;
  icon?: ReactNode;
  danger?: boolean;
  testId: string;
}) {
  return (
    <div className="modal-actions">
      {props.finished ? (
        <button type="button" className="btn btn-primary" onClick={props.onClose} autoFocus>
          Close
        </button>
      ) : (
        <>
          <button type="button" className="btn" onClick={props.onCancel} disabled={props.busy}>
            Cancel
          </button>
          <button
            type="button"
            className={props.danger ? 'btn btn-danger' : 'btn btn-primary'}
            disabled={!props.canApply || props.busy}
            onClick={props.onApply}
            aria-busy={props.busy || undefined}
            data-testid={props.testId}
          >
            {props.busy ? <span className="spinner spinner-small" aria-hidden="true" /> : (props.icon ?? null)}
            {props.busy ? props.busyLabel : props.label}
          </button>
        </>
      )}
    </div>
  );
}
