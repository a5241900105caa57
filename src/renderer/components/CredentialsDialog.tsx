// Asks for a secret an SSH connection needs (a key's passphrase, a password, keyboard-interactive
// prompts). The typed answers live only in this dialog's local state and its inputs: on Submit
// or Cancel they are sent once and cleared at once — never put in the store, logged or shown.
// Several open requests queue: the oldest is asked first.
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { CredentialRequest } from '../../shared/domain/connection';
import { useApp } from '../context';
import { KeyIcon } from './icons';
import { Modal } from './Modal';

/** The dialog's title for a request: what is asked, for what. */
export function credentialTitle(r: CredentialRequest): string {
  switch (r.kind) {
    case 'passphrase':
      return `Passphrase for key ${r.subject}`;
    case 'password':
      return `Password for ${r.subject}`;
    default:
      return `Sign in to ${r.subject}`;
  }
}

function CredentialForm({ request, queued }: { request: CredentialRequest; queued: number }) {
  const answer = useApp((s) => s.answerCredentials);
  const formId = useId();
  // One value per prompt; wiped (and the inputs emptied) the moment they are sent.
  const [values, setValues] = useState<string[]>(() => request.prompts.map(() => ''));
  const [sending, setSending] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    formRef.current?.querySelector<HTMLInputElement>('input')?.focus();
  }, []);
  // Leaving (unmount) never keeps what was typed.
  useEffect(() => () => setValues([]), []);

  const send = (answers: string[] | null) => {
    setSending(true);
    setValues(request.prompts.map(() => ''));
    for (const input of formRef.current?.querySelectorAll('input') ?? []) input.value = '';
    void answer(request.id, answers);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send([...values]);
  };

  const hint =
    request.kind === 'passphrase'
      ? 'The key file is encrypted. The passphrase is used to unlock it for this connection only and is not stored.'
      : 'Sent to the node over the SSH connection for this sign-in only; Holdfast does not store it.';

  return (
    <Modal title={credentialTitle(request)} onClose={() => send(null)} testId="credentials-dialog" className="credentials-modal">
      <form ref={formRef} onSubmit={submit} autoComplete="off" noValidate>
        <div className="cred-head">
          <KeyIcon className="cred-icon" />
          <div>
            <p className="cred-subject mono" data-testid="credentials-subject">
              {request.subject}
            </p>
            <p className="muted small">{hint}</p>
          </div>
        </div>
        {request.instructions ? (
          <p className="cred-instructions" data-testid="credentials-instructions">
            {request.instructions}
          </p>
        ) : null}
        {request.prompts.map((p, i) => {
          const id = `${formId}-${i}`;
          return (
            <div className="field" key={i}>
              <label htmlFor={id}>{p.prompt.replace(/:\s*$/, '') || (request.kind === 'passphrase' ? 'Passphrase' : 'Password')}</label>
              <input
                id={id}
                name={`answer-${i}`}
                type={p.echo ? 'text' : 'password'}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
                value={values[i] ?? ''}
                disabled={sending}
                data-testid={`credentials-input-${i}`}
                onChange={(e) => {
                  const v = e.target.value;
                  setValues((prev) => prev.map((x, j) => (j === i ? v : x)));
                }}
              />
            </div>
          );
        })}
        {queued > 0 ? (
          <p className="muted small" data-testid="credentials-queued">
            {queued} more {queued === 1 ? 'request waits' : 'requests wait'} after this one.
          </p>
        ) : null}
        <div className="modal-actions">
          <button type="button" className="btn" onClick={() => send(null)} disabled={sending} data-testid="credentials-cancel">
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={sending} data-testid="credentials-submit">
            {request.kind === 'passphrase' ? 'Unlock' : 'Sign in'}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The oldest open credential request, if any (keyed by id: a new request gets fresh, empty inputs). */
export function CredentialsPrompt() {
  const requests = useApp((s) => s.credentials);
  const first = requests[0];
  if (!first) return null;
  return <CredentialForm key={first.id} request={first} queued={requests.length - 1} />;
}
