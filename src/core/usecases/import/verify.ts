// Making an archive's pins durable and proving it: pin (every reference of each image), wait
// until nothing touches the images for a settle period, then read every reference back — the
// names, k3s's digest and extra-registry references, CRI's own record — and check each carries a
// durable pin and that the image is protected as kubelet sees it (shared/protection, the one
// model). k3s labels and retags with its own timing, so a reference it added or relabelled after
// the pin gets pinned on the next attempt; after a bounded number of attempts the import fails
// rather than report a pin it could not verify (issue #16).
import { distroDisplayName } from '../../../shared/distro';
import { imageProtection, protectionKey } from '../../../shared/protection';
import { criPinning } from '../../../shared/versions';
import type { ArchiveImage } from '../../archives/format/readIndex';
import { configDigestFor } from '../../archives/format/readIndex';
import { HoldfastError } from '../../errors';
import type { OpsContext } from '../inventory';
import { applyPinChange } from '../pin/apply';
import type { NodeSession } from '../../node/session';
import { logger } from '../../log';
import { concerns, findImages, refsOfImages } from './imageSet';
import { watchImages } from './settle';

const log = logger('import');

export interface Verification {
  ok: boolean;
  /** Images of the archive found, and all their references checked. */
  images: number;
  refs: number;
  /** What is not durable yet, one phrase each. */
  problems: string[];
  /** Set when the node's containerd cannot honour any pin (the labels are right, kubelet ignores them). */
  notHonoured?: string;
}

/**
 * Every reference of every image the archive brings is durably pinned (CRI label, no distro
 * label), and kubelet sees each image as pinned now. Reads the node afresh; changes nothing.
 */
export async function verifyDurable(session: NodeSession, images: ArchiveImage[]): Promise<Verification> {
  const [refs, platform, info] = await Promise.all([session.listBaseImages(), session.platform(), session.info()]);
  const mode = criPinning(info.containerdVersion);
  const found = findImages(images, refs, platform);
  const problems: string[] = [];
  let checked = 0;
  for (const f of found) if (!f.ref) problems.push(`${f.label} is not in containerd`);
  for (const [f, list] of refsOfImages(found, refs)) {
    checked += list.length;
    for (const r of list) if (r.pin !== 'durable') problems.push(`${r.name} is ${r.pin === 'distro' ? `pinned by ${distroDisplayName(info.distro)}` : 'not pinned'}`);
    // The one model's verdict for the image as kubelet sees it now (only the labels matter for `now`).
    const p = imageProtection(list.map((r) => ({ ...r, afterRestart: 'pinned' as const, reason: '' })), mode).get(protectionKey(list[0]!))!;
    if (!p.now && mode !== 'none') problems.push(`${f.label}: ${p.reason}`);
  }
  return {
    ok: problems.length === 0,
    images: found.filter((f) => f.ref).length,
    refs: checked,
    problems,
    ...(mode === 'none'
      ? { notHonoured: `containerd ${info.containerdVersion} has no CRI image pinning (needs 1.7.3+): kubelet's image garbage collector ignores these pins` }
      : {}),
  };
}

export interface PinVerifyOptions {
  settleMs: number;
  /** Pin attempts before giving up (default 3). */
  attempts?: number;
  signal?: AbortSignal;
}

export interface PinVerified extends Verification {
  /** Label changes made over all attempts. */
  pinned: number;
  attempts: number;
}

export async function pinAndVerify(session: NodeSession, ctx: OpsContext, archiveRel: string, images: ArchiveImage[], opts: PinVerifyOptions): Promise<PinVerified> {
  const attempts = opts.attempts ?? 3;
  const platform = await session.platform();
  const watch = watchImages(session, concerns(images, images.map((i) => configDigestFor(i, platform))));
  let pinned = 0;
  let last: Verification | null = null;
  let lastError: unknown = null;
  try {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (opts.signal?.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
      try {
        pinned += (await applyPinChange(session, ctx, 'pin', { archive: archiveRel })).changes.length;
        lastError = null;
      } catch (e) {
        // k3s replaced a reference (delete-then-create) while Holdfast pinned it: try again.
        if (!(e instanceof HoldfastError && e.code === 'CONFLICT')) throw e;
        lastError = e;
        log.debug('pin raced a change on the node; trying again', { node: session.def.name, attempt, err: e });
      }
      // Verify only once nothing has touched the images for the settle period (our own updates
      // are events too, so this also waits for them to be applied everywhere).
      // Bounded: a node whose images never stop changing is verified as it is after a while.
      const deadline = Date.now() + opts.settleMs * 15;
      for (let quiet = opts.settleMs - watch.sinceLast(); quiet > 0 && Date.now() < deadline; quiet = opts.settleMs - watch.sinceLast()) {
        await watch.wait(Math.min(quiet, deadline - Date.now()), opts.signal);
      }
      if (lastError) continue;
      last = await verifyDurable(session, images);
      if (last.ok) return { ...last, pinned, attempts: attempt };
      log.debug('pins did not hold; pinning again', { node: session.def.name, attempt, problems: last.problems });
    }
  } finally {
    watch.stop();
  }
  const why = last ? last.problems.join('; ') : lastError instanceof Error ? lastError.message : 'unknown';
  throw new HoldfastError('CONFLICT', `the durable pins of ${archiveRel} on ${session.def.name} could not be verified after ${attempts} attempts: ${why}`, {
    hint: 'k3s kept changing these images while Holdfast pinned them. Nothing was removed; run the import again once k3s has settled (journalctl -u k3s says what it is doing).',
  });
}
