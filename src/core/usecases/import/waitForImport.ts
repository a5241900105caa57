// Waits until k3s has finished importing an archive — not only until its names appear: the
// conditions (with the k3s PR they come from) are on waitForImport. Follows containerd's event
// stream (/images/create, /images/update, /images/delete) so it reacts at once, with a slow poll
// as a safety net for a dropped stream; bounded by a timeout with a message that says what to
// check — or, when k3s's watcher is done with an unchanged archive (shared/watcherChance), that
// running the import again will not help, and what will.
import { distroProfile, type DistroProfile } from '../../../shared/distro';
import type { Distro } from '../../../shared/domain/nodes';
import type { Platform } from '../../../shared/mediaTypes';
import { DEFAULT_IMPORT_TIMEOUT, type ImportTuning } from '../../../shared/importOptions';
import { addsDigestRefs, firstReleases, K3S_RELEASES } from '../../../shared/versions';
import { watcherDoneWith, type WatcherChance } from '../../../shared/watcherChance';
import { configDigestFor, type ArchiveImage } from '../../archives/format/readIndex';
import { HoldfastError } from '../../errors';
import { checkComplete } from '../../images/completeness';
import type { NodeSession } from '../../node/session';
import { logger } from '../../log';
import { concerns, digestRefFor, findImages } from './imageSet';
import { watchImages, type ImageWatch } from './settle';

const log = logger('import');

export interface WaitOptions extends Pick<ImportTuning, 'timeout'> {
  /** How long no event may concern the images before the import counts as finished (default 2 s). */
  settleMs?: number;
  /**
   * The archive was already in the images dir (an earlier run): k3s may have imported it long
   * ago, and its images may be durable by now — that counts as imported too.
   */
  alreadyThere?: boolean;
  signal?: AbortSignal;
  onCheck?: (present: number, total: number) => void;
}

export const DEFAULT_SETTLE_MS = 2_000;

/**
 * Done when every image is present, labelled by k3s (for an archive just put in place: labelled
 * after it arrived, as containerd's events say — an image k3s pinned before looks done already),
 * complete in the content store, has the `<repository>@sha256:<digest>` references k3s adds
 * AFTER labelling (k3s PR #13221, on the releases that have it), and then no event about these
 * images came for a settle period (k3s makes extra-registry references, and a slow node retags
 * seconds after labelling).
 */
export async function waitForImport(session: NodeSession, images: ArchiveImage[], archiveRel: string, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = (opts.timeout ?? DEFAULT_IMPORT_TIMEOUT) * 1000;
  const settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;
  const info = await session.info();
  const profile = distroProfile(info.distro);
  // Releases with k3s PR #13221 add a digest reference per name after labelling: wait for it too.
  const digestRefs = addsDigestRefs(info.distroVersion) === 'yes';
  const platform = await session.platform();

  const watch = watchImages(session, concerns(images, images.map((i) => configDigestFor(i, platform))));
  const state: ImportWatch = { session, images, platform, profile, digestRefs, watch, opts };
  const started = Date.now();
  let last: ImportCheck = { done: false, waitingFor: [] };
  let chance = { watchedMs: 0, streamHealthy: false, events: 0 };
  try {
    for (;;) {
      if (opts.signal?.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
      last = await checkImport(state);
      const left = timeoutMs - (Date.now() - started);
      if (last.done) {
        // Finished as far as Holdfast can see: done once nothing has touched the images for a while.
        const quietFor = settleMs - watch.sinceLast();
        if (quietFor <= 0) return;
        if (left <= 0) {
          log.debug('import still settling at the timeout; going on', { node: session.def.name, archiveRel });
          return;
        }
        await watch.wait(Math.min(left, quietFor), opts.signal);
        continue;
      }
      if (left <= 0) break;
      await watch.wait(Math.min(left, 1_000), opts.signal);
    }
  } finally {
    // Read before stop(): a cancelled stream no longer says whether it stayed up.
    chance = { watchedMs: Date.now() - started, streamHealthy: watch.healthy(), events: watch.events() };
    watch.stop();
  }
  throw timedOut(session, archiveRel, info.distro, { waitingFor: last.waitingFor, chance, timeoutMs, alreadyThere: opts.alreadyThere === true });
}

/** What one look at containerd needs: the archive's images, the node's rules and the event stream. */
interface ImportWatch {
  session: NodeSession;
  images: ArchiveImage[];
  platform: Platform;
  profile: DistroProfile;
  digestRefs: boolean;
  watch: ImageWatch;
  opts: WaitOptions;
}

interface ImportCheck {
  done: boolean;
  waitingFor: string[];
}

/** One look at containerd: which images k3s has not finished importing yet, and why. */
async function checkImport(s: ImportWatch): Promise<ImportCheck> {
  const { session, images, platform, profile, opts } = s;
  const refs = await session.listBaseImages();
  const byName = new Map(refs.map((r) => [r.name, r]));
  const waitingFor: string[] = [];
  // Labelled by k3s; for an archive an earlier run left in place, made durable since counts too.
  const imported = (r: { labels: Record<string, string>; pin: string } | undefined) => r !== undefined && (r.labels[profile.pinLabel] !== undefined || (opts.alreadyThere === true && r.pin === 'durable'));
  for (const f of findImages(images, refs, platform)) {
    const ref = f.ref;
    if (!ref) waitingFor.push(`${f.label} (not imported)`);
    else if (!imported(ref)) waitingFor.push(`${f.label} (not labelled yet)`);
    // A dropped event stream cannot tell: then the labels (and the settle period) decide.
    else if (!opts.alreadyThere && s.watch.healthy() && !s.watch.seen(ref.name)) waitingFor.push(`${f.label} (${profile.displayName} has not imported this file yet)`);
    else {
      const c = await checkComplete(session.containerd, { digest: ref.digest, mediaType: ref.mediaType, size: 0, annotations: {} }, platform);
      const extra = s.digestRefs ? digestRefFor(ref.name, ref.digest) : null;
      if (!c.complete) waitingFor.push(`${f.label} (incomplete)`);
      else if (extra && !imported(byName.get(extra))) waitingFor.push(`${extra} (${profile.displayName} adds it after the labels)`);
    }
  }
  opts.onCheck?.(images.length - waitingFor.filter((w) => !w.endsWith('after the labels)')).length, images.length);
  return { done: waitingFor.length === 0, waitingFor };
}

interface Unfinished {
  waitingFor: string[];
  /** What the event stream saw while waiting (shared/watcherChance). */
  chance: Omit<WatcherChance, 'unchangedFromBefore'>;
  timeoutMs: number;
  alreadyThere: boolean;
}

/** The timeout, saying whether running the import again can help. */
function timedOut(session: NodeSession, archiveRel: string, distro: Distro, u: Unfinished): HoldfastError {
  const profile = distroProfile(distro);
  const noDigestYet = u.waitingFor.every((w) => w.endsWith('after the labels)'));
  const within = `within ${Math.round(u.timeoutMs / 1000)} s`;
  // Nothing happened to an archive that was there before this run: k3s's watcher tried it once
  // (an import cut by a containerd restart is not retried) or never will (docs/k3s-facts.md,
  // "The file watcher"). Another run would wait the same way.
  if (!noDigestYet && watcherDoneWith({ unchangedFromBefore: u.alreadyThere, ...u.chance })) {
    const who = profile.displayName;
    return new HoldfastError(
      'TIMEOUT',
      `${who} will not import ${archiveRel} on ${session.def.name} by itself: it was there before this run, unchanged, and nothing touched its images ${within} (${who}'s watcher tries a file once and never retries a failed import, e.g. one cut by a containerd restart)`,
      {
        hint: `A ${who} start imports every archive in the images dir; a direct delivery needs no ${who}. Running the same import again does not help.`,
        remedy: { action: 'k3s-start-or-direct', node: session.def.name, archive: archiveRel, distro },
      },
    );
  }
  return new HoldfastError(
    'TIMEOUT',
    `${profile.displayName} did not import ${archiveRel} on ${session.def.name} ${within}: still waiting for ${u.waitingFor.join(', ')}`,
    {
      hint: noDigestYet
        ? `${profile.displayName} releases from ${firstReleases(K3S_RELEASES.digestRefs)} add these references after labelling; the archive stays in the images dir, run the import again to resume.`
        : `Is ${profile.displayName} running on the node? Its log (${profile.serviceLog}) says why an archive was rejected. The archive stays in the images dir; run the import again to resume.`,
    },
  );
}
