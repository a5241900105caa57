// Every long-running piece of work the service owns — jobs (imports, uploads, ./manager.ts) and
// fleet runs — starts here: an id, an abort switch, a promise that settles when the work is over,
// and one place that stops them all when the service goes away. What a kind reports while it
// runs (a job's per-node rows, a fleet run's fleet.node events) stays with that kind.
import { randomUUID } from 'node:crypto';
import { logger } from '../log';

const log = logger('tasks');

/**
 * Why a task was stopped: asked to (jobs.cancel, fleet.cancel), replaced by a newer task of its
 * group, or the service closing. Kept beside the signal rather than as its reason, so an aborted
 * signal still throws the usual AbortError wherever the work checks it.
 */
export type StopReason = 'cancelled' | 'replaced' | 'disposed';

export interface TaskHandle {
  readonly id: string;
  readonly signal: AbortSignal;
  /** Why the task was stopped, or null while nobody stopped it. */
  readonly stoppedBy: StopReason | null;
}

export interface Task {
  readonly id: string;
  /** Settles (never rejects) once the work is over. */
  readonly done: Promise<void>;
}

export interface TaskStartOptions {
  /** The id to run under (default a fresh UUID). */
  id?: string;
  /** One task at a time in a group: starting one stops the last ('replaced'). */
  group?: string;
}

interface Running {
  abort: AbortController;
  group: string | undefined;
  stoppedBy: StopReason | null;
  done: Promise<void>;
}

export class TaskRunner {
  private readonly running = new Map<string, Running>();

  start(run: (task: TaskHandle) => Promise<void>, opts: TaskStartOptions = {}): Task {
    if (opts.group !== undefined) for (const [id, t] of this.running) if (t.group === opts.group) this.stop(id, 'replaced');
    const id = opts.id ?? randomUUID();
    const entry: Running = { abort: new AbortController(), group: opts.group, stoppedBy: null, done: Promise.resolve() };
    this.running.set(id, entry);
    const handle: TaskHandle = {
      id,
      signal: entry.abort.signal,
      get stoppedBy() {
        return entry.stoppedBy;
      },
    };
    // Called at once (not on a later tick), so the work's first steps happen before start returns.
    entry.done = (async () => run(handle))()
      .catch((err: unknown) => log.debug('task failed', { id, err }))
      .finally(() => this.running.delete(id));
    return { id, done: entry.done };
  }

  /** Stops a running task (of that group, when given); false when there is none or it was already stopped. */
  stop(id: string, reason: StopReason = 'cancelled', group?: string): boolean {
    const t = this.running.get(id);
    if (!t || t.abort.signal.aborted || (group !== undefined && t.group !== group)) return false;
    t.stoppedBy = reason;
    t.abort.abort();
    return true;
  }

  /** Stops every task (at once, before the first await) and resolves when all of them are over. */
  async stopAll(reason: StopReason = 'disposed'): Promise<void> {
    const all = [...this.running.entries()];
    for (const [id] of all) this.stop(id, reason);
    await Promise.all(all.map(([, t]) => t.done));
  }
}
