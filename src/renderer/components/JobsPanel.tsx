import { useMemo, useState } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import { useApp } from '../context';
import { jobsSummary, percent, sortJobs } from '../model/jobs';
import { ErrorCallout } from './ErrorCallout';
import { JobCard, ProgressBar } from './JobCard';
import { ListIcon } from './icons';
import { Modal } from './Modal';

/** Bottom of the sidebar: how many jobs run and how far they are; opens the jobs panel. */
export function JobsIndicator() {
  const jobs = useApp((s) => s.jobs);
  const setJobsOpen = useApp((s) => s.setJobsOpen);
  const sum = jobsSummary(jobs);
  const text =
    sum.running > 0
      ? `${sum.running} ${sum.running === 1 ? 'job' : 'jobs'} running`
      : jobs.length === 0
        ? 'No jobs'
        : `${jobs.length} ${jobs.length === 1 ? 'job' : 'jobs'} finished`;
  return (
    <button type="button" className={`jobs-indicator${sum.running ? ' jobs-running' : ''}`} data-testid="jobs-indicator" onClick={() => setJobsOpen(true)}>
      <span className="jobs-indicator-line">
        {sum.running ? <span className="spinner spinner-inline" aria-hidden="true" /> : <ListIcon />}
        <span className="jobs-indicator-text">{text}</span>
        {sum.running ? <span className="jobs-indicator-pct num-text">{percent(sum.progress)}</span> : null}
        {!sum.running && sum.failed ? <span className="tag tag-danger jobs-failed">{sum.failed} failed</span> : null}
      </span>
      {sum.running ? <ProgressBar value={sum.progress} label="Overall progress of the running jobs" /> : null}
    </button>
  );
}

export function JobsPanel() {
  const jobs = useApp((s) => s.jobs);
  const jobsState = useApp((s) => s.jobsState);
  const jobsError = useApp((s) => s.jobsError);
  const setJobsOpen = useApp((s) => s.setJobsOpen);
  const cancelJob = useApp((s) => s.cancelJob);
  const retryJob = useApp((s) => s.retryJob);
  const select = useApp((s) => s.select);
  const sorted = useMemo(() => sortJobs(jobs), [jobs]);
  const [error, setError] = useState<ErrorInfo | null>(null);
  const close = () => setJobsOpen(false);
  return (
    <Modal title="Jobs" onClose={close} className="modal-wide jobs-modal" testId="jobs-panel">
      <p className="muted small jobs-note">
        Jobs run in Holdfast itself, not in this window: they go on when you look at something else or reload.
      </p>
      {jobsState === 'error' && jobsError ? <ErrorCallout error={jobsError} title="Could not list jobs" /> : null}
      {error ? <ErrorCallout error={error} title="That did not work" /> : null}
      {sorted.length === 0 ? (
        <div className="empty" data-testid="jobs-empty">
          <p className="empty-title">No jobs yet</p>
          <p className="muted">Imports you start appear here with their progress on every node.</p>
        </div>
      ) : (
        <div className="job-list">
          {sorted.map((j) => (
            <JobCard
              key={j.id}
              job={j}
              onCancel={(id) => void cancelJob(id).then(setError)}
              onRetry={(id) => void retryJob(id).then(setError)}
              onOpenNode={(n) => {
                close();
                select(n);
              }}
            />
          ))}
        </div>
      )}
      <div className="modal-actions">
        <button type="button" className="btn" onClick={close}>
          Close
        </button>
      </div>
    </Modal>
  );
}
