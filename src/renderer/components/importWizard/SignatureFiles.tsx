// The public key files (or detached bundle files) the wizard verifies with (#48): typed or pasted
// paths, or the desktop's file dialog through main, which answers with paths only.
import { useState } from 'react';
import type { ErrorInfo } from '../../../shared/domain/errors';
import { useApp } from '../../context';
import { isAbsoluteLocalPath, parsePathInput } from '../../model/paths';
import type { SignatureFileKind } from '../../store';
import { breakable } from '../Breakable';
import { ErrorCallout } from '../ErrorCallout';
import { FolderIcon, KeyIcon, TrashIcon } from '../icons';
import { PathField } from './PathField';

const TEXT: Record<SignatureFileKind, { label: string; placeholder: string; help: string; choose: string }> = {
  keys: {
    label: 'Public key file',
    placeholder: '/home/tech/keys/cosign.pub',
    help: "cosign's .pub file (ECDSA, RSA or Ed25519 PEM). Any one key suffices for an image.",
    choose: 'Choose key files…',
  },
  bundles: {
    label: 'Bundle file (optional)',
    placeholder: '/home/tech/bundles/site-web.sigstore.json',
    help: "Signatures carried beside the archive (cosign sign --bundle), matched by the digest they sign.",
    choose: 'Choose bundle files…',
  },
};

export function SignatureFiles({ kind }: { kind: SignatureFileKind }) {
  const files = useApp((s) => s.wizard.signatures[kind]);
  const add = useApp((s) => s.addSignatureFiles);
  const remove = useApp((s) => s.removeSignatureFile);
  const pick = useApp((s) => s.pickSignatureFiles);
  const desktop = useApp((s) => s.pathForFile !== null);
  const [text, setText] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [dialogError, setDialogError] = useState<ErrorInfo | null>(null);
  const t = TEXT[kind];

  const submit = () => {
    const paths = parsePathInput(text);
    const bad = paths.find((p) => !isAbsoluteLocalPath(p));
    if (paths.length === 0 || bad !== undefined) {
      setFieldError(bad ? `Type the full path, starting with "/" (or a drive letter on Windows): ${bad}` : 'Type the full path of a file on this machine.');
      return;
    }
    add(kind, paths);
    setText('');
    setFieldError(null);
  };

  return (
    <div className="sig-files" data-testid={`sig-${kind}`}>
      <PathField
        label={t.label}
        placeholder={t.placeholder}
        help={t.help}
        text={text}
        error={fieldError}
        onText={(v) => {
          setText(v);
          setFieldError(null);
        }}
        onSubmit={submit}
      >
        {desktop ? (
          <button type="button" className="btn" onClick={() => void pick(kind).then(setDialogError)}>
            <FolderIcon /> {t.choose}
          </button>
        ) : null}
      </PathField>
      {dialogError ? <ErrorCallout error={dialogError} title="No file dialog" testId="sig-dialog-error" /> : null}
      {files.length ? (
        <ul className="chosen" aria-label={kind === 'keys' ? 'Public keys' : 'Bundles'}>
          {files.map((f) => (
            <li key={f} className="chosen-item" data-testid="sig-file" data-path={f}>
              <KeyIcon className="st-icon" />
              <div className="chosen-text">
                <code className="chosen-path">{breakable(f)}</code>
              </div>
              <button type="button" className="btn btn-small btn-quiet" onClick={() => remove(kind, f)} aria-label={`Remove ${f} from the list`}>
                <TrashIcon />
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
