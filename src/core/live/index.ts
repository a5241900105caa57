// Wiring of the live hub to the app's session pool and job manager (used by the service, core/service/index.ts).
import type { JobManager } from '../jobs/manager';
import type { SessionPool } from '../node/pool';
import { LiveHub, type LiveHubOptions } from './hub';
import { PinWatch, type PinWatchOptions } from './pinWatch';

export { backoffDelay, DEFAULT_BACKOFF, isPermanent, LiveHub, type LiveConnection } from './hub';
export { PinWatch, type PinWatchOptions } from './pinWatch';

/**
 * A LiveHub whose watchers share the pool's sessions (one SSH connection per node) and that relays job changes.
 * With `pins`, it also reports pins lost behind Holdfast's back as `node.changed` events of topic
 * `pins.lost` carrying the lost pins.
 */
export function createLiveHub(
  pool: SessionPool,
  jobs: JobManager,
  opts: Partial<LiveHubOptions> = {},
  pins?: Omit<PinWatchOptions, 'onLost'>,
): LiveHub {
  let hub: LiveHub | null = null;
  const watch = pins
    ? new PinWatch({
        ...pins,
        onLost: (node, lost) => hub?.emit({ type: 'node.changed', payload: { node, topic: 'pins.lost', name: lost[0]!.ref, lostPins: lost } }),
      })
    : undefined;
  hub = new LiveHub({
    open: async (node) => {
      const s = await pool.get(node);
      return {
        namespace: s.def.namespace,
        ping: () => s.containerd.version(),
        subscribe: (filters) => s.containerd.subscribe(filters),
        info: () => s.info(),
      };
    },
    ...(watch ? { imageEvents: watch } : {}),
    ...opts,
  });
  jobs.onChange((job) => hub.jobChanged(job));
  return hub;
}
