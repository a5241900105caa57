// Long-running work (imports across nodes, uploads) owned by the service, not by a window: each
// job has an id, per-node progress (and, once a node succeeded, its result), a state and a cancel
// switch, and outlives the UI (or the CLI's progress board) that started it. A job runs as a task
// of the service's one TaskRunner (./tasks.ts), which fleet runs share.
import { randomUUID } from 'node:crypto';
import type { Job, JobNodeProgress } from '../../shared/domain/jobs';
import { isJobFinished as isFinished } from '../../shared/jobState';
import { toErrorInfo } from '../errors';
import { TaskRunner, type Task } from './tasks';

export interface JobHandle {
  readonly id: string;
  readonly signal: AbortSignal;
  /** Merge a node's progress; returns the job snapshot. */
  update(node: string, patch: Partial<Omit<JobNodeProgress, 'node'>>): void;
  fail(node: string, err: unknown): void;
}

export type JobRunner = (job: JobHandle) => Promise<void>;

const KEEP_FINISHED = 50;

export class JobManager {
  private readonly jobs = new Map<string, { job: Job; task: Task }>();
  private readonly listeners = new Set<(job: Job) => void>();

  constructor(private readonly tasks: TaskRunner = new TaskRunner()) {}

  /** Called (throttled by the caller if needed) whenever a job changes. */
  onChange(cb: (job: Job) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  start(init: Pick<Job, 'kind' | 'title' | 'archive' | 'options'> & { nodes: string[] }, run: JobRunner): Job {
    const id = randomUUID();
    const job: Job = {
      id,
      kind: init.kind,
      title: init.title,
      state: 'running',
      createdAt: new Date().toISOString(),
      finishedAt: null,
      progress: 0,
      nodes: init.nodes.map((node) => ({ node, state: 'queued', phase: 'queued', bytesDone: 0, bytesTotal: 0, rate: 0, eta: null, message: 'waiting' })),
      archive: init.archive,
      options: init.options,
    };
    const emit = () => {
      job.progress = this.progressOf(job);
      for (const l of this.listeners) l(this.snapshot(job));
    };
    const task = this.tasks.start(
      async (t) => {
        const handle = this.handle(job, t.signal, emit);
        try {
          await run(handle);
        } catch (e) {
          for (const n of job.nodes) if (!isFinished(n.state)) handle.fail(n.node, e);
        } finally {
          for (const n of job.nodes) if (!isFinished(n.state)) n.state = t.signal.aborted ? 'cancelled' : 'failed';
          job.state = t.signal.aborted
            ? 'cancelled'
            : job.nodes.every((n) => n.state === 'succeeded')
              ? 'succeeded'
              : 'failed';
          job.finishedAt = new Date().toISOString();
          emit();
          this.prune();
        }
      },
      { id },
    );
    this.jobs.set(id, { job, task });
    emit();
    return this.snapshot(job);
  }

  private handle(job: Job, signal: AbortSignal, emit: () => void): JobHandle {
    const handle: JobHandle = {
      id: job.id,
      signal,
      update: (node, patch) => {
        const n = job.nodes.find((x) => x.node === node);
        if (!n) return;
        Object.assign(n, patch);
        emit();
      },
      fail: (node, err) => {
        const n = job.nodes.find((x) => x.node === node);
        if (!n) return;
        const cancelled = signal.aborted || (err instanceof Error && err.name === 'AbortError');
        n.state = cancelled ? 'cancelled' : 'failed';
        // A cancellation says how far the work got when it says so (an upload: whether a partial
        // file was left), else just "cancelled".
        // (A bare signal's DOMException says only "This operation was aborted".)
        const said = err instanceof Error && !(err instanceof DOMException) && err.name === 'AbortError' && err.message && err.message !== 'cancelled' ? err.message : null;
        n.message = cancelled ? (said ?? 'cancelled') : toErrorInfo(err).message;
        if (!cancelled) n.error = toErrorInfo(err);
        emit();
      },
    };
    return handle;
  }

  list(): Job[] {
    return [...this.jobs.values()].map((j) => this.snapshot(j.job)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  get(id: string): Job | undefined {
    const j = this.jobs.get(id);
    return j && this.snapshot(j.job);
  }

  cancel(id: string): Job | undefined {
    const j = this.jobs.get(id);
    if (!j) return undefined;
    if (!isFinished(j.job.state)) this.tasks.stop(id);
    return this.snapshot(j.job);
  }

  /** Resolves when the job has finished (tests; the CLI follows jobs.changed instead). */
  async wait(id: string): Promise<Job | undefined> {
    await this.jobs.get(id)?.task.done;
    return this.get(id);
  }

  private progressOf(job: Job): number {
    if (job.nodes.length === 0) return 1;
    // Uploading is most of the time; the later phases each count a little.
    const weight: Record<string, number> = { queued: 0, checking: 0.02, uploading: 0.05, verifying: 0.8, importing: 0.85, pinning: 0.92, removing: 0.96, done: 1 };
    const per = job.nodes.map((n) => {
      if (isFinished(n.state)) return 1;
      if (n.phase === 'uploading' && n.bytesTotal > 0) return 0.05 + 0.75 * (n.bytesDone / n.bytesTotal);
      return weight[n.phase] ?? 0;
    });
    return per.reduce((a, b) => a + b, 0) / per.length;
  }

  private snapshot(job: Job): Job {
    return structuredClone(job);
  }

  private prune(): void {
    const finished = [...this.jobs.values()].filter((j) => isFinished(j.job.state)).sort((a, b) => a.job.createdAt.localeCompare(b.job.createdAt));
    while (finished.length > KEEP_FINISHED) this.jobs.delete(finished.shift()!.job.id);
  }
}
