// The service's one task runner: jobs (imports, uploads) and fleet runs start, stop and end
// through it. What is asserted is what the service relies on: a group runs one task at a time,
// a stop says why, a stop never reaches a task of another group, and stopping everything waits
// for the work to be over.
import { describe, expect, it } from 'vitest';
import { JobManager } from '../../../../src/core/jobs/manager';
import { TaskRunner, type TaskHandle } from '../../../../src/core/jobs/tasks';

/** A task that runs until its signal aborts, then records how it was stopped. */
function untilStopped(seen: { id: string; stoppedBy: TaskHandle['stoppedBy'] }[]) {
  return (t: TaskHandle) =>
    new Promise<void>((resolve) => {
      t.signal.addEventListener('abort', () => {
        seen.push({ id: t.id, stoppedBy: t.stoppedBy });
        resolve();
      });
    });
}

describe('TaskRunner', () => {
  it('runs one task at a time in a group: a new one replaces the last', async () => {
    const tasks = new TaskRunner();
    const seen: { id: string; stoppedBy: TaskHandle['stoppedBy'] }[] = [];
    const first = tasks.start(untilStopped(seen), { group: 'fleet' });
    const other = tasks.start(untilStopped(seen), { group: 'other' });
    const second = tasks.start(untilStopped(seen), { group: 'fleet' });
    await first.done;
    expect(seen).toEqual([{ id: first.id, stoppedBy: 'replaced' }]);
    expect(tasks.stop(second.id, 'cancelled', 'fleet')).toBe(true);
    await second.done;
    expect(seen[1]).toEqual({ id: second.id, stoppedBy: 'cancelled' });
    // Stopped once is stopped: a second stop, or a stop of an unknown id, does nothing.
    expect(tasks.stop(second.id, 'cancelled', 'fleet')).toBe(false);
    expect(tasks.stop('no-such-task')).toBe(false);
    // A stop for one group never reaches a task of another.
    expect(tasks.stop(other.id, 'cancelled', 'fleet')).toBe(false);
    await tasks.stopAll();
    expect(seen[2]).toEqual({ id: other.id, stoppedBy: 'disposed' });
  });

  it('runs the work at once and settles done even when the work fails', async () => {
    const tasks = new TaskRunner();
    let started = false;
    const t = tasks.start(async () => {
      started = true;
      throw new Error('broken');
    });
    expect(started).toBe(true);
    await expect(t.done).resolves.toBeUndefined();
    // Over: nothing left to stop.
    expect(tasks.stop(t.id)).toBe(false);
  });

  it('stops a job of the JobManager with everything else, the job then cancelled', async () => {
    const tasks = new TaskRunner();
    const jobs = new JobManager(tasks);
    const archive = { path: '/tmp/a.tar', size: 1, sha256: null };
    const job = jobs.start({ kind: 'upload', title: 'Upload a.tar to n1', nodes: ['n1'], archive, options: { pin: false, removeArchive: false } }, (h) => {
      h.update('n1', { state: 'running', phase: 'uploading' });
      return new Promise<void>((_, reject) => h.signal.addEventListener('abort', () => reject(Object.assign(new Error('cancelled'), { name: 'AbortError' }))));
    });
    const fleetSeen: { id: string; stoppedBy: TaskHandle['stoppedBy'] }[] = [];
    tasks.start(untilStopped(fleetSeen), { group: 'fleet' });
    await tasks.stopAll();
    const after = await jobs.wait(job.id);
    expect(after?.state).toBe('cancelled');
    expect(after?.nodes[0]).toMatchObject({ node: 'n1', state: 'cancelled', message: 'cancelled' });
    expect(fleetSeen.map((s) => s.stoppedBy)).toEqual(['disposed']);
  });

  it('cancels one job through the manager, leaving the others running', async () => {
    const tasks = new TaskRunner();
    const jobs = new JobManager(tasks);
    const archive = { path: '/tmp/a.tar', size: 1, sha256: null };
    const run = (h: Parameters<Parameters<JobManager['start']>[1]>[0]) =>
      new Promise<void>((resolve, reject) => {
        h.signal.addEventListener('abort', () => reject(Object.assign(new Error('cancelled'), { name: 'AbortError' })));
        setTimeout(() => {
          if (h.signal.aborted) return;
          h.update('n1', { state: 'succeeded', phase: 'done' });
          resolve();
        }, 20);
      });
    const a = jobs.start({ kind: 'upload', title: 'a', nodes: ['n1'], archive, options: { pin: false, removeArchive: false } }, run);
    const b = jobs.start({ kind: 'upload', title: 'b', nodes: ['n1'], archive, options: { pin: false, removeArchive: false } }, run);
    expect(jobs.cancel(a.id)?.id).toBe(a.id);
    expect((await jobs.wait(a.id))?.state).toBe('cancelled');
    expect((await jobs.wait(b.id))?.state).toBe('succeeded');
  });
});
