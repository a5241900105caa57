import { describe, expect, it, vi } from 'vitest';
import type { Envelope, HoldfastApi } from '../../../src/shared/contract';
import type { LocalArchive } from '../../../src/shared/domain/archives';
import type { NodeStatus } from '../../../src/shared/domain/connection';
import type { Job, JobNodeProgress } from '../../../src/shared/domain/jobs';
import { createAppStore, imagesOf, statusOf } from '../../../src/renderer/store';
import type { NeedsReport } from '../../../src/shared/needs';
import { nodeDef } from '../../support/nodeDef';

const node = nodeDef;
const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });
const INFO = { containerdVersion: '2.0.4', containerdRevision: 'r', distro: 'k3s' as const, distroVersion: 'v1.31.9+k3s1' };
const NEEDS: NeedsReport = { basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on a' }], notes: [], missing: [], atRisk: 0 };
const FP = `SHA256:${'A'.repeat(43)}`;

const local = (path: string): LocalArchive => ({
  path,
  size: 10,
  sha256: 'ab'.repeat(32),
  format: 'docker',
  compression: 'gzip',
  images: [{ name: 'x/app:1', platforms: ['linux/amd64'], configDigest: null, configDigests: [] }],
  uncompressedBytes: 20,
  warnings: [],
});

const nodeProgress = (node: string, state: JobNodeProgress['state'] = 'running'): JobNodeProgress => ({
  node,
  state,
  phase: state === 'succeeded' ? 'done' : 'uploading',
  bytesDone: 0,
  bytesTotal: 10,
  rate: 0,
  eta: null,
  message: '',
});

function job(id: string, nodes: string[], o: { path?: string; pin?: boolean; removeArchive?: boolean; direct?: boolean; states?: JobNodeProgress['state'][] } = {}): Job {
  const states = o.states ?? nodes.map(() => 'running' as const);
  const finished = states.every((st) => st !== 'running' && st !== 'queued');
  return {
    id,
    kind: 'import',
    title: `Import to ${nodes.join(', ')}`,
    state: !finished ? 'running' : states.every((st) => st === 'succeeded') ? 'succeeded' : 'failed',
    createdAt: '2026-01-01T00:00:00Z',
    finishedAt: finished ? '2026-01-01T00:01:00Z' : null,
    progress: finished ? 1 : 0.5,
    nodes: nodes.map((n, i) => nodeProgress(n, states[i])),
    archive: { path: o.path ?? '/tmp/a.tar', size: 10, sha256: null },
    options: { pin: o.pin ?? true, removeArchive: o.removeArchive ?? true, ...(o.direct ? { direct: true } : {}) },
  };
}

function fakeApi(overrides: Partial<HoldfastApi> = {}): HoldfastApi {
  return {
    listNodes: vi.fn(async () => ok([node('a'), node('b')])),
    addNode: vi.fn(async ({ node: n }) => ok({ ...node(n.name), ...n })),
    updateNode: vi.fn(async ({ node: n }) => ok({ ...node(n.name), ...n })),
    removeNode: vi.fn(async ({ name }) => ok({ removed: name })),
    connectNode: vi.fn(async ({ name }): Promise<Envelope<NodeStatus>> => ok({ name, state: 'connected' })),
    trustHostKey: vi.fn(async () => ok({ recorded: '/k' })),
    listImages: vi.fn(async () => ok([])),
    getImagesReport: vi.fn(async () => ok({ images: [], lost: [], info: INFO, needs: NEEDS })),
    listArchives: vi.fn(async () => ok([])),
    planPins: vi.fn(async ({ node: n, action }) => ok({ node: n, action, changes: [], unchanged: [] })),
    applyPins: vi.fn(async ({ node: n, action }) => ok({ node: n, action, changes: [], unchanged: [] })),
    listLostPins: vi.fn(async () => ok([])),
    checkArchiveRemoval: vi.fn(async ({ node: n, path }) => ok({ node: n, path, allowed: true, problems: [], images: [] })),
    removeArchive: vi.fn(async ({ node: n, path }) =>
      ok({ time: '2026-01-01T00:00:00Z', user: 'tech', node: n, action: 'rm-archive' as const, archive: { path, size: 1, sha256: 'sha256:00' } }),
    ),
    listAudit: vi.fn(async () => ok([])),
    pickArchives: vi.fn(async () => ({ ok: false as const, error: { code: 'INVALID_INPUT' as const, message: 'there is no file dialog in the browser UI' } })),
    inspectLocalArchive: vi.fn(async ({ path }) => ok(local(path))),
    pickSignatureFiles: vi.fn(async () => ({ ok: false as const, error: { code: 'INVALID_INPUT' as const, message: 'there is no file dialog in the browser UI' } })),
    checkArchiveSignatures: vi.fn(async ({ path }) => ok({ path, images: [] })),
    startImport: vi.fn(async ({ nodes, path, pin, removeArchive }) => ok(job(`j-${path}`, nodes, { path, pin, removeArchive }))),
    listJobs: vi.fn(async () => ok([])),
    cancelJob: vi.fn(async ({ id }) => ok({ ...job(id, ['a']), state: 'cancelled' as const })),
    answerCredentials: vi.fn(async () => ok({ answered: true as const })),
    pendingCredentials: vi.fn(async () => ok([])),
    startFleetInspection: vi.fn(async ({ nodes }) => ok({ runId: 'r1', nodes: nodes ?? ['a', 'b'] })),
    lastFleetReport: vi.fn(async () => ok(null)),
    exportFleetReport: vi.fn(async ({ format }) => ok({ filename: `fleet.${format}`, mime: 'text/plain', content: 'x' })),
    savePinSet: vi.fn(async () => ok({ saved: null })),
    getDiskPicture: vi.fn(async () => ({ ok: false as const, error: { code: 'NOT_FOUND' as const, message: 'not in this test' } })),
    planPrune: vi.fn(async ({ node: n, keepVersions }) => ok({ node: n, keepVersions: keepVersions ?? 2, remove: [], kept: [], freedBytes: 0, storeBytes: 0, imagesBefore: 0 })),
    applyPrune: vi.fn(async ({ node: n }) => ok({ node: n, keepVersions: 2, removed: [], refused: [], failed: [], plannedBytes: 0, freedBytes: 0, audit: null })),
    verifySignatures: vi.fn(async ({ nodes }) => ok(nodes.map((n: string) => ({ node: n, ok: true as const, dryRun: true, images: [], recorded: 0 })))),
    ...overrides,
  };
}

describe('app store', () => {
  it('init with several nodes lands on the fleet overview, connects all and lists every connected node’s images', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    const s = store.getState();
    expect(s.nodesState).toBe('ready');
    expect(s.view).toBe('fleet');
    expect(s.selected).toBe('a');
    expect(statusOf(s, 'a').state).toBe('connected');
    expect(statusOf(s, 'b').state).toBe('connected');
    expect(api.getImagesReport).toHaveBeenCalledTimes(2);
    expect(imagesOf(s, 'a').state).toBe('ready');
    expect(imagesOf(s, 'b').state).toBe('ready');
  });

  it('init with one node opens it and lists only its images', async () => {
    const api = fakeApi({ listNodes: vi.fn(async () => ok([node('a')])) });
    const store = createAppStore(api);
    await store.getState().init();
    expect(store.getState().view).toBe('node');
    expect(api.getImagesReport).toHaveBeenCalledTimes(1);
    expect(api.getImagesReport).toHaveBeenCalledWith({ node: 'a' });
  });

  it('keeps a node-list failure as an error to show', async () => {
    const error = { code: 'INTERNAL' as const, message: 'config unreadable' };
    const store = createAppStore(fakeApi({ listNodes: async () => ({ ok: false, error }) }));
    await store.getState().init();
    expect(store.getState()).toMatchObject({ nodesState: 'error', nodesError: error });
  });

  it('records connect failures from either the envelope or the status', async () => {
    const error = { code: 'HOST_KEY_UNKNOWN' as const, message: 'unknown', fingerprint: FP };
    const api = fakeApi({
      connectNode: async ({ name }) =>
        name === 'a' ? { ok: false, error: { code: 'UNREACHABLE', message: 'no route' } } : ok({ name, state: 'error', error }),
    });
    const store = createAppStore(api);
    await store.getState().init();
    expect(statusOf(store.getState(), 'a')).toMatchObject({ state: 'error', error: { code: 'UNREACHABLE' } });
    expect(statusOf(store.getState(), 'b')).toMatchObject({ state: 'error', error });
  });

  it('trustAndConnect records the fingerprint, then reconnects', async () => {
    let trusted = false;
    const api = fakeApi({
      connectNode: async ({ name }) =>
        ok(trusted ? { name, state: 'connected' } : { name, state: 'error', error: { code: 'HOST_KEY_UNKNOWN', message: 'x', fingerprint: FP } }),
      trustHostKey: vi.fn(async () => {
        trusted = true;
        return ok({ recorded: '/k' });
      }),
    });
    const store = createAppStore(api);
    await store.getState().init();
    expect(await store.getState().trustAndConnect('a', FP)).toBeNull();
    expect(api.trustHostKey).toHaveBeenCalledWith({ name: 'a', fingerprint: FP });
    expect(statusOf(store.getState(), 'a').state).toBe('connected');
  });

  it('a late connect answer never overwrites a newer one', async () => {
    const resolvers: ((e: Envelope<NodeStatus>) => void)[] = [];
    const api = fakeApi({ connectNode: () => new Promise((r) => resolvers.push(r)) });
    const store = createAppStore(api);
    store.setState({ nodes: [node('a')], nodesState: 'ready', selected: null });
    const first = store.getState().connect('a');
    const second = store.getState().connect('a');
    resolvers[1]!(ok({ name: 'a', state: 'connected' }));
    await second;
    resolvers[0]!({ ok: false, error: { code: 'TIMEOUT', message: 'old' } });
    await first;
    expect(statusOf(store.getState(), 'a').state).toBe('connected');
  });

  it('add, update (rename) and remove keep the selection sensible', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    expect(await store.getState().addNode({ name: 'c', host: 'c.lan' })).toBeNull();
    expect(store.getState().selected).toBe('c');
    expect(store.getState().nodes.map((n) => n.name)).toEqual(['a', 'b', 'c']);

    expect(await store.getState().updateNode('c', { name: 'd', host: 'd.lan' })).toBeNull();
    expect(store.getState().selected).toBe('d');
    expect(store.getState().nodes.map((n) => n.name)).toEqual(['a', 'b', 'd']);
    expect(store.getState().statuses['c']).toBeUndefined();

    expect(await store.getState().removeNode('d')).toBeNull();
    expect(store.getState().selected).toBe('a');
    expect(store.getState().nodes.map((n) => n.name)).toEqual(['a', 'b']);
  });

  it('returns mutation errors for the form to show', async () => {
    const error = { code: 'CONFLICT' as const, message: 'exists' };
    const store = createAppStore(fakeApi({ addNode: async () => ({ ok: false, error }) }));
    expect(await store.getState().addNode({ name: 'a', host: 'h' })).toEqual(error);
  });
});

describe('archives, audit and changes', () => {
  it('archives and the log load per node; a change refreshes images and the views already loaded', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    const { archivesOf, auditOf } = await import('../../../src/renderer/store');
    expect(archivesOf(store.getState(), 'a').state).toBe('idle');
    await store.getState().loadArchives('a');
    expect(archivesOf(store.getState(), 'a').state).toBe('ready');
    expect(api.listArchives).toHaveBeenCalledWith({ node: 'a' });

    const images = (api.getImagesReport as ReturnType<typeof vi.fn>).mock.calls.length;
    const env = await store.getState().applyPinsAndRefresh('a', 'pin', { archive: 'apps.tar' });
    expect(env.ok).toBe(true);
    expect(api.applyPins).toHaveBeenCalledWith({ node: 'a', action: 'pin', target: { archive: 'apps.tar' } });
    expect((api.getImagesReport as ReturnType<typeof vi.fn>).mock.calls.length).toBe(images + 1);
    expect(api.listArchives).toHaveBeenCalledTimes(2); // was loaded → reloaded
    expect(api.listAudit).not.toHaveBeenCalled(); // never shown → not loaded
    expect(auditOf(store.getState(), 'a').state).toBe('idle');
  });

  it('removeArchive sends force and confirm only when forcing', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().removeArchive('a', 'x.tar');
    await store.getState().removeArchive('a', 'x.tar', { confirm: 'x.tar' });
    expect((api.removeArchive as ReturnType<typeof vi.fn>).mock.calls.map((c) => c[0])).toEqual([
      { node: 'a', path: 'x.tar' },
      { node: 'a', path: 'x.tar', force: true, confirm: 'x.tar' },
    ]);
  });

  it('keeps the previous archives when a reload fails', async () => {
    const error = { code: 'UNREACHABLE' as const, message: 'gone' };
    let fail = false;
    const api = fakeApi({
      listArchives: vi.fn(async () =>
        fail
          ? ({ ok: false, error } as const)
          : ok([{ path: 'a.tar', kind: 'archive' as const, compression: 'none' as const, size: 1, mtime: '', images: [], imported: true, safeToRemove: true, reason: '', cachedByK3s: false }]),
      ),
    });
    const store = createAppStore(api);
    const { archivesOf } = await import('../../../src/renderer/store');
    await store.getState().loadArchives('a');
    fail = true;
    await store.getState().loadArchives('a');
    const s = archivesOf(store.getState(), 'a');
    expect(s.state).toBe('error');
    expect(s.error).toEqual(error);
    expect(s.items).toHaveLength(1);
  });

  // ---- Import wizard and jobs ----

  const settle = () => new Promise((r) => setTimeout(r, 0));

  it('adds archive paths once each and inspects every new one; refused ones keep their reason', async () => {
    const refused = { code: 'REFUSED' as const, message: 'broken.tar.gz was refused: truncated' };
    const api = fakeApi({
      inspectLocalArchive: vi.fn(async ({ path }) => (path.includes('broken') ? { ok: false as const, error: refused } : ok(local(path)))),
    });
    const store = createAppStore(api);
    store.getState().addArchivePaths(['/b/apps.tar', '/tmp/broken.tar.gz', '/b/apps.tar']);
    store.getState().addArchivePaths(['/b/apps.tar']);
    expect(store.getState().wizard.archives.map((a) => a.state)).toEqual(['inspecting', 'inspecting']);
    await settle();
    expect(api.inspectLocalArchive).toHaveBeenCalledTimes(2);
    const [a, b] = store.getState().wizard.archives;
    expect(a).toMatchObject({ path: '/b/apps.tar', state: 'ok', archive: { format: 'docker' } });
    expect(b).toMatchObject({ path: '/tmp/broken.tar.gz', state: 'refused', error: refused });
    store.getState().removeArchivePath('/tmp/broken.tar.gz');
    expect(store.getState().wizard.archives).toHaveLength(1);
  });

  it('pickArchives adds what the dialog chose, or hands back the error when there is no dialog', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    expect(await store.getState().pickArchives()).toMatchObject({ code: 'INVALID_INPUT' });
    expect(store.getState().wizard.archives).toEqual([]);
    api.pickArchives = vi.fn(async () => ok({ paths: ['/a.tar', '/b.tar.zst'] }));
    const store2 = createAppStore(api);
    expect(await store2.getState().pickArchives()).toBeNull();
    expect(store2.getState().wizard.archives.map((a) => a.path)).toEqual(['/a.tar', '/b.tar.zst']);
  });

  it('turning "make pins durable" off turns "remove the archive" off too', () => {
    const store = createAppStore(fakeApi());
    expect(store.getState().wizard).toMatchObject({ pin: true, removeArchive: true });
    store.getState().setWizard({ pin: false, removeArchive: true });
    expect(store.getState().wizard).toMatchObject({ pin: false, removeArchive: false });
  });

  it('straight into containerd: pins always durable, no archive to remove, and the start asks for it (issue #35)', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().addArchivePaths(['/x/one.tar']);
    await settle();
    store.getState().setWizard({ step: 'nodes', nodes: ['a'], pin: false, removeArchive: false });
    store.getState().setWizard({ direct: true });
    expect(store.getState().wizard).toMatchObject({ direct: true, pin: true, removeArchive: false });
    // Nothing in the wizard can turn them back while direct is chosen: the shared rule holds.
    store.getState().setWizard({ pin: false, removeArchive: true });
    expect(store.getState().wizard).toMatchObject({ direct: true, pin: true, removeArchive: false });
    await store.getState().startImports();
    expect(api.startImport).toHaveBeenLastCalledWith({ nodes: ['a'], path: '/x/one.tar', pin: true, removeArchive: false, direct: true });
    expect(store.getState().wizard).toMatchObject({ step: 'run', jobIds: ['j-/x/one.tar'] });
  });

  it('back to the images dir brings its defaults back; an images-dir start never says direct', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().addArchivePaths(['/x/one.tar']);
    await settle();
    store.getState().setWizard({ step: 'nodes', nodes: ['a'], direct: true });
    store.getState().setWizard({ direct: false });
    expect(store.getState().wizard).toMatchObject({ direct: false, pin: true, removeArchive: true });
    store.getState().setWizard({ direct: true });
    store.getState().setWizard({ direct: false, pin: false });
    expect(store.getState().wizard).toMatchObject({ direct: false, pin: false, removeArchive: false });
    await store.getState().startImports();
    const call = (api.startImport as ReturnType<typeof vi.fn>).mock.calls[0]![0];
    expect(call).toEqual({ nodes: ['a'], path: '/x/one.tar', pin: false, removeArchive: false });
    expect('direct' in call).toBe(false);
  });

  it('run again on a direct delivery delivers directly again', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    const done = job('old', ['a', 'b'], { path: '/x/one.tar', pin: true, removeArchive: false, direct: true, states: ['succeeded', 'failed'] });
    store.setState({ jobs: [done] });
    expect(await store.getState().retryJob('old')).toBeNull();
    expect(api.startImport).toHaveBeenLastCalledWith({ nodes: ['b'], path: '/x/one.tar', pin: true, removeArchive: false, direct: true });
  });

  it('the nodes step preselects every node not known to be unreachable; a choice made there is kept', async () => {
    const api = fakeApi({
      listNodes: vi.fn(async () => ok([node('a'), node('b'), node('c')])),
      connectNode: vi.fn(async ({ name }) =>
        name === 'b' ? { ok: false as const, error: { code: 'UNREACHABLE' as const, message: 'Cannot reach b:22.' } } : ok({ name, state: 'connected' as const }),
      ),
    });
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().openImport();
    expect(store.getState()).toMatchObject({ view: 'import', wizard: { step: 'choose', nodes: [] } });
    store.getState().setWizard({ step: 'nodes' });
    expect(store.getState().wizard.nodes).toEqual(['a', 'c']);
    store.getState().setWizard({ nodes: ['c'] });
    store.getState().setWizard({ step: 'review' });
    store.getState().select('b');
    expect(store.getState().view).toBe('node');
    store.getState().openImport();
    store.getState().setWizard({ step: 'nodes' });
    expect(store.getState().wizard.nodes).toEqual(['c']); // kept: the wizard is where the user left it
    store.getState().resetImport();
    store.getState().setWizard({ step: 'nodes' });
    expect(store.getState().wizard.nodes).toEqual(['a', 'c']);
  });

  it('starts one import per inspected archive, skips refused ones, then moves to the summary when all end', async () => {
    const listed: Job[] = [];
    const api = fakeApi({
      inspectLocalArchive: vi.fn(async ({ path }) => (path.endsWith('.xz') ? { ok: false as const, error: { code: 'REFUSED' as const, message: 'suffix' } } : ok(local(path)))),
      listJobs: vi.fn(async () => ok(listed)),
    });
    const store = createAppStore(api);
    await store.getState().init();
    // Only a's images were ever looked at (b's view was never loaded).
    store.setState((s) => ({ images: { a: s.images['a']! } }));
    store.getState().addArchivePaths(['/x/one.tar', '/x/two.tar.gz', '/x/bad.tar.xz']);
    await settle();
    store.getState().setWizard({ nodes: ['a', 'b', 'gone'] });
    await store.getState().startImports();
    expect((api.startImport as ReturnType<typeof vi.fn>).mock.calls.map((c) => c[0])).toEqual([
      { nodes: ['a', 'b'], path: '/x/one.tar', pin: true, removeArchive: true },
      { nodes: ['a', 'b'], path: '/x/two.tar.gz', pin: true, removeArchive: true },
    ]);
    expect(store.getState().wizard).toMatchObject({ step: 'run', jobIds: ['j-/x/one.tar', 'j-/x/two.tar.gz'] });
    expect(store.getState().jobs).toHaveLength(2);

    // One finishes: still running. Both finish: summary, and the loaded node views refresh.
    (api.getImagesReport as ReturnType<typeof vi.fn>).mockClear();
    listed.push(job('j-/x/one.tar', ['a', 'b'], { states: ['succeeded', 'failed'] }), job('j-/x/two.tar.gz', ['a', 'b']));
    await store.getState().loadJobs();
    expect(store.getState().wizard.step).toBe('run');
    expect(api.getImagesReport).toHaveBeenCalledWith({ node: 'a' }); // a's images were loaded: refreshed
    expect(api.getImagesReport).not.toHaveBeenCalledWith({ node: 'b' }); // b's were never shown
    listed[1] = job('j-/x/two.tar.gz', ['a', 'b'], { states: ['succeeded', 'succeeded'] });
    await store.getState().loadJobs();
    expect(store.getState().wizard.step).toBe('summary');
  });

  it('a refused start stays on the nodes step with the error', async () => {
    const error = { code: 'REFUSED' as const, message: 'a.tar changed since it was checked' };
    const api = fakeApi({ startImport: vi.fn(async () => ({ ok: false as const, error })) });
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().addArchivePaths(['/a.tar']);
    await settle();
    store.getState().setWizard({ step: 'nodes', nodes: ['a'] });
    await store.getState().startImports();
    expect(store.getState().wizard).toMatchObject({ step: 'nodes', jobIds: [], startErrors: [{ path: '/a.tar', error }] });
  });

  it('run again starts the archive on the failed nodes only, with the same options, in place of the old job', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    const done = job('old', ['a', 'b'], { path: '/x/one.tar', pin: true, removeArchive: false, states: ['succeeded', 'failed'] });
    store.setState({ jobs: [done], wizard: { ...store.getState().wizard, step: 'summary', jobIds: ['old'] } });
    expect(await store.getState().retryJob('old')).toBeNull();
    expect(api.startImport).toHaveBeenLastCalledWith({ nodes: ['b'], path: '/x/one.tar', pin: true, removeArchive: false });
    expect(store.getState().wizard).toMatchObject({ step: 'run', jobIds: ['j-/x/one.tar'] });
  });

  it('cancel merges the answer; failures come back as the error', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    expect(await store.getState().cancelJob('j1')).toBeNull();
    expect(store.getState().jobs[0]).toMatchObject({ id: 'j1', state: 'cancelled' });
    api.cancelJob = vi.fn(async () => ({ ok: false as const, error: { code: 'NOT_FOUND' as const, message: 'no job j2' } }));
    expect(await createAppStore(api).getState().cancelJob('j2')).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('polls jobs fast while one runs, slowly otherwise, and stops when asked', async () => {
    vi.useFakeTimers();
    try {
      let running = true;
      const api = fakeApi({ listJobs: vi.fn(async () => ok([job('j', ['a'], { states: [running ? 'running' : 'succeeded'] })])) });
      const store = createAppStore(api, { pollRunningMs: 500, pollIdleMs: 4000 });
      const stop = store.getState().startJobPolling();
      await vi.advanceTimersByTimeAsync(0);
      expect(api.listJobs).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(1000);
      expect(api.listJobs).toHaveBeenCalledTimes(3);
      running = false;
      await vi.advanceTimersByTimeAsync(500); // sees it finished
      const n = (api.listJobs as ReturnType<typeof vi.fn>).mock.calls.length;
      await vi.advanceTimersByTimeAsync(3000);
      expect(api.listJobs).toHaveBeenCalledTimes(n);
      await vi.advanceTimersByTimeAsync(1000);
      expect(api.listJobs).toHaveBeenCalledTimes(n + 1);
      stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(api.listJobs).toHaveBeenCalledTimes(n + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('images with the site’s needs', () => {
  const need = { verdict: 'unprotected' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads: [{ kind: 'Deployment', namespace: 'default', name: 'web', why: 'running' }], neededBecause: 'needed by Deployment default/web (running)', because: 'needed by Deployment default/web (running); not pinned: kubelet may delete it' };
  const image = { name: 'docker.io/library/web:1', digest: 'sha256:aa', mediaType: 'x', imageId: 'sha256:11', size: 1, platforms: [], createdAt: null, labels: {}, pin: 'none' as const, afterRestart: 'unpinned' as const, reason: '', archive: null, need };
  const report: NeedsReport = {
    basis: 'known',
    sources: [{ kind: 'cluster', label: 'kubectl on a' }],
    notes: [],
    missing: [{ ref: 'docker.io/library/job:2', workloads: [], source: 'cluster', because: 'needed by CronJob default/job (CronJob between runs); not on this node', heldBy: ['node b'] }],
    atRisk: 2,
  };

  it('loads a node’s images through the images report and keeps its NeedsReport beside them', async () => {
    const api = fakeApi({ getImagesReport: vi.fn(async () => ok({ images: [image], lost: [], info: INFO, needs: report })) });
    const store = createAppStore(api);
    await store.getState().init();
    const a = imagesOf(store.getState(), 'a');
    expect(a).toMatchObject({ state: 'ready', items: [image], needs: report });
    expect(api.listImages).not.toHaveBeenCalled();
  });

  it('a failed report keeps the images shown before, with the error', async () => {
    const error = { code: 'UNREACHABLE' as const, message: 'no route' };
    const answers = [ok({ images: [image], lost: [], info: INFO, needs: report }), { ok: false as const, error }];
    const api = fakeApi({ getImagesReport: vi.fn(async () => answers.shift()!) });
    const store = createAppStore(api);
    await store.getState().loadImages('a');
    await store.getState().loadImages('a');
    expect(imagesOf(store.getState(), 'a')).toMatchObject({ state: 'error', error, items: [image], needs: report });
  });
});
