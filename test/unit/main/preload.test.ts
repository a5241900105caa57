import { beforeEach, describe, expect, it, vi } from 'vitest';
import { operations } from '../../../src/shared/contract';

const exposed: Record<string, unknown> = {};
const invoke = vi.fn(async (..._args: unknown[]) => ({ ok: true, result: null }));
const getPathForFile = vi.fn((file: { name: string }) => {
  if (file.name === 'blob') throw new Error('not a File from disk');
  return `/home/tech/${file.name}`;
});

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
  ipcRenderer: { invoke },
  webUtils: { getPathForFile },
}));

describe('preload', () => {
  beforeEach(() => invoke.mockClear());

  it('exposes exactly the named operations, each bound to its fixed channel, plus pathForFile', async () => {
    const mod = await import('../../../src/preload/index');
    expect(mod.OPERATION_CHANNELS).toEqual(operations);
    const api = exposed['holdfast'] as Record<string, (args: unknown) => Promise<unknown>>;
    expect(Object.keys(exposed)).toEqual(['holdfast']);
    expect(Object.keys(api).sort()).toEqual([...Object.keys(operations), 'pathForFile'].sort());
    expect(Object.isFrozen(api)).toBe(true);
    expect(api).not.toHaveProperty('invoke');
    for (const [op, channel] of Object.entries(operations)) {
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
});
