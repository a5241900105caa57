// Checking what is already on nodes against the signatures the technician carries (#48 item 6):
// the keys, bundles and layouts are read once on this machine, then each node is checked on its
// own session; one node that cannot be reached does not stop the others.
import { mapLimit } from '../../shared/mapLimit';
import type { NodeVerifyOutcome } from '../../shared/signatures';
import { toErrorInfo } from '../errors';
import { readTrustMaterial, verifyNodeImages } from '../usecases/verifySignatures';
import type { HandlersOf, ServiceParts } from './parts';

/** Nodes checked at once. */
const NODES_AT_ONCE = 4;

export function signatureHandlers({ pool }: ServiceParts): HandlersOf<'signatures.verify'> {
  return {
    'signatures.verify': async ({ nodes, keys, bundles, layouts, dryRun }) => {
      const trust = await readTrustMaterial({ keys, bundles, layouts });
      const now = new Date();
      return mapLimit(nodes, NODES_AT_ONCE, async (node): Promise<NodeVerifyOutcome> => {
        try {
          return { ok: true, ...(await pool.use(node, (s) => verifyNodeImages(s, trust, { dryRun }, now))) };
        } catch (e) {
          return { node, ok: false, error: toErrorInfo(e) };
        }
      });
    },
  };
}
