import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EVENT_CHANNEL, isLiveEvent, operations } from '../../../src/shared/contract';

const exposed: Record<string, unknown> = {};
const invoke = vi.fn(async (..._args: unknown[]) => ({ ok: true, result: null }));
const ipcListeners = new Map<string, Set<(...args: unknown[]) => void>>();
const on = vi.fn((channel: string, l: (...args: unknown[]) => void) => {
  if (!ipcListeners.has(channel)) ipcListeners.set(channel, new Set());
  ipcListeners.get(channel)!.add(l);
});
const removeListener = vi.fn((channel: string, l: (...args: unknown[]) => void) => ipcListeners.get(channel)?.delete(l));
const getPathForFile = vi.fn((file: { name: string }) => {
  if (file.name === 'blob') throw new Error('not a File from disk');
  return `/home/tech/${file.name}`;
});

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
  ipcRenderer: { invoke, on, removeListener },
  webUtils: { getPathForFile },
}));

describe('preload', () => {
  beforeEach(() => invoke.mockClear());

  it('exposes exactly the named operations, each bound to its fixed channel, plus pathForFile', async () => {
    const mod = await import('../../../src/preload/index');
    expect(mod.OPERATION_CHANNELS).toEqual(operations);
    const api = exposed['holdfast'] as Record<string, (args: unknown) => Promise<unknown>>;
    expect(Object.keys(exposed)).toEqual(['holdfast']);
    expect(Object.keys(api).sort()).toEqual([...Object.keys(operations), 'onEvent', 'pathForFile'].sort());
    expect(Object.isFrozen(api)).toBe(true);
    expect(api).not.toHaveProperty('invoke');
    for (const [op, channel] of Object.entries(operations)) {
      if (op === 'onEvent') continue;
      invoke.mockClear();
      await api[op]!({ name: 'edge-01' });
      expect(invoke).toHaveBeenCalledWith(channel, { name: 'edge-01' });
    }
  });

  it('covers the import operations of the contract', async () => {
    const mod = await import('../../../src/preload/index');
    expect(mod.OPERATION_CHANNELS).toMatchObject({
      pickArchives: 'local.pickArchives',
      inspectLocalArchive: 'local.inspect',
      pickSignatureFiles: 'local.pickSignatureFiles',
      checkArchiveSignatures: 'signatures.checkArchive',
      startImport: 'jobs.startImport',
      listJobs: 'jobs.list',
      cancelJob: 'jobs.cancel',
    });
  });

  it('pathForFile asks webUtils, crosses no IPC, and answers "" for what has no path', async () => {
    await import('../../../src/preload/index');
    const api = exposed['holdfast'] as { pathForFile(f: unknown): string };
    invoke.mockClear();
    expect(api.pathForFile({ name: 'apps.tar.gz' })).toBe('/home/tech/apps.tar.gz');
    expect(api.pathForFile({ name: 'blob' })).toBe('');
    expect(getPathForFile).toHaveBeenCalledTimes(2);
    expect(invoke).not.toHaveBeenCalled();
  });

  it('onEvent listens on the one fixed channel, passes only well-formed events and unsubscribes', async () => {
    const mod = await import('../../../src/preload/index');
    expect(mod.EVENT_CHANNEL).toBe(EVENT_CHANNEL);
    const api = exposed['holdfast'] as { onEvent(cb: (e: unknown) => void): () => void };
    const got: unknown[] = [];
    const off = api.onEvent((e) => got.push(e));
    expect(on).toHaveBeenCalledWith(EVENT_CHANNEL, expect.any(Function));
    const emit = (data: unknown) => {
      for (const l of ipcListeners.get(EVENT_CHANNEL) ?? []) l({ sender: 'ipc event object' }, data);
    };
    const good = [
      { type: 'node.status', payload: { name: 'edge-01', state: 'reconnecting', attempt: 2, retryInMs: 2000 } },
      { type: 'node.changed', payload: { node: 'edge-01', topic: '/images/update', name: 'docker.io/library/app:1.0' } },
      { type: 'jobs.changed', payload: { id: 'j1', state: 'running', nodes: [] } },
    ];
    for (const e of good) emit(e);
    for (const bad of [null, 'x', { type: 'nodes.remove', payload: {} }, { type: 'node.changed', payload: { node: 1 } }, { type: 'jobs.changed' }]) emit(bad);
    expect(got).toEqual(good);
    expect(good.every((e) => isLiveEvent(e))).toBe(true);
    off();
    expect(removeListener).toHaveBeenCalledWith(EVENT_CHANNEL, expect.any(Function));
    emit(good[0]);
    expect(got).toHaveLength(3);
  });
});
