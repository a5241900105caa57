import { describe, expect, it, vi } from 'vitest';
import type { Envelope, HoldfastApi } from '../../../src/shared/contract';
import type { NodeDef, NodeStatus } from '../../../src/shared/domain';
import { createAppStore, imagesOf, statusOf } from '../../../src/renderer/store';

const node = (name: string): NodeDef => ({
  name,
  host: `${name}.lan`,
  port: 22,
  user: 'root',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  namespace: 'k8s.io',
});
const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });
const FP = `SHA256:${'A'.repeat(43)}`;

function fakeApi(overrides: Partial<HoldfastApi> = {}): HoldfastApi {
  return {
    listNodes: vi.fn(async () => ok([node('a'), node('b')])),
    addNode: vi.fn(async ({ node: n }) => ok({ ...node(n.name), ...n })),
    updateNode: vi.fn(async ({ node: n }) => ok({ ...node(n.name), ...n })),
    removeNode: vi.fn(async ({ name }) => ok({ removed: name })),
    connectNode: vi.fn(async ({ name }): Promise<Envelope<NodeStatus>> => ok({ name, state: 'connected' })),
    trustHostKey: vi.fn(async () => ok({ recorded: '/k' })),
    listImages: vi.fn(async () => ok([])),
    listArchives: vi.fn(async () => ok([])),
    planPins: vi.fn(async ({ node: n, action }) => ok({ node: n, action, changes: [], unchanged: [] })),
    applyPins: vi.fn(async ({ node: n, action }) => ok({ node: n, action, changes: [], unchanged: [] })),
    checkArchiveRemoval: vi.fn(async ({ node: n, path }) => ok({ node: n, path, allowed: true, problems: [], images: [] })),
    removeArchive: vi.fn(async ({ node: n, path }) =>
      ok({ time: '2026-01-01T00:00:00Z', user: 'tech', node: n, action: 'rm-archive' as const, archive: { path, size: 1, sha256: 'sha256:00' } }),
    ),
    listAudit: vi.fn(async () => ok([])),
    ...overrides,
  };
}

describe('app store', () => {
  it('init loads nodes, selects the first, connects all and lists images of the selected one only', async () => {
    const api = fakeApi();
    const store = createAppStore(api);
    await store.getState().init();
    const s = store.getState();
    expect(s.nodesState).toBe('ready');
    expect(s.selected).toBe('a');
    expect(statusOf(s, 'a').state).toBe('connected');
    expect(statusOf(s, 'b').state).toBe('connected');
    expect(api.listImages).toHaveBeenCalledTimes(1);
    expect(api.listImages).toHaveBeenCalledWith({ node: 'a' });
    expect(imagesOf(s, 'a').state).toBe('ready');
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

    const images = (api.listImages as ReturnType<typeof vi.fn>).mock.calls.length;
    const env = await store.getState().applyPins('a', 'pin', { archive: 'apps.tar' });
    expect(env.ok).toBe(true);
    expect(api.applyPins).toHaveBeenCalledWith({ node: 'a', action: 'pin', target: { archive: 'apps.tar' } });
    expect((api.listImages as ReturnType<typeof vi.fn>).mock.calls.length).toBe(images + 1);
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
});
