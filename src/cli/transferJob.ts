// What `holdfast upload` and `holdfast import` show of their job: each node's row as it changes,
// a failed node's error as the service reported it, and each node's line at the end.
import { HoldfastError } from '../core/errors';
import type { ErrorInfo } from '../shared/domain/errors';
import type { Job, JobNodeProgress, JobNodeResult } from '../shared/domain/jobs';
import { humanSize, terminalSafe } from './format';
import { savedNodeHint } from './accessText';
import { remedyText } from './remedyText';
import { nodePatch } from './jobs';
import { ProgressBoard } from './progress';
import type { Screen } from './screen';
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
  const { code, message, access, ...extra } = n.error;
  const e = new HoldfastError(code, message, extra);
  if (access) e.access = access;
  return e;
}

/** The error with its import remedy worded as its hint (an error without one as it is). */
export function withRemedyHint(e: HoldfastError, file: string): HoldfastError {
  if (e.remedy?.action !== 'k3s-start-or-direct') return e;
  return new HoldfastError(e.code, e.message, { hint: remedyText(e.remedy, file), remedy: e.remedy });
}

/**
 * A node's line at the end of an import: `NODE: ok — what was done`, or `NODE: FAILED — the error
 * (its hint)`. On a terminal it wraps at words to its width, the next lines indented.
 */
export function importResultLine(screen: Screen, node: string, outcome: { result: JobNodeResult } | { failed: Pick<ErrorInfo, 'message' | 'hint' | 'access' | 'remedy'> }): string {
  if ('result' in outcome) return screen.text(`${node}: ok — ${outcome.result.summary}`);
  // A refusal's remedy (a host key to trust) worded as the command that works here.
  const { message } = outcome.failed;
  const hint = savedNodeHint(outcome.failed);
  return screen.text(`${node}: FAILED — ${terminalSafe(message)}${hint ? ` (${terminalSafe(hint)})` : ''}`);
}

/** An upload's line at the end: what went where, its size and SHA-256; wrapped at words on a terminal. */
export function uploadResultLine(screen: Screen, node: string, r: JobNodeResult, size: number): string {
  return screen.text(
    !r.uploaded
      ? `${node}: ${r.relPath} is already there (sha256 ${r.sha256})`
      : `${node}: uploaded ${r.relPath} (${humanSize(size)}${r.resumedFrom ? `, resumed from ${humanSize(r.resumedFrom)}` : ''}, sha256 ${r.sha256} verified on the node)`,
  );
}
