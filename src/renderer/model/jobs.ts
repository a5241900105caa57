// Import jobs for the wizard and the jobs panel: phases, order, progress, rate, and the nodes to
// run again. Whether a job is finished is the shared rule (shared/jobState).
import type { ImportPhase, Job, JobNodeProgress, JobState } from '../../shared/domain/jobs';
import { formatBytes } from '../../shared/format';
import { isJobFinished } from '../../shared/jobState';

export const PHASE_TEXT: Record<ImportPhase, string> = {
  queued: 'Waiting',
  checking: 'Checking',
  uploading: 'Uploading',
  verifying: 'Verifying',
  importing: 'Importing',
  pinning: 'Pinning',
  removing: 'Removing archive',
  done: 'Done',
};

/**
 * A direct delivery (issue #35) goes through the same phases under other names: it sends only
 * the blobs a node lacks (no upload of the archive), and unpacks them itself (no k3s import).
 */
const DIRECT_PHASE_TEXT: Partial<Record<ImportPhase, string>> = {
  uploading: 'Sending',
  importing: 'Unpacking',
};

/** What a phase is called in a job with these options. */
export function phaseText(options: Pick<Job['options'], 'direct'>, phase: ImportPhase): string {
  return (options.direct ? DIRECT_PHASE_TEXT[phase] : undefined) ?? PHASE_TEXT[phase];
}

/** The phases a node goes through, in order, for the given options (the stepper's steps). */
export function phasesFor(options: Job['options']): ImportPhase[] {
  // Direct: pinned as it is written, then every reference read back; nothing to remove.
  if (options.direct) return ['checking', 'uploading', 'importing', 'pinning', 'verifying', 'done'];
  return [
    'checking',
    'uploading',
    'verifying',
    'importing',
    ...(options.pin ? (['pinning'] as const) : []),
    ...(options.removeArchive ? (['removing'] as const) : []),
    'done',
  ];
}

/** Running (and queued) first, then finished; newest first within each. */
export function sortJobs(jobs: readonly Job[]): Job[] {
  return [...jobs].sort((a, b) => {
    const fa = isJobFinished(a.state) ? 1 : 0;
    const fb = isJobFinished(b.state) ? 1 : 0;
    return fa - fb || b.createdAt.localeCompare(a.createdAt);
  });
}

/** The jobs indicator: how many run, and their mean progress (0..1). */
export function jobsSummary(jobs: readonly Job[]): { running: number; finished: number; failed: number; progress: number } {
  const running = jobs.filter((j) => !isJobFinished(j.state));
  const progress = running.length ? running.reduce((n, j) => n + clamp01(j.progress), 0) / running.length : 1;
  return {
    running: running.length,
    finished: jobs.length - running.length,
    failed: jobs.filter((j) => j.state === 'failed').length,
    progress,
  };
}

function clamp01(v: number): number {
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
}

export function percent(v: number): string {
  return `${Math.floor(clamp01(v) * 100)}%`;
}

export function humanRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '—';
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

/** Per node of finished jobs: the ones to run again (failed or cancelled). */
export function nodesToRetry(job: Job): string[] {
  return job.nodes.filter((n) => n.state === 'failed' || n.state === 'cancelled').map((n) => n.node);
}

const SHARE: Record<ImportPhase, number> = { queued: 0, checking: 0.02, uploading: 0.05, verifying: 0.8, importing: 0.85, pinning: 0.92, removing: 0.96, done: 1 };
// A direct delivery verifies last (every reference read back), after pinning.
const DIRECT_SHARE: Record<ImportPhase, number> = { ...SHARE, importing: 0.82, pinning: 0.9, verifying: 0.95 };

/** How far one node is (0..1): bytes while uploading (sending), a fixed share for the other phases. */
export function nodeProgress(n: JobNodeProgress, options?: Pick<Job['options'], 'direct'>): number {
  if (n.state === 'succeeded') return 1;
  if (n.phase === 'uploading' && n.bytesTotal > 0) return 0.05 + 0.75 * clamp01(n.bytesDone / n.bytesTotal);
  return (options?.direct ? DIRECT_SHARE : SHARE)[n.phase] ?? 0;
}

/**
 * What each node goes through, in one line, for the wizard (review, nodes and run steps) with
 * these options (made consistent by shared/importOptions first).
 */
export function importStepsText(o: Pick<Job['options'], 'pin' | 'removeArchive' | 'direct'>): string {
  if (o.direct) {
    return 'Each node: check which blobs it already holds → send only the missing ones (resumable, checked by containerd) → unpack the layers for CRI → pin durably → read every reference back. No file is written to the images dir.';
  }
  return [
    'Each node: check what it has',
    'upload (resumable, SHA-256 verified)',
    'wait for k3s to import',
    ...(o.pin ? ['make the pins durable'] : []),
    ...(o.removeArchive ? ['remove the archive safely'] : []),
  ].join(' → ') + '.';
}

export const JOB_STATE_TEXT: Record<JobState, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
