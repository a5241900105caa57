// Step 4 of the import wizard: the running import jobs, one card per archive, cancellable; the
// user may leave and follow them in the jobs panel.
import { useState } from 'react';
import type { ErrorInfo } from '../../../shared/domain/errors';
import { useApp } from '../../context';
import { consistentImportOptions } from '../../../shared/importOptions';
import { isJobFinished } from '../../../shared/jobState';
import { importStepsText } from '../../model/jobs';
import { ErrorCallout } from '../ErrorCallout';
import { JobCard } from '../JobCard';
import { StartErrors } from './StartErrors';
import { useWizardJobs } from './useWizardJobs';

export function RunStep() {
  const jobs = useWizardJobs();
  const cancelJob = useApp((s) => s.cancelJob);
  const closeImport = useApp((s) => s.closeImport);
  const wizard = useApp((s) => s.wizard);
  const [error, setError] = useState<ErrorInfo | null>(null);
  const running = jobs.filter((j) => j && !isJobFinished(j.state));
  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Importing
      </h2>
      <p className="muted step-lead">
        {importStepsText(consistentImportOptions(wizard))} You can leave this page: the import goes on, and the jobs panel in the
        sidebar follows it.
      </p>
      {error ? <ErrorCallout error={error} title="Could not cancel" /> : null}
      <StartErrors />
      <div className="job-list" aria-live="off">
        {jobs.map((j, i) => (j ? <JobCard key={j.id} job={j} onCancel={(id) => void cancelJob(id).then(setError)} /> : <p key={i}>Waiting for the job…</p>))}
      </div>
      <div className="wizard-actions">
        <span className="muted small" role="status">
          {running.length ? `${running.length} of ${jobs.length} still running` : 'All finished'}
        </span>
        <div className="spacer" />
        <button type="button" className="btn" onClick={closeImport}>
          Continue in the background
        </button>
      </div>
    </section>
  );
}
