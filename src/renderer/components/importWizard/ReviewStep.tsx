// Step 2 of the import wizard: what each archive holds (format, compression, size, SHA-256,
// images and platforms, warnings), which archives are refused and left out, and each image's
// signature verdict with the keys the technician adds (SignaturesPanel, #48).
import { compressionName } from '../../../shared/wording';
import { useApp } from '../../context';
import { basename } from '../../model/paths';
import { formatBytes } from '../../../shared/format';
import { sortPlatforms } from '../../model/images';
import type { DraftArchive } from '../../store';
import { breakable } from '../Breakable';
import { Coded } from '../Coded';
import { CopyButton } from '../CopyButton';
import { AlertIcon, ArrowRightIcon, BoxIcon, CrossIcon } from '../icons';
import { signaturesBlocked } from '../../model/signatures';
import { SignaturesPanel } from './SignaturesPanel';

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
            {formatBytes(ar.size)}
            {ar.uncompressedBytes > ar.size ? <span className="muted"> ({formatBytes(ar.uncompressedBytes)} unpacked)</span> : null}
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

export function ReviewStep({ onBack, onNext }: { onBack(): void; onNext(): void }) {
  const archives = useApp((s) => s.wizard.archives);
  const signatures = useApp((s) => s.wizard.signatures);
  const blocked = signaturesBlocked(archives, signatures);
  const direct = useApp((s) => s.wizard.direct);
  const ok = archives.filter((a) => a.state === 'ok').length;
  const pending = archives.filter((a) => a.state === 'inspecting').length;
  const excluded = archives.length - ok - pending;
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Review what will be imported
      </h2>
      <p className="muted step-lead">
        {direct
          ? 'This is what goes straight into the containerd of each node: only the layers it lacks, pinned durably.'
          : 'This is what k3s will import and pin on each node.'}{' '}
        Compare the SHA-256 with the one published with the bundle.
      </p>
      <div className="review-list">
        {archives.map((a) => (
          <ArchiveReview key={a.path} a={a} />
        ))}
      </div>
      {ok ? <SignaturesPanel /> : null}
      <div className="wizard-actions">
        <button type="button" className="btn" onClick={onBack}>
          Back
        </button>
        <span className="muted small" data-testid="review-summary">
          {pending ? `Checking ${pending}…` : `${ok} to import${excluded ? `, ${excluded} excluded` : ''}`}
        </span>
        <div className="spacer" />
        {blocked && !pending ? (
          <span className="small next-blocked" data-testid="next-blocked">
            {blocked}
          </span>
        ) : null}
        <button type="button" className="btn btn-primary" disabled={ok === 0 || pending > 0 || blocked !== null} onClick={onNext}>
          Next: choose nodes <ArrowRightIcon />
        </button>
      </div>
    </section>
  );
}
