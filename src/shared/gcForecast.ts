// What kubelet's image GC would delete on this node when its image file system reaches the high
// threshold, and what that really frees. kubelet deletes images no container it knows uses and
// that CRI does not report pinned, least recently used first (its own last-used time, then when
// it first saw the image), adding each image's CRI size to what it counts as freed until that
// reaches the target (pkg/kubelet/images/image_gc_manager.go freeSpace). containerd does not
// keep kubelet's last-used time, so the order here is by when the image's records last changed
// — an approximation — and the real bytes freed follow the shared blobs (shared/imageStore).
import type { GcPolicy, FsStats, MaxAgeGc } from './gcPolicy';
import { bytesToFreeAtHigh, evictionAtPercent, formatAge, kubeletUsagePercent, maxAgeWhen } from './gcPolicy';

export { maxAgeWhen };
import { freedInOrder, type BlobIndex, type StoreImage } from './imageStore';
import { DEFAULT_KEEP_VERSIONS, rollbackKeeps } from './imageVersions';
import { compareText } from './compareText';
import { formatPercent } from './format';

/** Why an image kubelet would delete is needed after all. */
export interface NeededFlag {
  kind: 'site-need' | 'rollback' | 'archive' | 'outside-cri' | 'pin-ignored' | 'lost-pin';
  text: string;
}

export interface ForecastStep {
  key: string;
  refs: string[];
  criSize: number;
  /** What deleting it frees at that point of the sequence (blobs no remaining image holds). */
  frees: number;
  /** kubelet's running count (CRI sizes) after deleting it. */
  counted: number;
  /** Real bytes freed after deleting it. */
  freed: number;
  /** Within what kubelet deletes before it stops (otherwise only an eviction would take it). */
  deleted: boolean;
  needed: NeededFlag[];
}

export interface GcForecast {
  /** false when the image file system could not be measured: then only the order is known. */
  measured: boolean;
  usedPercent: number | null;
  highPercent: number;
  lowPercent: number;
  /** Already at or above the high threshold now. */
  triggeredNow: boolean;
  /** What kubelet sets out to free when it starts (see bytesToFreeAtHigh). */
  bytesToFree: number;
  /** Every image kubelet may delete, in (approximately) the order it would. */
  steps: ForecastStep[];
  /** How many of `steps` kubelet deletes before what it counted reaches bytesToFree. */
  deletedCount: number;
  /** What kubelet counts as freed for them, and what the disk really gains. */
  kubeletCounts: number;
  realFreed: number;
  /** kubelet's usage after those deletions (null when not measured). */
  usageAfterPercent: number | null;
  reachesLow: boolean;
  /** Needed images among those deleted. */
  neededDeleted: number;
  /** At hard eviction (imagefs) kubelet deletes every image in `steps`: its used % and what that frees. */
  eviction: { atPercent: number | null; freed: number };
  /** How the order is made, in one sentence (always shown). */
  orderNote: string;
  notes: string[];
  /**
   * kubelet's max-age GC, when the node sets it: every image in `steps` (not in use, not pinned
   * for kubelet) goes by age, with no disk pressure at all. null when it is off.
   */
  maxAge: MaxAgeForecast | null;
}

export interface MaxAgeForecast extends MaxAgeGc {
  /** "7 days". */
  age: string;
  /** When, in one clause: "within 7 days after kubelet's last start". */
  when: string;
  /** The images it deletes by age (the keys of `steps`, all of them). */
  keys: string[];
  /** Needed ones among them. */
  needed: number;
  /** The whole sentence. */
  text: string;
}

/** The max-age GC in one sentence (the forecast's, the Disk tab's, inspect's). */
export function maxAgeSentence(m: MaxAgeGc, count: number): string {
  const what = count === 0 ? 'no image here (every one is in use or pinned for kubelet)' : `${count === 1 ? 'the image' : `all ${count} images`} below`;
  return (
    `kubelet's max-age GC (image-maximum-gc-age=${m.value}, ${m.source}) deletes every unpinned image no container used for ${formatAge(m.seconds)}, whatever the disk usage: ` +
    `${what}, ${maxAgeWhen(m)} (it does not keep last use across restarts). Pinned images are exempt.`
  );
}

export const ORDER_NOTE =
  "kubelet deletes the images it used least recently first, by its own last-used time, which containerd does not record; Holdfast orders them by when each image's records last changed (created or updated), which approximates that order.";

/** ORDER_NOTE in one short clause. */
export const ORDER_BRIEF = "by when each image last changed, close to kubelet's least recently used first";

/** Why an image kubelet would delete is needed, in one short clause (each flag's `text` is the sentence). */
export const NEEDED_FLAG_BRIEF: Record<NeededFlag['kind'], string> = {
  'site-need': 'the site needs it',
  rollback: 'needed for rollback',
  archive: 'a file in the images dir brings it back',
  'outside-cri': 'used by a container kubelet does not see',
  'pin-ignored': 'pinned, but kubelet may ignore the pin',
  'lost-pin': 'its durable pin is gone',
};

const time = (s: string | null): number => (s ? Date.parse(s) || 0 : 0);

/** kubelet's candidates, oldest first: not used by a container kubelet sees, not pinned for it. */
export function gcCandidates(images: StoreImage[]): StoreImage[] {
  return images
    .filter((i) => i.imageId !== null && !i.usedBy.some((u) => u.kubelet) && (!i.pinnedForKubelet || i.pinUncertain))
    .sort((a, b) => time(a.lastChangedAt) - time(b.lastChangedAt) || time(a.createdAt) - time(b.createdAt) || compareText(a.key, b.key));
}

/** Why each candidate is needed (rollback, archive, a container kubelet does not see, a pin kubelet ignores). */
export function neededFlags(images: StoreImage[], keepVersions = DEFAULT_KEEP_VERSIONS, who = 'k3s'): Map<string, NeededFlag[]> {
  const keeps = rollbackKeeps(images.map((i) => ({ ...i, inUse: i.usedBy.length > 0 })), keepVersions);
  const out = new Map<string, NeededFlag[]>();
  for (const i of images) {
    const flags: NeededFlag[] = [];
    if (i.need) flags.push({ kind: 'site-need', text: `The site needs it (${i.need.because}): a pod that needs it cannot start once kubelet deletes it.` });
    const k = keeps.get(i.key);
    if (k) flags.push({ kind: 'rollback', text: k.why === 'rollback' ? `Rollback target: ${k.text}.` : `Needed for rollback: ${k.text}.` });
    if (i.lostPin) {
      flags.push({ kind: 'lost-pin', text: "Holdfast made its pin durable and that pin is gone: it was meant to be kept (see the node's lost pins)." });
    }
    if (i.archive) {
      flags.push({
        kind: 'archive',
        text: i.archive.endsWith('.txt')
          ? `The pre-pull list ${i.archive} in the images dir names it: ${who} would try to pull it at its next start, which fails without a registry.`
          : `The archive ${i.archive} in the images dir brings it: until ${who} imports it again, no pod can start from it.`,
      });
    }
    const outside = i.usedBy.filter((u) => !u.kubelet);
    if (outside.length && !i.usedBy.some((u) => u.kubelet)) {
      flags.push({
        kind: 'outside-cri',
        text: `Used by ${outside.map((u) => u.id).join(', ')}, a container record made outside CRI (ctr, nerdctl): kubelet does not see it and may delete the image.`,
      });
    }
    if (i.pin !== 'none' && (!i.pinnedForKubelet || i.pinUncertain)) {
      flags.push({
        kind: 'pin-ignored',
        text: i.pinUncertain
          ? 'Pinned on some of its references only: this containerd (1.7.3–1.7.9) takes the pin from whichever reference CRI loaded first, so kubelet may ignore it.'
          : "Pinned, but this containerd has no CRI pinning (before 1.7.3): kubelet's GC ignores the pin.",
      });
    }
    if (flags.length) out.set(i.key, flags);
  }
  return out;
}

export function forecastGc(input: { images: StoreImage[]; index: BlobIndex; imagefs: FsStats | null; policy: GcPolicy; keepVersions?: number; /** the node's distro, as the text names it */ who?: string }): GcForecast {
  const { images, index, imagefs, policy } = input;
  const candidates = gcCandidates(images);
  const needed = neededFlags(images, input.keepVersions, input.who);
  const frees = freedInOrder(
    index,
    candidates.map((c) => c.key),
  );
  const target = imagefs ? bytesToFreeAtHigh(imagefs, policy) : null;
  const bytesToFree = target?.bytes ?? 0;
  const steps: ForecastStep[] = [];
  let counted = 0;
  let freed = 0;
  let stopped = !target; // unmeasured: nothing is known to be deleted
  let deletedCount = 0;
  let kubeletCounts = 0;
  let realFreed = 0;
  candidates.forEach((c, i) => {
    counted += c.criSize;
    freed += frees[i]!;
    const deleted = !stopped && bytesToFree > 0;
    if (deleted) {
      deletedCount++;
      kubeletCounts = counted;
      realFreed = freed;
      if (counted >= bytesToFree) stopped = true;
    }
    steps.push({ key: c.key, refs: c.refs, criSize: c.criSize, frees: frees[i]!, counted, freed, deleted, needed: needed.get(c.key) ?? [] });
  });
  const usageAfter =
    target && imagefs?.totalBytes ? kubeletUsagePercent({ totalBytes: imagefs.totalBytes, freeBytes: target.availableAtStart + realFreed }) : null;
  const notes: string[] = [];
  if (!imagefs) notes.push('The image file system could not be measured, so how much kubelet would delete is not known; the order still stands.');
  if (target && kubeletCounts > realFreed) {
    notes.push(
      'kubelet counts each image at its full size, shared layers included, so it stops once that count reaches its target even though the disk gains less; its next run (every 5 minutes) deletes more.',
    );
  }
  if (target && deletedCount === candidates.length && counted < bytesToFree) {
    // With no candidate at all "even deleting every image it may delete" reads as if some were:
    // say what the empty list means instead.
    notes.push(
      candidates.length === 0
        ? `With nothing it may delete, kubelet's GC frees no space: once the disk reaches ${formatPercent(policy.highPercent)}, it keeps filling until pods are evicted.`
        : 'Even deleting every image it may delete, kubelet does not reach the low threshold: the disk keeps filling until pods are evicted.',
    );
  }
  notes.push("kubelet spares images it first saw less than 2 minutes ago (image-minimum-gc-age), so a just-imported image is taken on a later run.");
  const maxAge: MaxAgeForecast | null = policy.maxAge
    ? {
        ...policy.maxAge,
        age: formatAge(policy.maxAge.seconds),
        when: maxAgeWhen(policy.maxAge),
        keys: steps.map((st) => st.key),
        needed: steps.filter((st) => st.needed.length > 0).length,
        text: maxAgeSentence(policy.maxAge, steps.length),
      }
    : null;
  return {
    measured: Boolean(target),
    usedPercent: imagefs ? kubeletUsagePercent(imagefs) : null,
    highPercent: policy.highPercent,
    lowPercent: policy.lowPercent,
    triggeredNow: target?.now ?? false,
    bytesToFree,
    steps,
    deletedCount,
    kubeletCounts,
    realFreed,
    usageAfterPercent: usageAfter,
    reachesLow: Boolean(target) && usageAfter !== null && usageAfter <= policy.lowPercent,
    neededDeleted: steps.filter((s) => s.deleted && s.needed.length > 0).length,
    eviction: { atPercent: evictionAtPercent(policy.evictionHard.imagefs, imagefs?.totalBytes ?? null), freed },
    orderNote: ORDER_NOTE,
    notes,
    maxAge,
  };
}
