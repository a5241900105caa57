// A node's images and pins: the images report (each image with its site-need verdict, and the
// node's NeedsReport), its lost pins, pin previews and changes, the alerts for pins lost while
// watching, and refreshing everything a node shows after a change.
import type { StoreContext } from './context';
import { archivesOf, auditOf, diskOf, imagesOf } from './selectors';
import type { AppState, ImagesState } from './types';

export function createImagesSlice(ctx: StoreContext): Pick<
  AppState,
  | 'images'
  | 'lostPins'
  | 'pinAlerts'
  | 'loadImages'
  | 'loadLostPins'
  | 'dismissPinAlert'
  | 'refreshNode'
  | 'requestPinPlan'
  | 'applyPinsAndRefresh'
> {
  const { api, set, get, next, loadList } = ctx;
  const imagesSeq = ctx.seq.images;
  const lostSeq = ctx.seq.lost;
  const setImages = (name: string, images: ImagesState) => set((s) => ({ images: { ...s.images, [name]: images } }));
  return {
    images: {},
    lostPins: {},
    pinAlerts: [],

    async loadImages(name) {
      // Lost pins come along with the images (in parallel: the images do not wait for them).
      void get().loadLostPins(name);
      const seq = next(imagesSeq, name);
      const prev = imagesOf(get(), name);
      setImages(name, { ...prev, state: 'loading', error: undefined });
      // The images report: the same inventory as images.list, with what the site needs beside it
      // (each image's verdict, where the needs come from, the needed images the node lacks).
      const env = await api.getImagesReport({ node: name });
      if (imagesSeq.get(name) !== seq) return;
      if (!env.ok) setImages(name, { ...prev, state: 'error', error: env.error });
      else setImages(name, { state: 'ready', items: env.result.images, needs: env.result.needs ?? null, embeddedRegistry: env.result.embeddedRegistry ?? null, loadedAt: Date.now() });
    },
    loadLostPins: async (name) => {
      // An older bridge without the operation: nothing to show.
      if (typeof api.listLostPins !== 'function') return;
      await loadList('lostPins', lostSeq, name, () => api.listLostPins({ node: name }));
    },
    dismissPinAlert(id) {
      set((s) => ({ pinAlerts: s.pinAlerts.filter((a) => a.id !== id) }));
    },
    async refreshNode(name) {
      const s = get();
      await Promise.all([
        s.loadImages(name),
        archivesOf(s, name).state !== 'idle' ? s.loadArchives(name) : undefined,
        auditOf(s, name).state !== 'idle' ? s.loadAudit(name) : undefined,
        diskOf(s, name).state !== 'idle' ? s.loadDisk(name, { images: diskOf(s, name).full }) : undefined,
      ]);
    },
    requestPinPlan: (node, action, target) => api.planPins({ node, action, target }),
    async applyPinsAndRefresh(node, action, target) {
      const env = await api.applyPins({ node, action, target });
      // Refresh even on failure: a partial apply may have changed some labels.
      await get().refreshNode(node);
      return env;
    },
  };
}
