// Watching containerd's image events for the images one import concerns: how long since the last
// event about them, and a wait that ends early when one arrives. What lets the import tell that
// k3s has finished with an archive (and later, that nothing undid the pins) without guessing from
// one listing. The stream is filtered to the node's namespace; a dropped stream is logged and the
// callers' bounded waits keep polling.
import type { NodeSession } from '../../node/session';
import { logger } from '../../log';

const log = logger('import');

export interface ImageWatch {
  /** Milliseconds since the last event about the images (or since the watch began). */
  sinceLast(): number;
  /** Whether an event named `name` arrived since the watch began. */
  seen(name: string): boolean;
  /** false once the event stream failed (then only polling is left). */
  healthy(): boolean;
  /** Events about the images since the watch began (k3s at work on them, or anyone else). */
  events(): number;
  /** Resolves after `ms`, or a moment after the next event about the images, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  stop(): void;
}

/** Events come in bursts (create, then updates with labels): a wake-up waits this long for the rest. */
const BURST_MS = 100;

export function watchImages(session: NodeSession, concerns: (name: string) => boolean): ImageWatch {
  let last = Date.now();
  let ok = true;
  let count = 0;
  const names = new Set<string>();
  let wake: (() => void) | null = null;
  const sub = session.containerd.subscribe([`namespace=="${session.def.namespace}",topic~="/images/"`]);
  sub.on('event', (e) => {
    // An event whose payload could not be decoded may concern the images: count it.
    if (e.image && !concerns(e.image.name)) return;
    if (e.image) names.add(e.image.name);
    count++;
    last = Date.now();
    wake?.();
  });
  sub.on('error', (err: unknown) => {
    ok = false;
    log.debug('event stream failed while watching an import; polling on', { node: session.def.name, err });
  });
  return {
    sinceLast: () => Date.now() - last,
    seen: (name) => names.has(name),
    healthy: () => ok,
    events: () => count,
    wait(ms, signal) {
      return new Promise<void>((resolve) => {
        let burst: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(t);
          clearTimeout(burst);
          signal?.removeEventListener('abort', done);
          wake = null;
          resolve();
        };
        const t = setTimeout(done, Math.max(0, ms));
        wake = () => {
          if (!burst) burst = setTimeout(done, BURST_MS);
        };
        signal?.addEventListener('abort', done, { once: true });
      });
    },
    stop: () => sub.cancel(),
  };
}
