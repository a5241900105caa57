// Step 5 of the import wizard: what succeeded and failed per node and archive, running an
// archive again on the nodes that failed, and starting over.
import { useState } from 'react';
import type { ErrorInfo } from '../../../shared/domain/errors';
import { useApp } from '../../context';
import { basename } from '../../model/paths';
import { nodesToRetry } from '../../model/jobs';
import { ErrorCallout } from '../ErrorCallout';
import { CheckIcon, CrossIcon } from '../icons';
import { StartErrors } from './StartErrors';
import { useWizardJobs } from './useWizardJobs';

export function SummaryStep() {
  const jobs = useWizardJobs();
  const select = useApp((s) => s.select);
  const retryJob = useApp((s) => s.retryJob);
  const resetImport = useApp((s) => s.resetImport);
  const closeImport = useApp((s) => s.closeImport);
  const [errors, setErrors] = useState<Record<string, ErrorInfo | null>>({});
  const results = jobs.flatMap((j) => (j ? j.nodes : []));
  const ok = results.filter((n) => n.state === 'succeeded').length;
  const failed = results.length - ok;
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Summary
      </h2>
      <div className={`callout ${failed ? 'callout-warning' : 'callout-success'}`} data-testid="summary-banner">
        <strong>
          {failed
            ? `${ok} of ${results.length} imports succeeded, ${failed} did not.`
            : `All ${results.length} ${results.length === 1 ? 'import' : 'imports'} succeeded.`}
        </strong>
        {failed ? <p>Running an import again is safe: it picks up where it stopped and skips what is already done.</p> : null}
      </div>
      <StartErrors />
      {jobs.map((j) =>
        j ? (
          <article key={j.id} className="summary-job" data-testid="summary-job" aria-label={basename(j.archive.path)}>
            <header className="summary-job-head">
              <h3>
                <code>{basename(j.archive.path)}</code>
              </h3>
              {nodesToRetry(j).length ? (
                <button type="button" className="btn btn-small" onClick={() => void retryJob(j.id).then((e) => setErrors((x) => ({ ...x, [j.id]: e })))}>
                  Run again on {nodesToRetry(j).length === 1 ? nodesToRetry(j)[0] : `${nodesToRetry(j).length} failed nodes`}
                </button>
              ) : null}
            </header>
            {errors[j.id] ? <ErrorCallout error={errors[j.id]!} title="Could not start again" /> : null}
            <ul className="summary-nodes">
              {j.nodes.map((n) => (
                <li key={n.node} className={`summary-node summary-${n.state}`} data-testid="summary-node" data-node={n.node} data-state={n.state}>
                  {n.state === 'succeeded' ? <CheckIcon className="st-icon st-ok" /> : <CrossIcon className="st-icon st-failed" />}
                  <div className="summary-node-text">
                    <p>
                      <strong>{n.node}</strong>{' '}
                      <span className={n.state === 'succeeded' ? 'yn yn-yes' : 'yn yn-no'}>{n.state === 'succeeded' ? 'OK' : n.state === 'cancelled' ? 'Cancelled' : 'Failed'}</span>
                    </p>
                    <p className="muted small" data-testid="summary-message">
                      {n.error ? n.error.message : n.message}
                    </p>
                    {n.error?.hint ? <p className="hint small">{n.error.hint}</p> : null}
                  </div>
                  <button type="button" className="btn btn-small" onClick={() => select(n.node)}>
                    Open {n.node}'s images
                  </button>
                </li>
              ))}
            </ul>
          </article>
        ) : null,
      )}
      <div className="wizard-actions">
        <button type="button" className="btn" onClick={resetImport}>
          Import more archives
        </button>
        <div className="spacer" />
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => {
            resetImport();
            closeImport();
          }}
        >
          Done
        </button>
      </div>
    </section>
  );
}
