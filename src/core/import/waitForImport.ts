// Waits until k3s has imported an archive: every image present, carrying the distro pin
// label k3s sets after import, and complete in the content store. Follows containerd's event
// stream (/images/create, /images/update) so it reacts at once, with a slow poll as a safety
// net for a dropped stream; bounded by a timeout with a message that says what to check.
import { LABEL_K3S_PINNED, LABEL_RKE2_PINNED } from '../../shared/domain';
import type { ArchiveImage } from '../archives/format/readIndex';
import { configDigestFor } from '../archives/format/readIndex';
import { HoldfastError } from '../errors';
import { checkComplete } from '../images/completeness';
import type { NodeSession } from '../node/session';
import { logger } from '../log';

const log = logger('import');

export interface WaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  onCheck?: (present: number, total: number) => void;
}

export async function waitForImport(session: NodeSession, images: ArchiveImage[], archiveRel: string, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const info = await session.info();
  const pinLabel = info.distro === 'rke2' ? LABEL_RKE2_PINNED : LABEL_K3S_PINNED;
  const platform = await session.platform();
  const cd = session.containerd;

  const check = async (): Promise<{ done: boolean; waitingFor: string[] }> => {
    const refs = await session.listBaseImages();
    const waitingFor: string[] = [];
    for (const img of images) {
      const want = configDigestFor(img, platform);
      const ref = img.name ? refs.find((r) => r.name === img.name) : refs.find((r) => r.imageId === want);
      const label = img.name ?? `unnamed image ${want ?? ''}`;
      if (!ref || (want && ref.imageId !== want)) waitingFor.push(`${label} (not imported)`);
      else if (ref.labels[pinLabel] === undefined) waitingFor.push(`${label} (not labelled yet)`);
      else {
        const c = await checkComplete(cd, { digest: ref.digest, mediaType: ref.mediaType, size: 0, annotations: {} }, platform);
        if (!c.complete) waitingFor.push(`${label} (incomplete)`);
      }
    }
    opts.onCheck?.(images.length - waitingFor.length, images.length);
    return { done: waitingFor.length === 0, waitingFor };
  };

  const sub = cd.subscribe([`namespace=="${session.def.namespace}",topic~="/images/"`]);
  let wake: (() => void) | null = null;
  sub.on('event', () => wake?.());
  sub.on('error', (err: unknown) => log.debug('event stream failed while waiting; polling on', { node: session.def.name, err })); // the poll below keeps going
  const started = Date.now();
  let last = { done: false, waitingFor: [] as string[] };
  try {
    for (;;) {
      if (opts.signal?.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
      last = await check();
      if (last.done) return;
      const left = timeoutMs - (Date.now() - started);
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        // One abort listener per wait, removed when the wait ends: this loop runs once a second
        // per node, and listeners left behind pile up on the one signal a whole import shares
        // (Node's MaxListenersExceededWarning after ten).
        const done = () => {
          clearTimeout(t);
          opts.signal?.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, Math.min(left, 1_000));
        wake = () => {
          clearTimeout(t);
          // events come in bursts (create, then update with labels): settle a moment
          setTimeout(done, 100);
        };
        opts.signal?.addEventListener('abort', done, { once: true });
      });
      wake = null;
    }
  } finally {
    sub.cancel();
  }
  throw new HoldfastError(
    'TIMEOUT',
    `k3s did not import ${archiveRel} on ${session.def.name} within ${Math.round(timeoutMs / 1000)} s: still waiting for ${last.waitingFor.join(', ')}`,
    { hint: 'Is k3s running on the node? Its log (journalctl -u k3s) says why an archive was rejected. The archive stays in the images dir; run the import again to resume.' },
  );
}
