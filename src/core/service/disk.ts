// A node's disk as kubelet's image GC sees it (disk.picture) and pruning old image versions
// (prune.*). Removing images from an air-gapped node needs the node's name typed as confirmation.
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { HoldfastError } from '../errors';
import { diskPicture } from '../usecases/diskPicture';
import { applyPrune, planPruneOnNode } from '../usecases/prune';
import type { HandlersOf, ServiceParts } from './parts';

export function diskHandlers({ pool, ctx }: ServiceParts): HandlersOf<'disk.picture' | 'prune.plan' | 'prune.apply'> {
  return {
    'disk.picture': async ({ node, images }) => pool.use(node, (s) => diskPicture(s, ctx, { images: images !== false })),
    'prune.plan': async ({ node, keepVersions }) => pool.use(node, (s) => planPruneOnNode(s, ctx, { keepVersions: keepVersions ?? DEFAULT_KEEP_VERSIONS })),
    'prune.apply': async ({ node, keepVersions, images, confirm }) => {
      // A removed image is gone from an air-gapped site: never a misclick.
      if (confirm !== node) throw new HoldfastError('REFUSED', "prune needs the node's name typed exactly as confirmation", { hint: `Type ${node} to confirm.` });
      return pool.use(node, (s) => applyPrune(s, ctx, { keepVersions: keepVersions ?? DEFAULT_KEEP_VERSIONS, expect: images }));
    },
  };
}
