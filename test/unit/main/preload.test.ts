import { beforeEach, describe, expect, it, vi } from 'vitest';
import { operations } from '../../../src/shared/contract';

const exposed: Record<string, unknown> = {};
const invoke = vi.fn(async (..._args: unknown[]) => ({ ok: true, result: null }));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
  ipcRenderer: { invoke },
}));

describe('preload', () => {
  beforeEach(() => invoke.mockClear());

  it('exposes exactly the named operations, each bound to its fixed channel', async () => {
    const mod = await import('../../../src/preload/index');
    expect(mod.OPERATION_CHANNELS).toEqual(operations);
    const api = exposed['holdfast'] as Record<string, (args: unknown) => Promise<unknown>>;
    expect(Object.keys(exposed)).toEqual(['holdfast']);
    expect(Object.keys(api).sort()).toEqual(Object.keys(operations).sort());
    expect(Object.isFrozen(api)).toBe(true);
    expect(api).not.toHaveProperty('invoke');
    for (const [op, channel] of Object.entries(operations)) {
      invoke.mockClear();
      await api[op]!({ name: 'edge-01' });
      expect(invoke).toHaveBeenCalledWith(channel, { name: 'edge-01' });
    }
  });
});
