import { describe, expect, it, vi } from 'vitest';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { buildMatrix, filterMatrix, foldRefs, summarizeMatrix } from '../../../src/renderer/fleetMatrix';
import { createAppStore } from '../../../src/renderer/store';
import type { ClientApi } from '../../../src/renderer/api';
import type { LiveEvent } from '../../../src/shared/contract';
import { fakeApi } from '../../doubles/api';

const ref = (name: string, p: Partial<ImageRef> = {}): ImageRef => ({
  name,
  digest: 'sha256:aa',
  mediaType: 'x',
  imageId: 'sha256:11',
  size: 1,
  platforms: [],
  createdAt: null,
  // the labels the pin state is read from (shared/pinState)
  labels: (p.pin ?? 'durable') === 'durable' ? { 'io.cri-containerd.pinned': 'pinned' } : p.pin === 'distro' ? { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' } : {},
  pin: 'durable',
  afterRestart: 'pinned',
  reason: '',
  archive: null,
  ...p,
});
const ok = (node: string, images: ImageRef[]): FleetNodeResult => ({ node, reachable: true, error: null, versions: null, images, archives: [], disk: null });
const down = (node: string): FleetNodeResult => ({
  node,
  reachable: false,
  error: { code: 'TIMEOUT', message: 'no answer' },
  versions: null,
  images: null,
  archives: null,
  disk: null,
});

describe('fleet matrix model', () => {
  it('folds digest references into the tag of the same image, keeps lone digests', () => {
    const rows = foldRefs([ref('a/x:1'), ref('a/x@sha256:aa'), ref('b/y@sha256:bb', { digest: 'sha256:bb', imageId: 'sha256:22' })]);
    expect([...rows.keys()]).toEqual(['a/x:1', 'b/y@sha256:bb']);
    expect(rows.get('a/x:1')!.map((r) => r.name)).toEqual(['a/x:1', 'a/x@sha256:aa']);
  });

  it('marks at-risk cells, drift (missing or pinned differently), unknown columns for unreachable and pending nodes', () => {
    const m = buildMatrix(['n1', 'n2', 'n3', 'n4'], {
      n1: ok('n1', [ref('a:1', { pin: 'distro', afterRestart: 'unpinned', imageId: 'sha256:a1' }), ref('b:1'), ref('c:1')]),
      n2: ok('n2', [ref('a:1', { imageId: 'sha256:a1' }), ref('c:1', { pin: 'none', afterRestart: 'unpinned', imageId: 'sha256:c1' })]),
      n3: down('n3'),
    });
    expect(m.columns.map((c) => c.status)).toEqual(['ok', 'ok', 'unreachable', 'pending']);
    // No image here was ever verified: each known node counts its images (b:1 and c:1 are one on
    // n1); unreachable and pending nodes count none.
    expect(m.columns.map((c) => c.unverified)).toEqual([2, 2, null, null]);
    const signed = { verified: true as const, by: 'f'.repeat(64), format: 'bundle' as const, at: '2026-12-08T00:00:00Z' };
    const v = buildMatrix(['n1'], { n1: ok('n1', [ref('a:1', { imageId: 'sha256:a1', signature: signed }), ref('b:1')]) });
    expect(v.columns[0]!.unverified).toBe(1);
    const a = m.rows.find((r) => r.name === 'a:1')!;
    expect(a.cells[0]).toMatchObject({ pin: 'distro', atRisk: true });
    expect(a.cells[2]!.pin).toBe('unknown');
    expect(a.drift).toBe(false);
    expect(m.rows.find((r) => r.name === 'b:1')).toMatchObject({ drift: true, missing: true });
    expect(m.rows.find((r) => r.name === 'c:1')).toMatchObject({ drift: true, missing: false });
    const s = summarizeMatrix(m);
    expect(s).toMatchObject({ answered: 3, total: 4, unreachable: 1, losingPins: 1, drift: 2, lowDisk: null });
    expect(filterMatrix(m, { group: '', problem: 'drift', query: '' }).rows.map((r) => r.name)).toEqual(['b:1', 'c:1']);
    expect(filterMatrix(m, { group: '', problem: 'atRisk', query: '' }).rows.map((r) => r.name)).toEqual(['a:1']);
    expect(filterMatrix(m, { group: '', problem: 'unreachable', query: '' }).columns).toEqual([2]);
    expect(filterMatrix(m, { group: '', problem: 'all', query: 'B:' }).rows.map((r) => r.name)).toEqual(['b:1']);
  });
});

describe('fleet matrix: the image verdict of the one protection model (issue #16)', () => {
  // The tag durable, the digest reference k3s added after its labels still k3s-pinned.
  const raced = [ref('registry.local/app:3'), ref('registry.local/app@sha256:aa', { pin: 'distro', afterRestart: 'unpinned', reason: 'k3s strips this pin at start' })];
  const on = (containerdVersion: string): FleetNodeResult => ({
    ...ok('n3', raced),
    versions: { containerdVersion, containerdRevision: 'x', distro: 'k3s', distroVersion: 'v1.35.1+k3s1' },
  });

  it('on containerd 2.x the image is kept: no cell at risk, no pin lost on the column', () => {
    const m = buildMatrix(['n3'], { n3: on('2.1.9') });
    expect(m.rows.map((r) => [r.name, r.cells[0]!.atRisk])).toEqual([['registry.local/app:3', false]]);
    expect(m.columns[0]!.losingPins).toBe(0);
    expect(m.rows[0]!.cells[0]!.reason).toMatch(/kubelet keeps the image/);
  });

  it('on 1.7.3–1.7.9 it is at risk, with the reason naming the reference without the pin', () => {
    const m = buildMatrix(['n3'], { n3: on('1.7.5') });
    expect(m.rows[0]!.cells[0]).toMatchObject({ atRisk: true, reason: expect.stringMatching(/registry\.local\/app@sha256:aa is not pinned/) });
    expect(summarizeMatrix(m)).toMatchObject({ losingPins: 1, nodesAtRisk: 1 });
  });
});

describe('store: credentials and fleet runs', () => {
  function api(overrides: Partial<ClientApi> = {}) {
    return fakeApi({
      pendingCredentials: vi.fn<ClientApi['pendingCredentials']>(async () => ({ ok: true, result: [] })),
      answerCredentials: vi.fn<ClientApi['answerCredentials']>(async () => ({ ok: true, result: { answered: true } })),
      startFleetInspection: vi.fn<ClientApi['startFleetInspection']>(async () => ({ ok: true, result: { runId: 'r1', nodes: ['n1', 'n2'] } })),
      ...overrides,
    });
  }
  const req = (id: string): LiveEvent => ({ type: 'credentials.request', payload: { id, kind: 'password', subject: 'u@h', prompts: [{ prompt: 'Password:', echo: false }] } });

  it('queues requests, sends answers once and keeps no secret in the state', async () => {
    const a = api();
    const store = createAppStore(a);
    store.getState().applyEvent(req('1'));
    store.getState().applyEvent(req('2'));
    store.getState().applyEvent(req('1'));
    expect(store.getState().credentials.map((r) => r.id)).toEqual(['1', '2']);
    await store.getState().answerCredentials('1', ['s3cret']);
    expect(a.answerCredentials).toHaveBeenCalledWith({ id: '1', answers: ['s3cret'] });
    expect(store.getState().credentials.map((r) => r.id)).toEqual(['2']);
    // A repeated event for an answered request does not reopen it.
    store.getState().applyEvent(req('1'));
    expect(store.getState().credentials.map((r) => r.id)).toEqual(['2']);
    expect(JSON.stringify(store.getState(), (_k, v) => (typeof v === 'function' ? undefined : v))).not.toContain('s3cret');
  });

  it('fleet: events that arrive before startFleetInspection answers are kept; other runs are ignored', async () => {
    let resolve!: (v: Awaited<ReturnType<ClientApi['startFleetInspection']>>) => void;
    const a = api({ startFleetInspection: vi.fn<ClientApi['startFleetInspection']>(() => new Promise((r) => (resolve = r))) });
    const store = createAppStore(a);
    const p = store.getState().startFleet();
    store.getState().applyEvent({ type: 'fleet.node', payload: { runId: 'r1', result: ok('n1', [ref('a:1')]) } });
    resolve({ ok: true, result: { runId: 'r1', nodes: ['n1', 'n2'] } });
    await p;
    expect(store.getState().fleetRun).toMatchObject({ state: 'running', runId: 'r1' });
    expect(Object.keys(store.getState().fleetRun.results)).toEqual(['n1']);
    store.getState().applyEvent({ type: 'fleet.node', payload: { runId: 'other', result: down('n2') } });
    expect(Object.keys(store.getState().fleetRun.results)).toEqual(['n1']);
    store.getState().applyEvent({ type: 'fleet.node', payload: { runId: 'r1', result: down('n2') } });
    expect(Object.keys(store.getState().fleetRun.results)).toEqual(['n1', 'n2']);
  });
});
