// Wiring of the live hub to the app's session pool and job manager (used by core/service.ts).
import type { JobManager } from '../jobs/manager';
import type { SessionPool } from '../node/pool';
import { LiveHub, type LiveHubOptions } from './hub';

export { backoffDelay, DEFAULT_BACKOFF, isPermanent, LiveHub, type LiveConnection } from './hub';

/** A LiveHub whose watchers share the pool's sessions (one SSH connection per node) and that relays job changes. */
export function createLiveHub(pool: SessionPool, jobs: JobManager, opts: Partial<LiveHubOptions> = {}): LiveHub {
  const hub = new LiveHub({
    open: async (node) => {
      const s = await pool.get(node);
      return {
        namespace: s.def.namespace,
        ping: () => s.containerd.version(),
        subscribe: (filters) => s.containerd.subscribe(filters),
        info: () => s.info(),
      };
    },
    ...opts,
  });
  jobs.onChange((job) => hub.jobChanged(job));
  return hub;
}
