// The node inventory and connections (nodes.*) and the secrets asked for while connecting
// (credentials.*). Changing or removing a node drops its session and stops its watcher, so
// nothing keeps talking to the node as it was.
import type { NodeStatus } from '../../shared/domain/connection';
import type { NodeDef } from '../../shared/domain/nodes';
import { toErrorInfo } from '../errors';
import type { HandlersOf, ServiceParts } from './parts';

type NodeChannels = 'nodes.list' | 'nodes.add' | 'nodes.update' | 'nodes.remove' | 'nodes.connect' | 'nodes.trustHostKey' | 'nodes.info' | 'credentials.answer' | 'credentials.pending';

export function nodeHandlers({ store, pool, live, broker }: ServiceParts): HandlersOf<NodeChannels> {
  return {
    'nodes.list': async () => store.list(),
    'nodes.add': async ({ node }) => store.add(node),
    'nodes.update': async ({ name, node, expect }) => {
      // expect is compared field by field with the saved node, as the caller read it (not completed).
      const def = await store.update(name, node, expect ? { expect: expect as NodeDef } : {});
      live.unwatch(name);
      await pool.drop(name);
      return def;
    },
    'nodes.remove': async ({ name }) => {
      await store.remove(name);
      live.unwatch(name);
      await pool.drop(name);
      return { removed: name };
    },
    'nodes.connect': async ({ name }): Promise<NodeStatus> => {
      await store.get(name); // an unknown node is an error, not a status
      live.pause(name); // the fresh session replaces the one its watcher used
      try {
        const session = await pool.get(name, { fresh: true });
        const info = await session.detect();
        // A node added without an images dir follows its distro's data-dir (from this same
        // probe); when that moved it, the session reads the new dir from now on (no second
        // connection, so no second password prompt).
        const moved = await store.adoptImagesDir(name, info.imagesDir);
        if (moved) session.followImagesDir(moved.imagesDir);
        live.restart(name);
        return { name, state: 'connected', info };
      } catch (e) {
        live.unwatch(name);
        await pool.drop(name);
        return { name, state: 'error', error: toErrorInfo(e) };
      }
    },
    'nodes.trustHostKey': async ({ name, fingerprint }) => {
      const def = await store.get(name);
      // Connect once accepting exactly the key the user saw; the SSH layer records it in the
      // node's known_hosts only if the presented key has that fingerprint.
      await pool.drop(name);
      await pool.get(name, { acceptNewHostKey: fingerprint });
      return { recorded: def.knownHosts! };
    },
    // The versions the node runs, detected once per session.
    'nodes.info': async ({ node }) => pool.use(node, (s) => s.info()),
    'credentials.answer': async ({ id, answers }) => {
      broker.answer(id, answers);
      return { answered: true };
    },
    'credentials.pending': async () => broker.open(),
  };
}
