import type { ReactNode } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import { visibleControls } from '../../shared/visibleControls';

/**
 * An error's text may quote a node (its stderr, a name): control and bidi characters shown as
 * `\uXXXX` (shared/visibleControls); line feeds kept, as the message laid them out.
 */
export const nodeMessage = (s: string): string => visibleControls(s, { keepLines: true });

/** An error from an envelope: message, the hint when there is one, and the code for support. */
export function ErrorCallout({ error, title, children, testId }: { error: ErrorInfo; title?: string; children?: ReactNode; testId?: string }) {
  return (
    <div className="callout callout-error" role="alert" data-testid={testId ?? 'error-callout'}>
      <strong>
        {title ? `${title}: ` : ''}
        {nodeMessage(error.message)}
      </strong>
      {error.hint ? <p>{nodeMessage(error.hint)}</p> : null}
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
      <strong>{nodeMessage(error.message)}</strong>
      {error.hint ? <p>{nodeMessage(error.hint)}</p> : null}
    </div>
  );
}
