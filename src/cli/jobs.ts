// Following one of the service's jobs (jobs.startUpload, jobs.startImport) from the CLI: the
// local inspection's progress (local.inspect events) on its own row until the job exists, then
// every change of the job (jobs.changed) until it has finished. Ctrl-C cancels through the
// service: jobs.cancel once the job exists, before that the service is closed, which stops the
// inspection (nothing was sent yet).
import path from 'node:path';
import type { Job, JobNodeProgress, JobState } from '../shared/domain/jobs';
import type { CliService } from './service';
import type { ProgressBoard } from './progress';
import { inspectionRow, type NodePatch } from './transferRows';

export function cancelledError(message: string): Error {
  return Object.assign(new Error(message), { name: 'AbortError' });
}

/**
 * Runs `first` on the first Ctrl-C; a second one quits at once (as Node's default would). Returns
 * the remover. The listener stays for the second press rather than being a `once`: with it gone, a
 * SIGINT handler a dependency installed (signal-exit, under proper-lockfile: the service's node
 * store and audit log) would re-raise the very first Ctrl-C and end the process before the work
 * was cancelled.
 */
export function onCtrlC(first: () => void): () => void {
  let pressed = false;
  const onSig = () => {
    if (!pressed) {
      pressed = true;
      first();
      return;
    }
    process.off('SIGINT', onSig);
    process.kill(process.pid, 'SIGINT');
  };
  process.on('SIGINT', onSig);
  return () => process.off('SIGINT', onSig);
}

export const jobFinished = (s: JobState): boolean => s === 'succeeded' || s === 'failed' || s === 'cancelled';

/** A node's row of a job snapshot as the patch the progress rows take. */
export function nodePatch(n: JobNodeProgress): NodePatch {
  const { node: _node, error: _error, result: _result, ...patch } = n;
  return patch;
}

export interface FollowOptions {
  /** The archive on this machine, absolute (what local.inspect events name). */
  file: string;
  board: ProgressBoard;
  err: (s: string) => void;
  /** Once the job exists (the inspection's row is gone by then). */
  onStart?: (job: Job) => void;
  /** Every snapshot of the job, in order. */
  onJob: (job: Job) => void;
}

/** Starts the job (start() calls jobs.start…) and resolves with its last snapshot once it has finished. */
export async function followJob(cli: CliService, start: () => Promise<Job>, o: FollowOptions): Promise<Job> {
  const name = path.basename(o.file);
  let id: string | undefined;
  let cancelledEarly = false;
  const early: Job[] = [];
  let finish!: (job: Job) => void;
  const finished = new Promise<Job>((resolve) => (finish = resolve));
  const seen = (job: Job) => {
    o.onJob(job);
    if (jobFinished(job.state)) finish(job);
  };
  // Ctrl-C: the live rows are erased first, so the message gets a line of its own, then the work
  // stops where it is (partial uploads are kept). A second Ctrl-C quits at once.
  const offSig = onCtrlC(() => {
    o.board.close();
    o.err('holdfast: cancelling — run the same command again to resume (Ctrl-C again quits at once)');
    if (id !== undefined) void cli.call('jobs.cancel', { id }).catch(() => undefined);
    else {
      cancelledEarly = true;
      void cli.close();
    }
  });
  // The inspection's row comes with its first progress: the service checks the node names and
  // options first, and a refusal of those must not look as if the archive had been read.
  let inspecting = false;
  let unsubscribe = () => {};
  try {
    let job: Job;
    try {
      unsubscribe = await cli.subscribe((e) => {
        if (e.type === 'local.inspect') {
          if (id !== undefined || e.payload.path !== o.file) return;
          if (!inspecting) o.board.set('inspect', inspectionRow(name));
          inspecting = true;
          o.board.set('inspect', inspectionRow(name, e.payload.bytesRead, e.payload.size));
        } else if (e.type === 'jobs.changed') {
          if (id === undefined) early.push(e.payload);
          else if (e.payload.id === id) seen(e.payload);
        }
      });
      // Ctrl-C while the service was loading: nothing started.
      if (cancelledEarly) throw cancelledError('cancelled');
      job = await start();
    } catch (e) {
      if (cancelledEarly) throw cancelledError(`the inspection of ${name} was cancelled; nothing was sent`);
      throw e;
    } finally {
      o.board.delete('inspect');
    }
    // Closed before the answer came: the service cancelled the job as it stopped.
    if (cancelledEarly) throw cancelledError('cancelled');
    id = job.id;
    o.onStart?.(job);
    const mine = early.filter((j) => j.id === id);
    for (const j of mine.length ? mine : [job]) seen(j);
    return await finished;
  } finally {
    offSig();
    unsubscribe();
  }
}
