// What a node holds and what Holdfast did there: images (images.*), durable pins (pins.*), the
// archives in its images dir (archives.*) and the audit log (audit.*). Pin changes are announced
// to the lost-pin watch (PinChanges) so Holdfast's own unpin is never reported as a loss.
import { lostPinsFrom, lostPinsOnNode, withLostPins } from '../audit/lostPins';
import { HoldfastError } from '../errors';
import { imagesDirFiles, imagesInventory, inventory } from '../usecases/inventory';
import { applyPinChange } from '../usecases/pin/apply';
import { planPinChange } from '../usecases/pin/plan';
import { checkRemoval, removeArchiveSafely } from '../usecases/removeArchive';
import type { HandlersOf, ServiceParts } from './parts';
import { withPeerServing } from '../node/embeddedRegistry';

type ImageChannels = 'images.list' | 'images.report' | 'pins.lost' | 'pins.plan' | 'pins.apply' | 'archives.list' | 'archives.check' | 'archives.remove' | 'audit.list';

export function imageHandlers({ pool, audit, indexCache, ctx, pinChanges }: ServiceParts): HandlersOf<ImageChannels> {
  // One inventory: the references (each with the lost pin that concerns it), every lost pin
  // (also those whose reference is gone) and the versions the node runs.
  const imagesReport = (node: string) =>
    pool.use(node, async (s) => {
      const inv = await imagesInventory(s, ctx);
      const lost = await lostPinsFrom(node, audit, { refs: inv.images, imagesDir: imagesDirFiles(inv), info: inv.info });
      // Whether peers can pull each reference from this node (k3s's embedded registry).
      const { images, embeddedRegistry } = await withPeerServing(s, inv.info, withLostPins(inv.images, lost));
      return { images, lost, info: inv.info, needs: inv.needs, embeddedRegistry };
    });
  return {
    'images.list': async ({ node }) => (await imagesReport(node)).images,
    'images.report': async ({ node }) => imagesReport(node),
    'pins.lost': async ({ node }) => pool.use(node, (s) => lostPinsOnNode(s, audit, { indexCache })),
    'pins.plan': async ({ node, action, target }) => pool.use(node, (s) => planPinChange(s, ctx, action, target)),
    'pins.apply': async ({ node, action, target }) => pinChanges.during(node, () => pool.use(node, (s) => applyPinChange(s, ctx, action, target))),
    'archives.list': async ({ node }) => pool.use(node, async (s) => (await inventory(s, ctx)).archives),
    'archives.check': async ({ node, path: p }) => pool.use(node, async (s) => (await checkRemoval(s, ctx, p)).check),
    'archives.remove': async ({ node, path: p, force, confirm }) => {
      // Forcing past the safety check needs the path typed again, so it is never a misclick.
      if (force && confirm !== p) {
        throw new HoldfastError('REFUSED', 'forced removal needs the archive path typed exactly as confirmation', { hint: `Type ${p} to confirm.` });
      }
      return pool.use(node, (s) => removeArchiveSafely(s, ctx, p, { force: Boolean(force) }));
    },
    'audit.list': async ({ node }) => audit.list(node),
  };
}
