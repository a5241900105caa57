import type { ReactNode } from 'react';
import type { ErrorInfo } from '../../shared/domain';

/** An error from an envelope: message, the hint when there is one, and the code for support. */
export function ErrorCallout({ error, title, children, testId }: { error: ErrorInfo; title?: string; children?: ReactNode; testId?: string }) {
  return (
    <div className="callout callout-error" role="alert" data-testid={testId ?? 'error-callout'}>
      <strong>
        {title ? `${title}: ` : ''}
        {error.message}
      </strong>
      {error.hint ? <p>{error.hint}</p> : null}
      <p className="error-code">
        Error code <code>{error.code}</code>
      </p>
      {children}
    </div>
  );
}

/** A short error under a form or an action (message and hint, no code); nothing when there is none. */
export function ErrorNote({ error }: { error: ErrorInfo | null }) {
  if (!error) return null;
  return (
    <div className="callout callout-error" role="alert">
      <strong>{error.message}</strong>
      {error.hint ? <p>{error.hint}</p> : null}
    </div>
  );
}
