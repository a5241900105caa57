import { describe, expect, it } from 'vitest';
import type { Job } from '../../../../src/shared/domain/jobs';
import { humanRate, importStepsText, jobsSummary, nodeProgress, phasesFor, phaseText, sortJobs } from '../../../../src/renderer/model/jobs';

describe('import jobs', () => {
  const mk = (id: string, state: Job['state'], createdAt: string, progress = 0.5): Job => ({
    id,
    kind: 'import',
    title: id,
    state,
    createdAt,
    finishedAt: null,
    progress,
    nodes: [],
    archive: { path: '/a.tar', size: 1, sha256: null },
    options: { pin: true, removeArchive: true },
  });

  it('the rate reads like a person would say it', () => {
    expect(humanRate(0)).toBe('—');
    expect(humanRate(5 * 1024 * 1024)).toBe('5 MiB/s');
  });

  it('phases follow the options', () => {
    expect(phasesFor({ pin: true, removeArchive: true })).toEqual(['checking', 'uploading', 'verifying', 'importing', 'pinning', 'removing', 'done']);
    expect(phasesFor({ pin: false, removeArchive: false })).toEqual(['checking', 'uploading', 'verifying', 'importing', 'done']);
  });

  it('running jobs first, newest first; the indicator averages the running ones', () => {
    const jobs = [mk('old-done', 'succeeded', '2026-01-01T00:00:00Z'), mk('new-run', 'running', '2026-01-03T00:00:00Z', 0.2), mk('old-run', 'running', '2026-01-02T00:00:00Z', 0.6), mk('new-fail', 'failed', '2026-01-04T00:00:00Z')];
    expect(sortJobs(jobs).map((j) => j.id)).toEqual(['new-run', 'old-run', 'new-fail', 'old-done']);
    expect(jobsSummary(jobs)).toEqual({ running: 2, finished: 2, failed: 1, progress: 0.4 });
    expect(jobsSummary([]).running).toBe(0);
  });

  it('a node uploading half its bytes is a bit under half way', () => {
    const n = { node: 'a', state: 'running' as const, phase: 'uploading' as const, bytesDone: 50, bytesTotal: 100, rate: 1, eta: 1, message: '' };
    expect(nodeProgress(n)).toBeCloseTo(0.425);
    expect(nodeProgress({ ...n, state: 'succeeded', phase: 'done' })).toBe(1);
    expect(nodeProgress({ ...n, phase: 'importing' })).toBe(0.85);
  });

  it('a direct delivery is worded as what it does: sending, unpacking, verified last, nothing removed (issue #35)', () => {
    const direct = { pin: true, removeArchive: false, direct: true };
    expect(phasesFor(direct)).toEqual(['checking', 'uploading', 'importing', 'pinning', 'verifying', 'done']);
    expect(phasesFor(direct).map((p) => phaseText(direct, p))).toEqual(['Checking', 'Sending', 'Unpacking', 'Pinning', 'Verifying', 'Done']);
    expect(phaseText({}, 'uploading')).toBe('Uploading');
    expect(phaseText({ direct: false }, 'importing')).toBe('Importing');
    // Pinned before the read-back: a node verifying is further along than one pinning.
    const n = { node: 'a', state: 'running' as const, phase: 'pinning' as const, bytesDone: 0, bytesTotal: 0, rate: 0, eta: null, message: '' };
    expect(nodeProgress({ ...n, phase: 'verifying' }, direct)).toBeGreaterThan(nodeProgress(n, direct));
    expect(nodeProgress({ ...n, phase: 'verifying' })).toBeLessThan(nodeProgress(n));
  });

  it('the wizard says what each node goes through, for the options chosen', () => {
    const plan = importStepsText({ pin: true, removeArchive: false, direct: true });
    expect(plan).toMatch(/send only the missing ones/);
    expect(plan).toMatch(/pin durably/);
    expect(plan).toMatch(/No file is written to the images dir/);
    expect(plan).not.toMatch(/k3s/);
    expect(importStepsText({ pin: true, removeArchive: true })).toBe(
      'Each node: check what it has → upload (resumable, SHA-256 verified) → wait for k3s to import → make the pins durable → remove the archive safely.',
    );
    expect(importStepsText({ pin: false, removeArchive: false })).toBe('Each node: check what it has → upload (resumable, SHA-256 verified) → wait for k3s to import.');
  });
});
