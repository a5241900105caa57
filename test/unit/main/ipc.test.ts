import type { NeedsReport } from '../../../src/shared/needs';
import { describe, expect, it, vi } from 'vitest';
import { IPC_CHANNELS, registerIpc, type IpcInvokeEventLike } from '../../../src/main/ipc';
import { HoldfastError } from '../../../src/core/errors';
import { channels } from '../../../src/shared/contract';
import type { Handlers } from '../../../src/shared/handlers';
import type { NodeInfo } from '../../../src/shared/domain/nodes';
import { isPacked, unpackEnvelope } from '../../../src/shared/wirePack';
import { generateRefs } from '../../doubles/catalog';

const NO_NEEDS: NeedsReport = { basis: 'provenance', sources: [], noSource: 'no k3s or RKE2 kubectl on the node', notes: [], missing: [], atRisk: 0 };
const INFO: NodeInfo = { containerdVersion: '2.0.0', containerdRevision: 'r', distro: 'k3s', distroVersion: null };

type Listener = (event: IpcInvokeEventLike, ...args: unknown[]) => Promise<unknown>;

function fakeIpcMain() {
  const handlers = new Map<string, Listener>();
  return {
    handle: vi.fn((channel: string, fn: Listener) => {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, fn);
    }),
    removeHandler: vi.fn((channel: string) => handlers.delete(channel)),
    invoke: (channel: string, ...args: unknown[]) => handlers.get(channel)!({ senderFrame: { url: 'file:///app/index.html' } }, ...args),
    handlers,
  };
}

function fakeHandlers(): Handlers {
  return {
    'nodes.list': vi.fn(async () => []),
    'nodes.add': vi.fn(async ({ node }) => ({
      port: 22,
      user: 'root',
      socket: '/run/k3s/containerd/containerd.sock',
      imagesDir: '/var/lib/rancher/k3s/agent/images',
      namespace: 'k8s.io',
      ...node,
    })),
    'nodes.update': vi.fn(async () => {
      throw new HoldfastError('NOT_FOUND', 'No node named "x".', { hint: 'Check the name.' });
    }),
    'nodes.remove': vi.fn(async ({ name }) => ({ removed: name })),
    'nodes.connect': vi.fn(async ({ name }) => ({ name, state: 'connected' as const })),
    'nodes.trustHostKey': vi.fn(async () => ({ recorded: '/k' })),
    'images.list': vi.fn(async () => {
      throw new Error('boom');
    }),
    'archives.list': vi.fn(async () => []),
    'pins.plan': vi.fn(async ({ node, action }) => ({ node, action, changes: [], unchanged: [] })),
    'pins.apply': vi.fn(async ({ node, action }) => ({ node, action, changes: [], unchanged: [] })),
    'pins.lost': vi.fn(async () => []),
    'images.report': vi.fn(async () => ({ images: [], lost: [], info: INFO, needs: NO_NEEDS })),
    'nodes.info': vi.fn(async () => INFO),
    'archives.check': vi.fn(async ({ node, path }) => ({ node, path, allowed: true, problems: [], images: [] })),
    'archives.remove': vi.fn(async ({ node, path }) => ({
      time: '2026-01-01T00:00:00Z',
      user: 'tech',
      node,
      action: 'rm-archive' as const,
      archive: { path, size: 1, sha256: 'sha256:00' },
    })),
    'audit.list': vi.fn(async () => []),
    'local.pickArchives': vi.fn(async () => {
      throw new HoldfastError('INVALID_INPUT', 'there is no file dialog in the browser UI');
    }),
    'local.pickSignatureFiles': vi.fn(async () => ({ paths: ['/home/tech/keys/cosign.pub'] })),
    'signatures.checkArchive': vi.fn(async ({ path }) => ({ path, images: [] })),
    'local.inspect': vi.fn(async ({ path }) => ({
      path,
      size: 1,
      sha256: '00',
      format: 'docker' as const,
      compression: 'none' as const,
      images: [],
      uncompressedBytes: 1,
      warnings: [],
    })),
    'jobs.startImport': vi.fn(async () => {
      throw new HoldfastError('REFUSED', 'refused');
    }),
    'jobs.startUpload': vi.fn(async () => {
      throw new HoldfastError('REFUSED', 'refused');
    }),
    'jobs.list': vi.fn(async () => []),
    'jobs.cancel': vi.fn(async () => {
      throw new HoldfastError('NOT_FOUND', 'no job');
    }),
    'credentials.answer': vi.fn(async () => ({ answered: true as const })),
    'credentials.pending': vi.fn(async () => []),
    'fleet.start': vi.fn(async () => ({ runId: 'r', nodes: [] })),
    'fleet.cancel': vi.fn(async () => ({ cancelled: false })),
    'fleet.last': vi.fn(async () => null),
    'fleet.export': vi.fn(async ({ format }) => ({ filename: `f.${format}`, mime: 'text/plain', content: '' })),
    'pinset.save': vi.fn(async () => ({ saved: null })),
    'disk.picture': vi.fn(async () => {
      throw new HoldfastError('NOT_FOUND', 'no node');
    }),
    'prune.plan': vi.fn(async ({ node, keepVersions }) => ({ node, keepVersions: keepVersions ?? 2, remove: [], kept: [], freedBytes: 0, storeBytes: 0, imagesBefore: 0 })),
    'prune.apply': vi.fn(async ({ node }) => ({ node, keepVersions: 2, removed: [], refused: [], failed: [], plannedBytes: 0, freedBytes: 0, audit: null })),
    'signatures.verify': vi.fn(async ({ nodes }: { nodes: string[] }) => nodes.map((node) => ({ node, ok: true as const, dryRun: true, images: [], recorded: 0 }))),
  };
}

describe('registerIpc', () => {
  it('registers exactly one handler per contract channel and can remove them', () => {
    const ipc = fakeIpcMain();
    const unregister = registerIpc(ipc, fakeHandlers());
    expect([...ipc.handlers.keys()].sort()).toEqual(Object.keys(channels).sort());
    expect(IPC_CHANNELS).toHaveLength(Object.keys(channels).length);
    unregister();
    expect(ipc.handlers.size).toBe(0);
  });

  it('returns result envelopes for valid calls', async () => {
    const ipc = fakeIpcMain();
    registerIpc(ipc, fakeHandlers());
    await expect(ipc.invoke('nodes.remove', { name: 'edge-01' })).resolves.toEqual({ ok: true, result: { removed: 'edge-01' } });
    await expect(ipc.invoke('nodes.list')).resolves.toEqual({ ok: true, result: [] });
    await expect(
      ipc.invoke('pins.plan', { node: 'edge-01', action: 'pin', target: { archive: 'sub/apps.tar.gz' } }),
    ).resolves.toEqual({ ok: true, result: { node: 'edge-01', action: 'pin', changes: [], unchanged: [] } });
    await expect(ipc.invoke('audit.list', {})).resolves.toEqual({ ok: true, result: [] });
    await expect(ipc.invoke('jobs.list', {})).resolves.toEqual({ ok: true, result: [] });
    await expect(ipc.invoke('local.inspect', { path: 'C:\\bundles\\a.tar' })).resolves.toMatchObject({ ok: true, result: { format: 'docker' } });
    await expect(ipc.invoke('local.pickArchives', {})).resolves.toEqual({
      ok: false,
      error: { code: 'INVALID_INPUT', message: 'there is no file dialog in the browser UI' },
    });
    await expect(ipc.invoke('local.pickSignatureFiles', { kind: 'keys' })).resolves.toEqual({ ok: true, result: { paths: ['/home/tech/keys/cosign.pub'] } });
    await expect(ipc.invoke('signatures.checkArchive', { path: '/tmp/a.tar', keys: ['/k/cosign.pub'], bundles: ['/k/b.json'], direct: true })).resolves.toEqual({
      ok: true,
      result: { path: '/tmp/a.tar', images: [] },
    });
  });

  it('sends record lists packed (src/shared/wirePack.ts), as the renderer api unpacks them', async () => {
    const ipc = fakeIpcMain();
    const handlers = fakeHandlers();
    const refs = generateRefs(300);
    handlers['images.list'] = vi.fn(async () => refs);
    handlers['images.report'] = vi.fn(async () => ({ images: refs, lost: [], info: INFO, needs: NO_NEEDS }));
    registerIpc(ipc, handlers);
    const list = (await ipc.invoke('images.list', { node: 'edge-01' })) as { ok: true; result: unknown };
    expect(isPacked(list.result)).toBe(true);
    expect(unpackEnvelope(structuredClone(list))).toEqual({ ok: true, result: refs });
    const report = (await ipc.invoke('images.report', { node: 'edge-01' })) as { ok: true; result: { images: unknown } };
    expect(isPacked(report.result.images)).toBe(true);
    expect(unpackEnvelope(structuredClone(report))).toEqual({ ok: true, result: { images: refs, lost: [], info: INFO, needs: NO_NEEDS } });
  });

  it('images.report: every image with its site-need verdict, and the NeedsReport, cross as the renderer reads them', async () => {
    const ipc = fakeIpcMain();
    const handlers = fakeHandlers();
    const workloads = [{ kind: 'CronJob', namespace: 'acme', name: 'nightly-report', why: 'CronJob between runs' }];
    const need = { verdict: 'unprotected' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads, neededBecause: 'needed by CronJob acme/nightly-report (CronJob between runs)', because: 'needed by CronJob acme/nightly-report (CronJob between runs); not pinned: kubelet may delete it' };
    const images = generateRefs(20).map((r, i) => (i < 10 ? { ...r, need } : { ...r, need: { ...need, verdict: 'unneeded' as const, atRisk: false, needed: false, basis: null, workloads: [], neededBecause: null, because: 'nothing at the site needs it' } }));
    const needs: NeedsReport = {
      basis: 'known',
      sources: [{ kind: 'cluster', label: 'kubectl on edge-01' }],
      notes: [],
      missing: [{ ref: 'registry.site.lan/acme/report:1.0', workloads, source: 'cluster', because: 'not on this node', heldBy: ['jobs/report.tar in the images dir'] }],
      atRisk: 11,
    };
    handlers['images.report'] = vi.fn(async () => ({ images, lost: [], info: INFO, needs }));
    registerIpc(ipc, handlers);
    // Any args beyond the node are refused before the handler runs.
    await expect(ipc.invoke('images.report', { node: 'edge-01', needed: true })).resolves.toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    const report = (await ipc.invoke('images.report', { node: 'edge-01' })) as { ok: true; result: { images: unknown; needs: unknown } };
    expect(isPacked(report.result.images)).toBe(true);
    expect(isPacked(report.result.needs)).toBe(false);
    expect(unpackEnvelope(structuredClone(report))).toEqual({ ok: true, result: { images, lost: [], info: INFO, needs } });
    expect(handlers['images.report']).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['nodes.remove', { name: '../etc' }],
    ['nodes.remove', { name: 'a', extra: true }],
    ['nodes.remove', 'edge-01'],
    ['nodes.add', { node: { name: 'x', host: 'h; rm -rf /' } }],
    ['nodes.add', { node: { name: 'x', host: 'h', socket: 'relative/path' } }],
    ['nodes.trustHostKey', { name: 'x', fingerprint: 'MD5:aa:bb' }],
    ['images.list', {}],
    ['archives.check', { node: 'x', path: '/var/lib/rancher/k3s/agent/images/a.tar' }],
    ['archives.check', { node: 'x', path: 'sub/../../etc/shadow' }],
    ['archives.remove', { node: 'x', path: 'a.tar', force: 'yes' }],
    ['pins.plan', { node: 'x', action: 'pin', target: { allK3s: false } }],
    ['pins.plan', { node: 'x', action: 'pin', target: { refs: [] } }],
    ['pins.apply', { node: 'x', action: 'delete', target: { refs: ['a:1'] } }],
    ['pins.apply', { node: 'x', action: 'pin', target: { refs: ['a:1'], archive: 'a.tar' } }],
    ['pins.apply', { node: 'x', action: 'pin', target: { refs: ['a:1 ; rm -rf /'] } }],
    ['local.pickArchives', { defaultPath: '/etc' }],
    ['local.pickSignatureFiles', { kind: 'certificates' }],
    ['local.pickSignatureFiles', { kind: 'keys', defaultPath: '/etc' }],
    ['signatures.checkArchive', { path: '/tmp/a.tar', keys: [] }],
    ['signatures.checkArchive', { path: '/tmp/a.tar' }],
    ['signatures.checkArchive', { path: '/tmp/a.tar', keys: ['cosign.pub'] }],
    ['signatures.checkArchive', { path: '/tmp/a.tar', keys: ['/k/cosign.pub'], bundles: [] }],
    ['signatures.checkArchive', { path: '/tmp/a.tar', keys: ['/k/cosign.pub'], allowUnsigned: true }],
    ['signatures.checkArchive', { path: '/tmp/a.tar', keys: ['/k/cosign.pub\0'] }],
    ['local.inspect', { path: 'relative/apps.tar' }],
    ['local.inspect', { path: '/tmp/a.tar\0.txt' }],
    ['jobs.startImport', { nodes: [], path: '/tmp/a.tar', pin: true, removeArchive: true }],
    ['jobs.startImport', { nodes: ['../x'], path: '/tmp/a.tar', pin: true, removeArchive: true }],
    ['jobs.startImport', { nodes: ['x'], path: '/tmp/a.tar', pin: 'yes', removeArchive: true }],
    ['jobs.startImport', { nodes: ['x'], path: '/tmp/a.tar', pin: true }],
    ['jobs.startImport', { nodes: ['x'], path: '/tmp/a.tar', pin: true, removeArchive: false, parallel: 0 }],
    ['jobs.startImport', { nodes: ['x'], path: '/tmp/a.tar', pin: true, removeArchive: false, parallel: 65 }],
    ['jobs.startImport', { nodes: ['x'], path: '/tmp/a.tar', pin: true, removeArchive: false, timeout: 3601 }],
    ['jobs.startUpload', { node: 'x', path: 'relative/a.tar' }],
    ['jobs.startUpload', { node: 'x', path: '/tmp/a.tar', as: 'a\0.tar' }],
    ['fleet.start', { concurrency: 0 }],
    ['fleet.start', { timeout: 0 }],
    ['fleet.start', { timeout: 3601 }],
    ['jobs.cancel', { id: '' }],
  ])('rejects a bad %s payload with INVALID_INPUT before any handler runs', async (channel, payload) => {
    const ipc = fakeIpcMain();
    const handlers = fakeHandlers();
    registerIpc(ipc, handlers);
    const env = (await ipc.invoke(channel, payload)) as { ok: boolean; error?: { code: string } };
    expect(env.ok).toBe(false);
    expect(env.error?.code).toBe('INVALID_INPUT');
    expect(handlers[channel as keyof Handlers]).not.toHaveBeenCalled();
  });

  it('rejects extra positional arguments', async () => {
    const ipc = fakeIpcMain();
    registerIpc(ipc, fakeHandlers());
    const env = (await ipc.invoke('nodes.list', {}, { sneaky: 1 })) as { ok: boolean; error?: { code: string } };
    expect(env).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
  });

  it('turns thrown errors into ErrorInfo envelopes without stacks', async () => {
    const ipc = fakeIpcMain();
    registerIpc(ipc, fakeHandlers());
    await expect(ipc.invoke('nodes.update', { name: 'x', node: { name: 'x', host: 'h' } })).resolves.toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'No node named "x".', hint: 'Check the name.' },
    });
    await expect(ipc.invoke('images.list', { node: 'x' })).resolves.toEqual({
      ok: false,
      error: { code: 'INTERNAL', message: 'boom' },
    });
  });

  it('refuses calls from untrusted frames', async () => {
    const ipc = fakeIpcMain();
    const handlers = fakeHandlers();
    registerIpc(ipc, handlers, { isTrustedSender: (e) => e.senderFrame?.url === 'file:///app/index.html' });
    const listener = ipc.handlers.get('nodes.list')!;
    await expect(listener({ senderFrame: { url: 'https://evil.example/' } }, {})).resolves.toMatchObject({
      ok: false,
      error: { code: 'REFUSED' },
    });
    await expect(listener({ senderFrame: null }, {})).resolves.toMatchObject({ ok: false });
    expect(handlers['nodes.list']).not.toHaveBeenCalled();
    await expect(listener({ senderFrame: { url: 'file:///app/index.html' } }, {})).resolves.toEqual({ ok: true, result: [] });
  });
});
