// The safe cleanup: which images `holdfast prune` (and the app's Prune) removes, and why it
// keeps every other one. Unlike `crictl rmi --prune` (which takes the previous release too) and
// `ctr images prune --all` (which ignores pins), it removes only whole images that no container
// record names, that no pin label protects, that no archive or pre-pull list in the images dir
// brings, and that are not among the versions a repository in use needs for rollback. Releasing
// a durable pin is always a separate, explicit step (holdfast unpin): prune never unpins.
// Pure: the dry run, the real run, the CLI and the app plan with this one function.
import type { AuditEntry, PrunedRecord } from './domain/audit';
import { formatBytes } from './format';
import { plural } from './wording';
import { gcCandidates } from './gcForecast';
import { deletionOrder, freedInOrder, storeBytes, type BlobIndex, type StoreImage } from './imageStore';
import { DEFAULT_KEEP_VERSIONS, rollbackKeeps } from './imageVersions';
import { compareText } from './compareText';
import type { Prose } from './remedy';

export interface PruneOptions {
  /** Newest versions of every repository in use kept for rollback (≥ 1). */
  keepVersions: number;
}

export type PruneKeepReason = 'in-use' | 'needed' | 'pinned' | 'archive' | 'peers' | 'rollback' | 'unresolved';

export interface PruneRemoval {
  key: string;
  imageId: string | null;
  /** Every reference of the image, in the order they are deleted. */
  refs: string[];
  digests: string[];
  criSize: number;
  /** What removing it frees, taken in plan order (the total does not depend on the order). */
  bytes: number;
}

export interface PruneKept {
  key: string;
  refs: string[];
  reason: PruneKeepReason;
  /** One sentence: why prune leaves it (and, for pins, how to release it if it is obsolete: its remedies as data). */
  text: Prose;
}

export interface PrunePlan {
  node: string;
  keepVersions: number;
  remove: PruneRemoval[];
  kept: PruneKept[];
  /** What removing every planned image frees. */
  freedBytes: number;
  /** Bytes of every blob the node's images reference, before. */
  storeBytes: number;
  imagesBefore: number;
}

/** What a real run did; `removed` is a subset of the plan it was given. */
export interface PruneResult {
  node: string;
  keepVersions: number;
  removed: PruneRemoval[];
  /** Images in the preview that the fresh plan at apply time would no longer remove, with why. */
  refused: { key: string; refs: string[]; text: Prose }[];
  failed: { key: string; refs: string[]; deletedRefs: string[]; error: string }[];
  plannedBytes: number;
  /** Measured after the deletions: bytes of the removed images' blobs that are gone from the content store. */
  freedBytes: number;
  audit: AuditEntry | null;
}

export const MAX_KEEP_VERSIONS = 100;

/** Why prune keeps an image, in one short clause (each kept image's `text` is the sentence). */
export const PRUNE_KEEP_BRIEF: Record<PruneKeepReason, string> = {
  'in-use': 'in use by a container',
  needed: 'the site needs it',
  pinned: 'pinned: prune never unpins',
  archive: 'a file in the images dir brings it back',
  peers: 'peers pull it from this node',
  rollback: 'kept for rollback',
  unresolved: 'Holdfast cannot tell which image it is',
};

function why(node: string, i: StoreImage, keeps: ReturnType<typeof rollbackKeeps>, peers: ReadonlyMap<string, string>, who: string): { reason: PruneKeepReason; text: Prose } | null {
  if (i.usedBy.length) {
    const ids = i.usedBy.map((u) => u.id);
    return { reason: 'in-use', text: `In use by ${ids.length === 1 ? 'container' : 'containers'} ${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ` and ${ids.length - 3} more` : ''}.` };
  }
  if (i.need) {
    // Never removed while the site may still need it: at an air-gapped site nobody pulls it again.
    const text = `The site needs it (${i.need.because}).`;
    if (i.pinnedForKubelet || i.pin === 'durable') return { reason: 'needed', text };
    return { reason: 'needed', text: { text: `${text} Make it durable`, remedy: { action: 'pin', node, needed: true }, end: '', colon: true } };
  }
  if (i.pin === 'durable') {
    const ref = i.refs[0] ?? i.key;
    return { reason: 'pinned', text: { text: 'Pinned durably; prune never unpins. If this version is obsolete, release its pin first', remedy: { action: 'unpin', node, ref }, end: '', colon: true } };
  }
  if (i.pin === 'distro') {
    return {
      reason: 'pinned',
      text: i.archive
        ? `Pinned by ${who}: ${i.archive} in the images dir brings it. Prune never unpins; remove the archive first if the image is obsolete.`
        : `Pinned by ${who} (until its next start strips the pin); prune never unpins.`,
    };
  }
  if (i.lostPin) {
    const ref = i.refs[0] ?? i.key;
    return {
      reason: 'pinned',
      text: [
        { text: "Holdfast made its pin durable and that pin is gone (removed behind Holdfast's back): pin it again", remedy: { action: 'pin', node, ref }, end: '' },
        { text: ', or release it for good', remedy: { action: 'unpin', node, ref }, end: ' before pruning it.' },
      ],
    };
  }
  if (i.archive) {
    return {
      reason: 'archive',
      text: i.archive.endsWith('.txt')
        ? `The pre-pull list ${i.archive} in the images dir names it: ${who} would try to pull it again at its next start.`
        : `The archive ${i.archive} in the images dir brings it: ${who} would import it again. Remove the archive first if the image is obsolete.`,
    };
  }
  // k3s's embedded registry serves it to other nodes (shared/embeddedRegistry peerKeepText).
  const served = peers.get(i.key);
  if (served) return { reason: 'peers', text: served };
  if (i.imageId === null) {
    return { reason: 'unresolved', text: "Holdfast cannot tell which image this is (its manifest for the node's platform or its config is not in the content store)." };
  }
  const k = keeps.get(i.key);
  if (k) return { reason: 'rollback', text: `${k.text[0]!.toUpperCase()}${k.text.slice(1)}: kept for rollback.` };
  return null;
}

/**
 * `peers`: image key → why peers pull it from this node through k3s's embedded registry (kept:
 * at an air-gapped site another node may need this copy).
 */
export function planPrune(
  node: string,
  images: StoreImage[],
  index: BlobIndex,
  opts: PruneOptions = { keepVersions: DEFAULT_KEEP_VERSIONS },
  peers: ReadonlyMap<string, string> = new Map(),
  /** The node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName). */
  who = 'k3s',
): PrunePlan {
  const keepVersions = Math.max(1, Math.min(MAX_KEEP_VERSIONS, Math.floor(opts.keepVersions)));
  const keeps = rollbackKeeps(images.map((i) => ({ ...i, inUse: i.usedBy.length > 0 })), keepVersions);
  const kept: PruneKept[] = [];
  const removable = new Set<string>();
  for (const i of images) {
    const w = why(node, i, keeps, peers, who);
    if (w) kept.push({ key: i.key, refs: i.refs, ...w });
    else removable.add(i.key);
  }
  // kubelet's order (oldest first), then anything kubelet would not take itself.
  const order = [...gcCandidates(images).filter((i) => removable.has(i.key)), ...images.filter((i) => removable.has(i.key))].filter(
    (i, n, all) => all.findIndex((x) => x.key === i.key) === n,
  );
  const bytes = freedInOrder(
    index,
    order.map((i) => i.key),
  );
  const remove = order.map((i, n) => ({ key: i.key, imageId: i.imageId, refs: deletionOrder(i.refs), digests: i.digests, criSize: i.criSize, bytes: bytes[n]! }));
  return {
    node,
    keepVersions,
    remove,
    kept: kept.sort((a, b) => compareText(a.reason, b.reason) || compareText(a.key, b.key)),
    freedBytes: remove.reduce((s, r) => s + r.bytes, 0),
    storeBytes: storeBytes(index),
    imagesBefore: images.length,
  };
}

/** A prune's audit entry in one sentence, as the CLI's log and the app's Log tab say it. */
export function prunedText(p: PrunedRecord): string {
  return `${plural(p.images.length, 'image')} removed, ${formatBytes(p.freedBytes)} freed (kept the ${p.keepVersions} newest versions of every repository in use)`;
}

/** One removed image of that entry: its references and size. */
export function prunedImageText(i: PrunedRecord['images'][number]): string {
  return `${plural(i.refs.length, 'reference')} · ${formatBytes(i.bytes)}`;
}
