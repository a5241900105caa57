// The service's long operations as every transport calls them (src/core/service/ through the
// shared dispatch, as `holdfast serve` and the CLI do), over lab nodes: jobs.startUpload and
// jobs.startImport with their bounded options, the per-node results their jobs carry, the
// local inspection's progress events, and fleet.start with concurrency and a timeout, cancelled
// through fleet.cancel. The CLI's upload, import and inspect are these operations.
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab } from '../../lab';
import { createHandlers, type Service } from '../../src/core/service';
import { dispatch } from '../../src/server/dispatch';
import type { Envelope, LiveEvent } from '../../src/shared/contract';
import type { Job } from '../../src/shared/domain/jobs';
import type { FleetReport } from '../../src/shared/fleet';
import { tempHome } from './support';

let lab: Lab;
let service: Service;
let watcher: K3sWatcher;
const events: LiveEvent[] = [];
let unsubscribe: () => void;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-service-jobs-'));

const call = async <T>(channel: string, args: unknown): Promise<Envelope<T>> => (await dispatch(service, channel, args)) as Envelope<T>;
const ok = async <T>(channel: string, args: unknown): Promise<T> => {
  const env = await call<T>(channel, args);
  if (!env.ok) throw new Error(`${channel}: ${env.error.code} ${env.error.message}`);
  return env.result;
};

/** The job's last jobs.changed once it has finished (bounded: the test's own timeout). */
async function finished(id: string): Promise<Job> {
  for (;;) {
    const last = events.filter((e): e is Extract<LiveEvent, { type: 'jobs.changed' }> => e.type === 'jobs.changed' && e.payload.id === id).at(-1)?.payload;
    if (last && last.state !== 'running' && last.state !== 'queued') return last;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function fleetDone(runId: string): Promise<FleetReport> {
  for (;;) {
    const done = events.find((e): e is Extract<LiveEvent, { type: 'fleet.done' }> => e.type === 'fleet.done' && e.payload.runId === runId);
    if (done) return done.payload.report;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['sj1', 'sj2'] });
  // As the CLI runs it: every job change delivered, no prompts during a fleet run.
  service = createHandlers({ home: tempHome(), jobThrottleMs: 0, fleetCredentials: false });
  unsubscribe = service.events.subscribe((e) => events.push(e));
  for (const n of lab.nodes) {
    await ok('nodes.add', { node: { name: n.name, host: n.host, port: n.port, user: n.user, identity: lab.clientKey, knownHosts: lab.knownHosts } });
  }
  watcher = startK3sWatcher(lab.node('sj1'));
});

afterAll(async () => {
  unsubscribe?.();
  await watcher?.stop();
  await service?.dispose();
  await lab?.stop();
});

describe('jobs.startUpload', () => {
  it('refuses bad arguments before anything runs: a relative path, a NUL in --as, an unknown node', async () => {
    const rel = await call('jobs.startUpload', { node: 'sj2', path: 'relative/app.tar' });
    expect(rel).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    const nul = await call('jobs.startUpload', { node: 'sj2', path: '/tmp/app.tar', as: 'a\0.tar' });
    expect(nul).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    const ghost = await call('jobs.startUpload', { node: 'ghost', path: '/tmp/app.tar' });
    expect(ghost).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect((await ok<Job[]>('jobs.list', {})).filter((j) => j.kind === 'upload')).toEqual([]);
  });

  it('uploads into the images dir under --as, verified, and its job carries the result; again: already there', async () => {
    const file = path.join(work, 'up.tar');
    await writeImageArchive(file, { format: 'oci', images: [{ name: 'registry.local/sj/up:1', layerBytes: 3 * 1024 * 1024 }] });
    const before = events.length;
    const job = await ok<Job>('jobs.startUpload', { node: 'sj2', path: file, as: 'sub/up.tar' });
    expect(job).toMatchObject({ kind: 'upload', nodes: [{ node: 'sj2' }], options: { as: 'sub/up.tar' }, archive: { path: file, format: 'oci', compression: 'none', images: 1 } });
    // The local inspection's progress went out before the job started, ending at the whole file.
    const read = events.slice(before).filter((e): e is Extract<LiveEvent, { type: 'local.inspect' }> => e.type === 'local.inspect');
    expect(read.at(-1)?.payload).toEqual({ path: file, bytesRead: job.archive.size, size: job.archive.size });
    const done = await finished(job.id);
    expect(done.state).toBe('succeeded');
    expect(done.nodes[0]).toMatchObject({ state: 'succeeded', phase: 'done', result: { relPath: 'sub/up.tar', uploaded: true, resumedFrom: 0, sha256: job.archive.sha256 } });
    // Every phase went out (the CLI's rows show each), in order.
    const phases = events
      .filter((e): e is Extract<LiveEvent, { type: 'jobs.changed' }> => e.type === 'jobs.changed' && e.payload.id === job.id)
      .map((e) => e.payload.nodes[0]!.phase)
      .filter((p, i, all) => p !== all[i - 1]);
    expect(phases).toEqual(['checking', 'uploading', 'verifying', 'done']);
    expect(existsSync(path.join(lab.node('sj2').hostImagesDir, 'sub', 'up.tar'))).toBe(true);

    const again = await finished((await ok<Job>('jobs.startUpload', { node: 'sj2', path: file, as: 'sub/up.tar' })).id);
    expect(again.nodes[0]?.result).toMatchObject({ relPath: 'sub/up.tar', uploaded: false });
  }, 120_000);

  it('jobs.cancel stops it mid-upload, keeping the partial file, and the next upload resumes from it', async () => {
    const file = path.join(work, 'big.tar');
    await writeImageArchive(file, { format: 'oci', images: [{ name: 'registry.local/sj/big:1', layerBytes: 48 * 1024 * 1024 }] });
    const job = await ok<Job>('jobs.startUpload', { node: 'sj2', path: file });
    // Cancel once bytes are moving (as the CLI's Ctrl-C does).
    for (;;) {
      const last = events.filter((e): e is Extract<LiveEvent, { type: 'jobs.changed' }> => e.type === 'jobs.changed' && e.payload.id === job.id).at(-1)?.payload;
      if (last && last.nodes[0]!.phase === 'uploading' && last.nodes[0]!.bytesDone > 0) break;
      if (last && last.state !== 'running') throw new Error(`the upload ended before it could be cancelled: ${last.state}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await ok<Job>('jobs.cancel', { id: job.id })).toMatchObject({ id: job.id });
    const cancelled = await finished(job.id);
    expect(cancelled.state).toBe('cancelled');
    // Bytes were on the node: the partial file is kept, and the node's message says so.
    expect(cancelled.nodes[0]!.state).toBe('cancelled');
    expect(cancelled.nodes[0]!.message).toMatch(/^The upload of big\.tar to sj2 was cancelled after [1-9][\d.]* [KMG]?i?B of [\d.]+ [KMG]iB; the partial file is kept, run it again to resume\.$/);
    expect(existsSync(path.join(lab.node('sj2').hostImagesDir, '.big.tar.holdfast-partial'))).toBe(true);
    expect(existsSync(path.join(lab.node('sj2').hostImagesDir, 'big.tar'))).toBe(false);
    const again = await finished((await ok<Job>('jobs.startUpload', { node: 'sj2', path: file })).id);
    expect(again.nodes[0]).toMatchObject({ state: 'succeeded', result: { relPath: 'big.tar', uploaded: true } });
    expect(again.nodes[0]!.result!.resumedFrom).toBeGreaterThan(0);
  }, 180_000);

  it('a refused name fails the job with the upload\'s own reason (nothing sent)', async () => {
    const file = path.join(work, 'named.tar');
    await writeImageArchive(file, { format: 'oci', images: [{ name: 'registry.local/sj/named:1' }] });
    const done = await finished((await ok<Job>('jobs.startUpload', { node: 'sj2', path: file, as: 'named.txt' })).id);
    expect(done.state).toBe('failed');
    expect(done.nodes[0]).toMatchObject({ state: 'failed', error: { code: 'REFUSED' } });
    expect(done.nodes[0]?.result).toBeUndefined();
  }, 60_000);
});

describe('jobs.startImport', () => {
  it('checks --parallel and --timeout against their bounds, and --remove-archive needs --pin', async () => {
    const base = { nodes: ['sj1'], path: '/tmp/app.tar', pin: true, removeArchive: false };
    for (const bad of [{ parallel: 0 }, { parallel: 65 }, { parallel: 1.5 }, { timeout: 0 }, { timeout: 3601 }]) {
      expect(await call('jobs.startImport', { ...base, ...bad }), JSON.stringify(bad)).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    }
    const rule = await call('jobs.startImport', { ...base, pin: false, removeArchive: true });
    expect(rule).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(/removing the archive needs its pins made durable first/) } });
  });

  it('imports with parallel and timeout, each node with its result: ok with a summary, or its error', async () => {
    const file = path.join(work, 'imp.tar');
    await writeImageArchive(file, { format: 'docker', images: [{ name: 'docker.io/sj/imp:1' }] });
    // sj2 has no k3s watching its images dir: it runs into the timeout, while sj1's emulated k3s
    // imports well within it even on a loaded machine.
    const job = await ok<Job>('jobs.startImport', { nodes: ['sj1', 'sj2'], path: file, pin: true, removeArchive: false, parallel: 1, timeout: 10 });
    expect(job.options).toEqual({ pin: true, removeArchive: false, parallel: 1, timeout: 10 });
    const done = await finished(job.id);
    expect(done.state).toBe('failed');
    const [one, two] = done.nodes;
    expect(one).toMatchObject({ node: 'sj1', state: 'succeeded', result: { relPath: 'imp.tar', uploaded: true, summary: expect.stringMatching(/^uploaded and imported, \d+ references? pinned and verified .* so the pin becomes k3s-managed again/) } });
    expect(two).toMatchObject({ node: 'sj2', state: 'failed', error: { code: 'TIMEOUT', message: expect.stringMatching(/k3s did not import imp\.tar on sj2 within 10 s/) } });
    expect(two?.result).toBeUndefined();
  }, 120_000);
});

describe('fleet.start', () => {
  it('checks concurrency and timeout, runs with them, and reports through fleet.node and fleet.done', async () => {
    for (const bad of [{ concurrency: 0 }, { concurrency: 1001 }, { timeout: 0 }, { timeout: 3601 }]) {
      expect(await call('fleet.start', bad), JSON.stringify(bad)).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    }
    const run = await ok<{ runId: string; nodes: string[] }>('fleet.start', { concurrency: 1, timeout: 20 });
    expect(run.nodes.sort()).toEqual(['sj1', 'sj2']);
    const report = await fleetDone(run.runId);
    expect(report.nodes.map((n) => [n.node, n.reachable]).sort()).toEqual([
      ['sj1', true],
      ['sj2', true],
    ]);
    const answered = events.filter((e) => e.type === 'fleet.node' && e.payload.runId === run.runId);
    expect(answered).toHaveLength(2);
    expect(await ok<FleetReport | null>('fleet.last', {})).toEqual(report);
  }, 120_000);

  it('fleet.cancel stops a run and its report still arrives, every node in it', async () => {
    const run = await ok<{ runId: string; nodes: string[] }>('fleet.start', { concurrency: 1 });
    expect(await ok('fleet.cancel', { runId: run.runId })).toEqual({ cancelled: true });
    const report = await fleetDone(run.runId);
    expect(report.nodes.map((n) => n.node).sort()).toEqual(['sj1', 'sj2']);
    expect(await ok('fleet.cancel', { runId: run.runId })).toEqual({ cancelled: false });
    expect(await ok('fleet.cancel', { runId: 'no-such-run' })).toEqual({ cancelled: false });
  }, 120_000);
});
