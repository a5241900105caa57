// The review step's signatures (#48): the keys (and bundles) to verify with, "Check signatures",
// which reads every readable archive on this machine and sends nothing, and each image's verdict
// in the one plain-words sentence. The step's Next waits while an image is refused
// (model/signatures signaturesBlocked), unless unverified images are allowed.
import { isRefused } from '../../../shared/signatures';
import { plural } from '../../../shared/wording';
import { useApp } from '../../context';
import { basename } from '../../model/paths';
import { ALLOW_UNSIGNED_LABEL, verdictSentence } from '../../model/signatures';
import type { SignatureCheckState } from '../../store';
import { breakable } from '../Breakable';
import { ErrorCallout } from '../ErrorCallout';
import { CheckIcon, CrossIcon, ShieldIcon } from '../icons';
import { SignatureFiles } from './SignatureFiles';

function ArchiveVerdicts({ path, state }: { path: string; state: SignatureCheckState | undefined }) {
  const name = basename(path);
  if (!state) return null;
  if (!state.ok) return <ErrorCallout error={state.error} title={`The signatures of ${name} could not be checked`} testId="sig-check-error" />;
  const refused = state.check.images.filter(isRefused).length;
  return (
    <table className="mini-table sig-verdicts" data-testid="sig-archive" data-path={path}>
      <caption>
        {name}: {refused ? `${plural(refused, 'image')} not verified` : `${state.check.images.length === 1 ? '' : 'all '}${plural(state.check.images.length, 'image')} verified`}
      </caption>
      <thead>
        <tr>
          <th scope="col">Image</th>
          <th scope="col">Signature</th>
        </tr>
      </thead>
      <tbody>
        {state.check.images.map((i) => (
          <tr key={i.name} data-testid="sig-image" data-image={i.name} data-verified={isRefused(i) ? 'false' : 'true'}>
            <td>
              <code>{breakable(i.name)}</code>
            </td>
            <td className={isRefused(i) ? 'sig-refused' : 'sig-verified'}>
              {isRefused(i) ? <CrossIcon className="st-icon st-failed" /> : <CheckIcon className="st-icon st-ok" />}{' '}
              <span data-testid="sig-verdict">{verdictSentence(i)}</span>
              {i.reference ? (
                <span className={`tag ${i.reference.level === 'error' ? 'tag-danger' : 'tag-warning'}`} data-testid="sig-reference">
                  {i.reference.text}
                </span>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SignaturesPanel() {
  const archives = useApp((s) => s.wizard.archives);
  const sig = useApp((s) => s.wizard.signatures);
  const check = useApp((s) => s.checkSignatures);
  const setAllowUnsigned = useApp((s) => s.setAllowUnsigned);
  const ready = archives.filter((a) => a.state === 'ok');
  const checked = ready.filter((a) => sig.checks[a.path]).length;
  return (
    <section className="review-card sig-panel" data-testid="signatures" aria-labelledby="sig-title">
      <div className="review-head">
        <ShieldIcon className="review-icon" />
        <div className="review-title">
          <h3 className="review-name" id="sig-title">
            Signatures
          </h3>
          <p className="muted small">
            Add the public keys the images were signed with, then check them. Each image is verified on this machine; nothing is
            sent. Without a key, the images are imported without a signature check.
          </p>
        </div>
      </div>
      <SignatureFiles kind="keys" />
      <SignatureFiles kind="bundles" />
      <div className="sig-actions">
        <button type="button" className="btn btn-primary" disabled={sig.keys.length === 0 || sig.checking || ready.length === 0} onClick={() => void check()}>
          <ShieldIcon /> Check signatures
        </button>
        <span className="muted small" role="status" data-testid="sig-status">
          {sig.keys.length === 0
            ? 'Add a public key to check signatures.'
            : sig.checking
              ? 'Checking signatures on this machine…'
              : checked
                ? `Checked ${plural(checked, 'archive')} with ${plural(sig.keys.length, 'key')}.`
                : 'Not checked yet.'}
        </span>
      </div>
      {ready.map((a) => (
        <ArchiveVerdicts key={a.path} path={a.path} state={sig.checks[a.path]} />
      ))}
      {sig.keys.length ? (
        <label className="check">
          <input type="checkbox" checked={sig.allowUnsigned} onChange={(e) => setAllowUnsigned(e.target.checked)} />
          <span>{ALLOW_UNSIGNED_LABEL}</span>
        </label>
      ) : null}
    </section>
  );
}
