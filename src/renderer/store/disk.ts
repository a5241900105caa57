// A node's disk: its disk picture (file systems only for the fleet overview, the full one with the
// image store for the Disk tab), and prune previews and runs.
import type { StoreContext } from './context';
import { diskOf } from './selectors';
import type { AppState, DiskState } from './types';

export function createDiskSlice(ctx: StoreContext): Pick<
  AppState,
  | 'disk'
  | 'loadDisk'
  | 'planPrune'
  | 'applyPrune'
> {
  const { api, set, get, next } = ctx;
  const diskSeq = ctx.seq.disk;
  return {
    disk: {},

    async loadDisk(name, opts = {}) {
      // An older bridge without the operation: no disk picture.
      if (typeof api.getDiskPicture !== 'function') return;
      const prev = diskOf(get(), name);
      const full = opts.images !== false;
      if (!full && prev.full && prev.picture) return; // never replace the full picture by a smaller one
      const seq = next(diskSeq, name);
      const put = (v: DiskState) => set((s) => ({ disk: { ...s.disk, [name]: v } }));
      put({ ...prev, state: 'loading', error: undefined });
      const env = await api.getDiskPicture(full ? { node: name } : { node: name, images: false });
      if (diskSeq.get(name) !== seq) return;
      if (!env.ok) put({ ...prev, state: 'error', error: env.error });
      else put({ state: 'ready', picture: env.result, loadedAt: Date.now(), full });
    },
    planPrune: (node, keepVersions) => api.planPrune({ node, keepVersions }),
    async applyPrune(node, keepVersions, images, confirm) {
      const env = await api.applyPrune({ node, keepVersions, images, confirm });
      // Refresh even on failure: some images may be gone already.
      await get().refreshNode(node);
      return env;
    },
  };
}
