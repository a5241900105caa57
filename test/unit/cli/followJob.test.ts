// How the CLI follows one of the service's jobs (src/cli/jobs.ts): the local inspection's row from
// local.inspect events until the job exists, the job's changes that arrived before its id was
// known replayed in order, other jobs' changes ignored, and the last snapshot once it finished.
import { describe, expect, it } from 'vitest';
import { followJob } from '../../../src/cli/jobs';
import { ProgressBoard } from '../../../src/cli/progress';
import type { CliService } from '../../../src/cli/service';
import type { LiveEvent } from '../../../src/shared/contract';
import type { Job, JobState } from '../../../src/shared/domain/jobs';

function job(id: string, state: JobState, phase: Job['nodes'][number]['phase']): Job {
  return {
    id,
    kind: 'upload',
    title: 't',
    state,
    createdAt: '2026-01-01T00:00:00Z',
    finishedAt: null,
    progress: 0,
    nodes: [{ node: 'n1', state, phase, bytesDone: 0, bytesTotal: 0, rate: 0, eta: null, message: '' }],
    archive: { path: '/a/app.tar', size: 10, sha256: 'x' },
    options: { pin: false, removeArchive: false },
  };
}

describe('followJob', () => {
  it('shows the inspection, replays the changes sent before the answer, and ends with the finished job', async () => {
    let listener: ((e: LiveEvent) => void) | undefined;
    const emit = (e: LiveEvent) => listener?.(e);
    const cli: CliService = {
      call: async () => {
        throw new Error('not called');
      },
      headStart: () => undefined,
      subscribe: async (cb) => {
        listener = cb;
        return () => (listener = undefined);
      },
      close: async () => undefined,
    };
    let out = '';
    const board = new ProgressBoard({ isTTY: false, write: (s: string) => (out += s) });
    const seen: string[] = [];
    const started: string[] = [];
    const done = followJob(
      cli,
      async () => {
        emit({ type: 'local.inspect', payload: { path: '/a/app.tar', bytesRead: 10, size: 10 } });
        emit({ type: 'jobs.changed', payload: job('other', 'running', 'uploading') });
        emit({ type: 'jobs.changed', payload: job('j1', 'running', 'checking') });
        // The answer comes later than the job's first change; its next changes follow.
        setTimeout(() => {
          emit({ type: 'jobs.changed', payload: job('j1', 'running', 'uploading') });
          emit({ type: 'jobs.changed', payload: job('other', 'succeeded', 'done') });
          emit({ type: 'jobs.changed', payload: job('j1', 'succeeded', 'done') });
        }, 10);
        return job('j1', 'running', 'checking');
      },
      { file: '/a/app.tar', board, err: () => undefined, onStart: (j) => started.push(j.id), onJob: (j) => seen.push(`${j.id}:${j.nodes[0]!.phase}`) },
    );
    const last = await done;
    expect(last.state).toBe('succeeded');
    expect(started).toEqual(['j1']);
    expect(seen).toEqual(['j1:checking', 'j1:uploading', 'j1:done']);
    expect(listener).toBeUndefined(); // unsubscribed
    expect(out.split('\n')[0]).toBe('inspecting app.tar…');
  });

  it("passes the start's refusal on (nothing was started)", async () => {
    const cli: CliService = {
      call: async () => {
        throw new Error('not called');
      },
      headStart: () => undefined,
      subscribe: async () => () => undefined,
      close: async () => undefined,
    };
    const board = new ProgressBoard({ isTTY: false, write: () => undefined });
    await expect(
      followJob(
        cli,
        async () => {
          throw new Error('app.tar was refused: not an archive');
        },
        { file: '/a/app.tar', board, err: () => undefined, onJob: () => undefined },
      ),
    ).rejects.toThrow('app.tar was refused');
  });
});
