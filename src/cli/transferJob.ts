// What `holdfast upload` and `holdfast import` show of their job: each node's row as it changes,
// and a failed node's error as the service reported it.
import { HoldfastError } from '../core/errors';
import type { Job, JobNodeProgress } from '../shared/domain';
import { nodePatch } from './jobs';
import { ProgressBoard } from './progress';
import { NodeRows } from './transferRows';

/** Shows a job's node rows as they change: a failed or cancelled node gets its FAILED row. */
export function jobRows(board: ProgressBoard, opts: { queued: boolean; done: boolean }) {
  const rows = new NodeRows(board);
  const last = new Map<string, string>();
  return (job: Job) => {
    for (const n of job.nodes) {
      const key = JSON.stringify(n);
      if (last.get(n.node) === key) continue;
      last.set(n.node, key);
      if (n.state === 'succeeded' && !opts.done) continue; // the result line says it
      // Waiting for a --parallel slot: a line of its own on a terminal only.
      if (n.state === 'queued') {
        if (opts.queued) rows.update(n.node, { phase: 'queued' });
      } else if (n.state === 'failed' || n.state === 'cancelled') rows.failed(n.node, n.message);
      else rows.update(n.node, nodePatch(n));
    }
  };
}

/** A failed node's error as the service reported it (code, hint, fingerprints kept). */
export function nodeError(n: JobNodeProgress): HoldfastError {
  if (!n.error) return new HoldfastError('INTERNAL', n.message || `${n.node} failed`);
  const { code, message, ...extra } = n.error;
  return new HoldfastError(code, message, extra);
}
