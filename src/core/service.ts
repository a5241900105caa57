// The application service: one handler per contract channel, shared by Electron main (IPC)
// and `holdfast serve` (loopback HTTP). Owns the node inventory and live node sessions.
import type { NodeStatus } from '../shared/domain';
import type { Handlers } from '../shared/handlers';
import { holdfastHome } from './config/home';
import { NodeStore } from './config/nodes';
import { toErrorInfo } from './errors';
import { SessionPool } from './node/pool';

export interface Service extends Handlers {
  dispose(): Promise<void>;
}

export function createHandlers(opts: { home?: string } = {}): Service {
  const store = new NodeStore(opts.home ?? holdfastHome());
  const pool = new SessionPool((name) => store.get(name));

  return {
    'nodes.list': async () => store.list(),
    'nodes.add': async ({ node }) => store.add(node),
    'nodes.update': async ({ name, node }) => {
      const def = await store.update(name, node);
      await pool.drop(name);
      return def;
    },
    'nodes.remove': async ({ name }) => {
      await store.remove(name);
      await pool.drop(name);
      return { removed: name };
    },
    'nodes.connect': async ({ name }): Promise<NodeStatus> => {
      await store.get(name); // an unknown node is an error, not a status
      try {
        const session = await pool.get(name, { fresh: true });
        return { name, state: 'connected', info: await session.detect() };
      } catch (e) {
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
    'images.list': async ({ node }) => pool.use(node, (s) => s.listImages()),
    dispose: () => pool.closeAll(),
  };
}
