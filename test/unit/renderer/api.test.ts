import { describe, expect, it, vi } from 'vitest';
import { generateRefs } from '../../doubles/catalog';
import { createHttpApi, takeToken, TOKEN_STORAGE_KEY, unpackingBridge, type DesktopBridge } from '../../../src/renderer/api';
import { operations, type Envelope } from '../../../src/shared/contract';
import type { ImageRef } from '../../../src/shared/domain/images';
import { isPacked, packEnvelope } from '../../../src/shared/wirePack';
import type { NeedsReport } from '../../../src/shared/needs';
import { fakeBridge } from '../../doubles/api';

function memoryStorage() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
}

describe('takeToken', () => {
  it('moves ?token= into sessionStorage and out of the address bar', () => {
    const storage = memoryStorage();
    const history = { state: { s: 1 }, replaceState: vi.fn() };
    const token = takeToken({ href: 'http://127.0.0.1:4000/?token=abc_DEF-123&x=1#top' }, storage, history);
    expect(token).toBe('abc_DEF-123');
    expect(storage.m.get(TOKEN_STORAGE_KEY)).toBe('abc_DEF-123');
    expect(history.replaceState).toHaveBeenCalledWith({ s: 1 }, '', '/?x=1#top');
  });

  it('falls back to sessionStorage after a reload', () => {
    const storage = memoryStorage();
    storage.setItem(TOKEN_STORAGE_KEY, 'kept');
    const history = { state: null, replaceState: vi.fn() };
    expect(takeToken({ href: 'http://127.0.0.1:4000/' }, storage, history)).toBe('kept');
    expect(history.replaceState).not.toHaveBeenCalled();
  });
});

describe('createHttpApi', () => {
  it('has exactly the named operations and posts each to its channel with the token header', async () => {
    const fetch = vi.fn(async () => ({ status: 200, json: async () => ({ ok: true, result: [] }) }));
    const api = createHttpApi({ token: 'tok', fetch });
    expect(Object.keys(api).sort()).toEqual([...Object.keys(operations), 'onEvent'].sort());
    await expect(api.listImages({ node: 'edge-01' })).resolves.toEqual({ ok: true, result: [] });
    expect(fetch).toHaveBeenCalledWith('/api/images.list', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-holdfast-token': 'tok' },
      body: '{"node":"edge-01"}',
    });
  });

  it('unpacks the record lists the server sends packed (src/shared/wirePack.ts)', async () => {
    const refs = generateRefs(300);
    const wire = JSON.parse(JSON.stringify(packEnvelope({ ok: true, result: refs }))) as unknown;
    const api = createHttpApi({ token: 'tok', fetch: async () => ({ status: 200, json: async () => wire }) });
    await expect(api.listImages({ node: 'edge-01' })).resolves.toEqual({ ok: true, result: refs });
  });

  it('the images report: posted to images.report, its images unpacked with their site-need verdicts, the NeedsReport as sent', async () => {
    const need = { verdict: 'losing' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads: [{ kind: 'Deployment', namespace: 'kube-system', name: 'coredns', why: 'running' }], neededBecause: 'needed by Deployment kube-system/coredns (running)', because: 'needed by Deployment kube-system/coredns (running); loses its pin at the next k3s start' };
    const images = generateRefs(40).map((r, i) => (i % 2 ? { ...r, need } : r));
    const needs: NeedsReport = {
      basis: 'known',
      sources: [{ kind: 'cluster', label: 'kubectl on edge-01' }],
      notes: [],
      missing: [{ ref: 'registry.site.lan/acme/report:1.0', workloads: [], source: 'cluster', because: 'not on this node', heldBy: ['node edge-02'] }],
      atRisk: 21,
    };
    const result = { images, lost: [], info: { containerdVersion: '2.0.4', containerdRevision: 'r', distro: 'k3s' as const, distroVersion: 'v1.31.9+k3s1' }, needs };
    const wire = JSON.parse(JSON.stringify(packEnvelope({ ok: true, result }))) as { result: { images: unknown } };
    expect(isPacked(wire.result.images)).toBe(true);
    const fetch = vi.fn(async () => ({ status: 200, json: async () => wire }));
    const api = createHttpApi({ token: 'tok', fetch });
    await expect(api.getImagesReport({ node: 'edge-01' })).resolves.toEqual({ ok: true, result });
    expect(fetch).toHaveBeenCalledWith('/api/images.report', expect.objectContaining({ method: 'POST', body: '{"node":"edge-01"}' }));
  });

  it('passes server error envelopes through (401, 404, …)', async () => {
    const error = { code: 'REFUSED', message: 'Missing or wrong access token.' };
    const api = createHttpApi({ token: 'tok', fetch: async () => ({ status: 401, json: async () => ({ ok: false, error }) }) });
    await expect(api.listNodes({})).resolves.toEqual({ ok: false, error });
  });

  it('never throws: network failures and junk answers become envelopes', async () => {
    const down = createHttpApi({
      token: 'tok',
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      },
    });
    await expect(down.listNodes({})).resolves.toMatchObject({ ok: false, error: { code: 'UNREACHABLE' } });
    const junk = createHttpApi({ token: 'tok', fetch: async () => ({ status: 502, json: async () => ({ hello: 1 }) }) });
    await expect(junk.listNodes({})).resolves.toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
  });

  it('without a token it does not call the server and says how to fix it', async () => {
    const fetch = vi.fn();
    const api = createHttpApi({ token: null, fetch });
    await expect(api.listNodes({})).resolves.toMatchObject({ ok: false, error: { code: 'REFUSED' } });
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('unpackingBridge', () => {
  it('unpacks what main sends packed and keeps the rest of the desktop bridge', async () => {
    const refs = generateRefs(300);
    const pathForFile = vi.fn(() => '/home/tech/a.tar');
    const onEvent = vi.fn(() => () => undefined);
    const bridge = fakeBridge({
      listImages: async () => structuredClone(packEnvelope<Envelope<ImageRef[]>>({ ok: true, result: refs })),
      listNodes: async () => ({ ok: false, error: { code: 'INTERNAL', message: 'm' } }),
      onEvent,
      pathForFile,
    });
    const api = unpackingBridge(bridge);
    await expect(api.listImages({ node: 'edge-01' })).resolves.toEqual({ ok: true, result: refs });
    await expect(api.listNodes({})).resolves.toEqual({ ok: false, error: { code: 'INTERNAL', message: 'm' } });
    expect(api.onEvent).toBe(onEvent);
    expect((api as DesktopBridge).pathForFile).toBe(pathForFile);
  });
});
