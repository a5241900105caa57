import type { Job, JobNodeProgress } from '../../shared/domain/jobs';
import { basename } from '../model/paths';
import { formatDateTime } from '../model/text';
import { formatDuration, formatBytes } from '../../shared/format';
import { humanRate, JOB_STATE_TEXT, nodeProgress, nodesToRetry, percent, phasesFor, phaseText } from '../model/jobs';
import { isJobFinished } from '../../shared/jobState';
import { AlertIcon, CheckIcon, CrossIcon, SlashIcon } from './icons';
import { visibleControls } from '../../shared/visibleControls';
import { nodeMessage } from './ErrorCallout';

export function ProgressBar({ value, label, tone }: { value: number; label: string; tone?: 'ok' | 'failed' | 'cancelled' }) {
  const v = Math.round(Math.min(1, Math.max(0, value)) * 100);
  return (
    <div
      className={`progress${tone ? ` progress-${tone}` : ''}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={v}
    >
      <div className="progress-fill" style={{ width: `${v}%` }} />
    </div>
  );
}

function StateIcon({ state }: { state: JobNodeProgress['state'] }) {
  if (state === 'succeeded') return <CheckIcon className="st-icon st-ok" />;
  if (state === 'failed') return <CrossIcon className="st-icon st-failed" />;
  if (state === 'cancelled') return <SlashIcon className="st-icon st-cancelled" />;
  return <span className="spinner spinner-inline" aria-hidden="true" />;
}

/** "checking › uploading › …" with the current phase marked; finished phases ticked. */
function Phases({ job, n }: { job: Job; n: JobNodeProgress }) {
  const phases = phasesFor(job.options);
  const at = phases.indexOf(n.phase);
  return (
    <ol className="phases" aria-label="Phases">
      {phases.map((p, i) => {
        const cls =
          n.state === 'succeeded' || i < at ? 'phase phase-done' : i === at ? `phase phase-current phase-${n.state}` : 'phase';
        return (
          <li key={p} className={cls} aria-current={i === at ? 'step' : undefined}>
            {phaseText(job.options, p)}
          </li>
        );
      })}
    </ol>
  );
}

export function NodeProgressRow({ job, n, onOpenNode }: { job: Job; n: JobNodeProgress; onOpenNode?: (node: string) => void }) {
  const finished = isJobFinished(n.state);
  const uploading = n.phase === 'uploading' && !finished;
  // A direct delivery's phases have their own names (sending, unpacking: model/jobs).
  const phase = phaseText(job.options, n.phase);
  const tone = n.state === 'succeeded' ? 'ok' : n.state === 'failed' ? 'failed' : n.state === 'cancelled' ? 'cancelled' : undefined;
  return (
    <li className={`job-node job-node-${n.state}`} data-testid="job-node" data-node={n.node} data-state={n.state} data-phase={n.phase}>
      <div className="job-node-head">
        <StateIcon state={n.state} />
        <strong className="job-node-name">{n.node}</strong>
        <span className="job-node-phase" data-testid="job-node-phase">
          {n.state === 'failed'
            ? `Failed while ${phase.toLowerCase()}`
            : n.state === 'cancelled'
              ? 'Cancelled'
              : phase}
        </span>
        {onOpenNode ? (
          <button type="button" className="btn btn-small btn-quiet job-node-open" onClick={() => onOpenNode(n.node)}>
            Open {n.node}'s images
          </button>
        ) : null}
      </div>
      <ProgressBar value={nodeProgress(n, job.options)} label={`${n.node}: ${phase}`} {...(tone ? { tone } : {})} />
      {!finished ? <Phases job={job} n={n} /> : null}
      {uploading && n.bytesTotal > 0 ? (
        <p className="job-node-bytes num-text" data-testid="upload-stats">
          {formatBytes(n.bytesDone)} of {formatBytes(n.bytesTotal)} · {humanRate(n.rate)} · {formatDuration(n.eta)} left
        </p>
      ) : null}
      {n.message && n.message.toLowerCase() !== phase.toLowerCase() && !(n.error && n.message === n.error.message) ? (
        <p className="job-node-message" data-testid="job-node-message">
          {nodeMessage(n.message)}
        </p>
      ) : null}
      {n.error ? (
        <div className="job-node-error" role="alert" data-testid="job-node-error">
          <strong>
            <AlertIcon /> {nodeMessage(n.error.message)}
          </strong>
          {n.error.hint ? <p>{n.error.hint}</p> : null}
          <p className="error-code">
            Error code <code>{n.error.code}</code>
          </p>
        </div>
      ) : null}
    </li>
  );
}

export function JobCard(props: {
  job: Job;
  onCancel?: (id: string) => void;
  onRetry?: (id: string) => void;
  onOpenNode?: (node: string) => void;
  headingLevel?: 2 | 3;
}) {
  const { job } = props;
  const finished = isJobFinished(job.state);
  const H = props.headingLevel === 2 ? 'h2' : 'h3';
  return (
    <article className={`job job-${job.state}`} data-testid="job" data-job-id={job.id} data-state={job.state} aria-label={job.title}>
      <header className="job-head">
        <div className="job-title">
          <H className="job-name">{job.title}</H>
          <p className="muted small">
            <code title={visibleControls(job.archive.path)}>{visibleControls(basename(job.archive.path))}</code> · {formatBytes(job.archive.size)} · started{' '}
            {formatDateTime(job.createdAt)}
            {job.options.direct ? ' · straight into containerd' : ''}
            {job.options.pin ? ' · durable pins' : ''}
            {job.options.removeArchive && !job.options.direct ? ' · archive removed after' : ''}
          </p>
        </div>
        <span className={`job-state job-state-${job.state}`} data-testid="job-state">
          {JOB_STATE_TEXT[job.state]}
          {!finished ? ` · ${percent(job.progress)}` : ''}
        </span>
        {!finished && props.onCancel ? (
          <button type="button" className="btn btn-small btn-danger-quiet" onClick={() => props.onCancel?.(job.id)} aria-label={`Cancel: ${job.title}`}>
            Cancel
          </button>
        ) : null}
        {finished && props.onRetry && nodesToRetry(job).length ? (
          <button type="button" className="btn btn-small" onClick={() => props.onRetry?.(job.id)} aria-label={`Run again on the failed nodes: ${job.title}`}>
            Run again ({nodesToRetry(job).length})
          </button>
        ) : null}
      </header>
      {!finished ? <ProgressBar value={job.progress} label={`${job.title}: overall`} /> : null}
      <ul className="job-nodes">
        {job.nodes.map((n) => (
          <NodeProgressRow key={n.node} job={job} n={n} {...(props.onOpenNode ? { onOpenNode: props.onOpenNode } : {})} />
        ))}
      </ul>
    </article>
  );
}
