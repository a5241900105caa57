// The images table's view model: references grouped into images by image id (with kubelet's
// verdict from the one protection model, shared/protection), the pin counts and the at-risk list,
// search, the pin filter and the sort, and the per-list memo the tab counts, the table and the
// fleet share. No React, no DOM — unit-tested in test/unit/renderer.
import type { ImageRef } from '../../shared/domain/images';
import { LABEL_CRI_PINNED, PINNED } from '../../shared/domain/labels';
import type { Fate, PinState } from '../../shared/domain/pins';
import { refKind, strongestPin } from '../../shared/drift';
import { isImageIdRef, protectionChange, protectionOfImages, refOutcome, refReading, refsByImage, type ImageProtection, type ProtectionChange } from '../../shared/protection';
import { criPinning, type CriPinning } from '../../shared/versions';
import { compareText, sortByText } from '../../shared/compareText';
import type { RefNeed } from '../../shared/needVerdict';
import type { SignatureRecord } from '../../shared/signatures';
import { imagePeers, type PeerServing } from '../../shared/embeddedRegistry';

export interface RefView {
  name: string;
  /** tag, name@sha256 digest reference, or CRI's own sha256:<image id> record. */
  kind: 'tag' | 'digest' | 'id';
  pin: PinState;
  /**
   * The pin as the details show it (shared/protection refReading): CRI's unlabelled sha256:<id>
   * record reads as its image's pin (`inherited`), never "not pinned" beside a kept fate.
   */
  shownPin: PinState;
  inherited: boolean;
  digest: string;
  afterRestart: Fate;
  /** The reference's own fate read against its image's (shared/protection refOutcome). */
  fate: RefFateKind;
  reason: string;
  archive: string | null;
  /** Whether peers can pull this reference from the node (k3s's embedded registry); absent: no verdict. */
  peers?: PeerServing;
}

/**
 * What the next k3s start does to an image as kubelet sees it (shared/protection, the one model):
 * kept (pinned, stays pinned), lose (pinned now, unpinned after — the at-risk case),
 * gain (unpinned now, an archive re-pins it) and none (stays unpinned).
 */
export type FateKind = ProtectionChange;

/** A reference's fate: an image's kinds, or 'drops' — its own pin goes while the image stays kept. */
export type RefFateKind = FateKind | 'drops';

function refFate(r: ImageRef, image: ImageProtection): RefFateKind {
  const o = refOutcome(r, image);
  if (o === 'loses-pin') return 'lose';
  if (o === 'own-pin-goes') return 'drops';
  const pinnedNow = r.labels[LABEL_CRI_PINNED] === PINNED || r.pin !== 'none';
  return o === 'pinned' ? (pinnedNow ? 'kept' : 'gain') : 'none';
}

/** CRI's record read as its image (refReading): its image's pin now, so never "gains a pin". */
const INHERITED_FATE: Record<ReturnType<typeof refOutcome>, RefFateKind> = { 'loses-pin': 'lose', 'own-pin-goes': 'drops', pinned: 'kept', unpinned: 'none' };

/** The CRI rule of a node from what it reports (unknown until connected: read as ≥ 1.7.10). */
export const criModeOf = (info: { containerdVersion?: string | null } | null | undefined): CriPinning => criPinning(info?.containerdVersion);

export interface ImageGroup {
  /** imageId when known, else the record's target digest (so it still gets its own row). */
  key: string;
  imageId: string | null;
  refs: RefView[];
  /** The name used for sorting and as the row's title: first tag, else first digest ref. */
  primaryName: string;
  /** The strongest pin state among its references (a display of labels; protection is `fate`). */
  pin: PinState;
  /** True when the references disagree about the pin state. */
  mixedPins: boolean;
  size: number;
  platforms: string[];
  createdAt: string | null;
  digests: string[];
  labels: Record<string, string>;
  /** Pinned after the next k3s start as kubelet sees the image (shared/protection). */
  afterRestart: Fate;
  fate: FateKind;
  /** Why, naming the references that decide (shared/protection). */
  reason: string;
  /** The archive that brings the image (first reference that names one), or null. */
  archive: string | null;
  /** What the site's need makes of the image (shared/needs, as the core judged it); null when unknown. */
  need: RefNeed | null;
  /** Whether peers can pull the image from the node (shared/embeddedRegistry imagePeers); null: no verdict. */
  peers: PeerServing | null;
  /**
   * What Holdfast verified of its signature (#48): a reference's verified record, else a refused
   * one, else null (never verified). Verified as shared/signatures unverifiedImageCount counts it.
   */
  signature: SignatureRecord | null;
}

const KIND_ORDER: Record<RefView['kind'], number> = { tag: 0, digest: 1, id: 2 };
/** A bit per pin state: an image's pins are mixed when more than one bit is set (no Set per image). */
const PIN_BIT: Record<PinState, number> = { durable: 1, distro: 2, none: 4 };

/**
 * References grouped into images by image id, each with kubelet's verdict from the one protection
 * model under the node's containerd rule `mode` (criModeOf the node's info); `who` names the node's
 * distro in the verdicts' reasons (shared/distro distroDisplayName).
 */
export function groupImages(images: readonly ImageRef[], mode: CriPinning = 'unknown', who = 'k3s'): ImageGroup[] {
  const byKey = refsByImage(images);
  const protection = protectionOfImages(byKey, mode, who);
  const groups: ImageGroup[] = [];
  // One pass over each image's references (usually two: a tag and its digest reference) instead
  // of a map/filter/sort per field: with 5,000 images the small arrays were most of the time
  // (garbage collection) between the list's answer and the first rows.
  for (const [key, list] of byKey) {
    const p = protection.get(key)!;
    const refs: RefView[] = [];
    let pinBits = 0; // a bit per pin state seen on a tag or digest reference
    let idRecords = 0;
    let size = 0;
    let createdAt: string | null = null;
    let platforms: readonly string[] = list[0]!.platforms; // shared until another reference adds one
    const digests: string[] = [];
    // The references' labels merged; one map shared by them all (packed lists share it) is used as it is.
    let labels: Record<string, string> = list[0]!.labels;
    let ownLabels = false;
    let need: RefNeed | null = null;
    let signature: SignatureRecord | null = null;
    for (const i of list) {
      if (need === null && i.need) need = i.need;
      if (i.signature && !signature?.verified) signature = i.signature;
      const shown = isImageIdRef(i) ? refReading(i, list, p) : null;
      refs.push({
        name: i.name,
        kind: refKind(i.name),
        pin: i.pin,
        shownPin: shown?.pin ?? i.pin,
        inherited: shown?.inherited ?? false,
        digest: i.digest,
        afterRestart: i.afterRestart,
        fate: shown?.inherited ? INHERITED_FATE[shown.outcome] : refFate(i, p),
        reason: i.reason,
        archive: i.archive,
        ...(i.peers ? { peers: i.peers } : {}),
      });
      if (isImageIdRef(i)) idRecords++;
      else pinBits |= PIN_BIT[i.pin];
      if (i.size > size) size = i.size;
      if (i.createdAt !== null && (createdAt === null || i.createdAt < createdAt)) createdAt = i.createdAt;
      for (const pl of i.platforms) if (!platforms.includes(pl)) platforms = [...platforms, pl];
      if (!digests.includes(i.digest)) digests.push(i.digest);
      if (i.labels !== labels) {
        if (!ownLabels) {
          labels = { ...labels };
          ownLabels = true;
        }
        for (const k in i.labels) labels[k] = i.labels[k]!;
      }
    }
    if (refs.length > 1) refs.sort((a, b) => (a.kind === b.kind ? compareText(a.name, b.name) : KIND_ORDER[a.kind] - KIND_ORDER[b.kind]));
    // CRI's unlabelled sha256:<id> record does not make an image's pins "mixed"
    const judged = idRecords === 0 || idRecords === list.length ? list : list.filter((i) => !isImageIdRef(i));
    if (idRecords === list.length) for (const i of list) pinBits |= PIN_BIT[i.pin];
    groups.push({
      key,
      imageId: list[0]?.imageId ?? null,
      refs,
      primaryName: refs[0]?.name ?? key,
      pin: strongestPin(judged),
      mixedPins: (pinBits & (pinBits - 1)) !== 0,
      size,
      platforms: platforms.length > 1 ? sortPlatforms([...platforms]) : [...platforms],
      createdAt,
      digests,
      labels,
      afterRestart: p.afterRestart ? 'pinned' : 'unpinned',
      fate: protectionChange(p),
      reason: p.reason,
      archive: refs.find((r) => r.archive)?.archive ?? null,
      need,
      peers: imagePeers(refs),
      signature,
    });
  }
  // The name order, once per grouping (one pass of the collator): every later sort compares integers.
  const batch = {};
  sortByText(groups, (g) => g.primaryName).forEach((g, rank) => nameRanks.set(g, { batch, rank }));
  return groups;
}

/** A group's place in its grouping's name order (precomputed sort key; see sortGroups). */
const nameRanks = new WeakMap<ImageGroup, { batch: object; rank: number }>();

const COMMON_PLATFORMS = ['linux/amd64', 'linux/arm64'];

/** The platforms field nodes run most (amd64, arm64) first, then the rest alphabetically. */
export function sortPlatforms(platforms: string[]): string[] {
  const rank = (p: string) => {
    const i = COMMON_PLATFORMS.indexOf(p);
    return i < 0 ? COMMON_PLATFORMS.length : i;
  };
  return [...platforms].sort((a, b) => rank(a) - rank(b) || compareText(a, b));
}

/** A pin state, or 'atRisk': images whose pin the next k3s start removes. */
export type PinFilter = 'all' | PinState | 'atRisk';

export function countByPin(groups: readonly ImageGroup[]): Record<PinFilter, number> {
  const counts: Record<PinFilter, number> = { all: groups.length, durable: 0, distro: 0, none: 0, atRisk: 0 };
  for (const g of groups) {
    counts[g.pin] += 1;
    if (g.fate === 'lose') counts.atRisk += 1;
  }
  return counts;
}

export function atRiskGroups(groups: readonly ImageGroup[]): ImageGroup[] {
  return groups.filter((g) => g.fate === 'lose');
}

function searchFields(group: ImageGroup): string[] {
  return [
    ...group.refs.map((r) => r.name),
    ...group.digests,
    group.imageId ?? '',
    ...Object.entries(group.labels).flatMap(([k, v]) => [k, v, `${k}=${v}`]),
  ].map((h) => h.toLowerCase());
}

/** A group's searchable text, lower-cased, its fields joined by newlines: built once per group, not per keystroke. */
const searchTexts = new WeakMap<ImageGroup, string>();
function searchText(group: ImageGroup): string {
  let text = searchTexts.get(group);
  if (text === undefined) searchTexts.set(group, (text = searchFields(group).join('\n')));
  return text;
}

/** `query` trimmed and lower-cased, once for a whole list. */
const normalQuery = (query: string) => query.trim().toLowerCase();

/**
 * matchesQuery for a normalised query. Without a newline in it, a match in the joined text lies
 * within one field (the search box cannot type one; anything else checks field by field).
 */
function matchesLower(group: ImageGroup, q: string): boolean {
  if (!q) return true;
  if (q.includes('\n')) return searchFields(group).some((h) => h.includes(q));
  return searchText(group).includes(q);
}

/** Case-insensitive match on any reference name, digest, image id, label key or value. */
export function matchesQuery(group: ImageGroup, query: string): boolean {
  return matchesLower(group, normalQuery(query));
}

/** An image without a verified signature (refused, or never verified): the "Not verified" filter. */
export const isUnverifiedGroup = (g: ImageGroup): boolean => g.signature?.verified !== true;

/** `unverified`: only images without a verified signature, on top of the pin filter. */
export function filterGroups(groups: readonly ImageGroup[], query: string, pin: PinFilter, unverified = false): ImageGroup[] {
  const q = normalQuery(query);
  const byPin = (g: ImageGroup) => pin === 'all' || (pin === 'atRisk' ? g.fate === 'lose' : g.pin === pin);
  return groups.filter((g) => byPin(g) && (!unverified || isUnverifiedGroup(g)) && matchesLower(g, q));
}

export type SortKey = 'name' | 'size' | 'created';
export type SortDir = 'asc' | 'desc';

export function sortGroups(groups: readonly ImageGroup[], key: SortKey, dir: SortDir): ImageGroup[] {
  const sign = dir === 'asc' ? 1 : -1;
  // Groups of one grouping compare by their precomputed name rank; others by name.
  const batch = groups.length ? nameRanks.get(groups[0]!)?.batch : undefined;
  const ranked = batch !== undefined && groups.every((g) => nameRanks.get(g)?.batch === batch);
  const rankOf = ranked ? new Map(groups.map((g) => [g, nameRanks.get(g)!.rank])) : null;
  const nameOrder = rankOf
    ? (a: ImageGroup, b: ImageGroup) => rankOf.get(a)! - rankOf.get(b)!
    : (a: ImageGroup, b: ImageGroup) => compareText(a.primaryName, b.primaryName);
  return [...groups].sort((a, b) => {
    const byName = nameOrder(a, b);
    if (key === 'name') return byName * sign;
    if (key === 'size') return (a.size - b.size) * sign || byName;
    // Unknown creation dates always sort last, whatever the direction.
    if (a.createdAt === b.createdAt) return byName;
    if (a.createdAt === null) return 1;
    if (b.createdAt === null) return -1;
    return (a.createdAt < b.createdAt ? -1 : 1) * sign;
  });
}

/**
 * A per-list, per-CRI-rule, per-distro memo (the rule and the distro only change when a node
 * reports other versions).
 */
function memo<T>(compute: (items: readonly ImageRef[], mode: CriPinning, who: string) => T) {
  const cache = new WeakMap<readonly ImageRef[], Map<string, T>>();
  return (items: readonly ImageRef[], mode: CriPinning = 'unknown', who = 'k3s'): T => {
    let byMode = cache.get(items);
    if (!byMode) cache.set(items, (byMode = new Map()));
    const key = `${mode}\n${who}`;
    if (!byMode.has(key)) byMode.set(key, compute(items, mode, who));
    return byMode.get(key)!;
  };
}

/**
 * groupImages, memoised per reference list, CRI rule and distro name (`who`, for the reasons): the
 * tab counts, the table and the fleet share one grouping.
 */
export const groupsOfRefs = memo((items, mode, who) => groupImages(items, mode, who));

/** Image counts of one node's reference list, memoised (the fleet overview renders often). */
export const countsOfRefs = memo((items, mode, who) => countByPin(groupsOfRefs(items, mode, who)));
