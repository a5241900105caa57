// The store's disk pictures: the fleet overview asks only for file systems, the Disk tab for the
// whole picture, a smaller answer never replaces a full one, and a change on the node (prune
// included) reloads what was shown.
import { describe, expect, it, vi } from 'vitest';
import type { Envelope } from '../../../src/shared/contract';
import type { DiskPicture } from '../../../src/shared/diskPicture';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';
import { createAppStore, diskOf } from '../../../src/renderer/store';
import { fakeApi, imagesReport } from '../../doubles/api';

const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });
const picture = (node: string, full: boolean): DiskPicture => ({
  node,
  takenAt: '2026-01-01T00:00:00Z',
  fileSystems: [],
  imagefs: { roles: ['content', 'snapshots'], paths: {}, totalBytes: 100, freeBytes: 18, via: 'statvfs' },
  policy: resolveGcPolicy([]),
  criPinning: 'any',
  images: full ? [] : null,
  summary: null,
  forecast: null,
  containers: full ? 0 : null,
  notes: [],
});

function api() {
  const getDiskPicture = vi.fn(async ({ node, images }: { node: string; images?: boolean }) => ok(picture(node, images !== false)));
  const applyPrune = vi.fn(async ({ node }: { node: string }) => ok({ node, keepVersions: 2, removed: [], refused: [], failed: [], plannedBytes: 0, freedBytes: 0, audit: null }));
  const getImagesReport = vi.fn(async () => ok(imagesReport()));
  return fakeApi({ getDiskPicture, applyPrune, getImagesReport, listLostPins: vi.fn(async () => ok([])) });
}

describe('disk pictures in the store', () => {
  it('keeps the full picture when the fleet overview asks for file systems only', async () => {
    const a = api();
    const store = createAppStore(a);
    await store.getState().loadDisk('edge', { images: false });
    expect(diskOf(store.getState(), 'edge')).toMatchObject({ state: 'ready', full: false });
    await store.getState().loadDisk('edge');
    expect(diskOf(store.getState(), 'edge')).toMatchObject({ state: 'ready', full: true });
    await store.getState().loadDisk('edge', { images: false });
    expect(a.getDiskPicture.mock.calls.map((c) => c[0])).toEqual([{ node: 'edge', images: false }, { node: 'edge' }]);
    expect(diskOf(store.getState(), 'edge').picture?.images).toEqual([]);
  });

  it('a prune reloads the full picture it was started from', async () => {
    const a = api();
    const store = createAppStore(a);
    await store.getState().loadDisk('edge');
    await store.getState().applyPrune('edge', 2, [`sha256:${'a'.repeat(64)}`], 'edge');
    expect(a.applyPrune).toHaveBeenCalledWith({ node: 'edge', keepVersions: 2, images: [`sha256:${'a'.repeat(64)}`], confirm: 'edge' });
    expect(a.getDiskPicture.mock.calls.map((c) => c[0])).toEqual([{ node: 'edge' }, { node: 'edge' }]);
  });
});
