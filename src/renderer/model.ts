// Pure view-model helpers for the images table: grouping by image id, search, filter, sort
// and formatting. No React, no DOM — unit-tested in test/unit/renderer.
import {
  LABEL_CRI_PINNED,
  PINNED,
  type ArchiveInfo,
  type AuditEntry,
  type Fate,
  type ImageRef,
  type ImportPhase,
  type Job,
  type JobNodeProgress,
  type JobState,
  type LostPin,
  type LostPinKind,
  type LostPinRemedy,
  type PinState,
} from '../shared/domain';
import { refKind, strongestPin } from '../shared/drift';
import { formatBytes, formatDuration, shortDigest as shortHex } from '../shared/format';
import { pinState } from '../shared/pinState';
import { LOST_PIN_KIND_TEXT } from '../shared/lostPins';
import { isImageIdRef, protectionChange, protectionOfImages, refOutcome, refReading, refsByImage, type ImageProtection, type ProtectionChange } from '../shared/protection';
import { criPinning, type CriPinning } from '../shared/versions';
import { compareText, sortByText } from '../shared/compareText';
import { isImageIdRecord, repositoryOf } from '../shared/reference';
import type { RefNeed } from '../shared/needVerdict';

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
}

export { refKind };

const KIND_ORDER: Record<RefView['kind'], number> = { tag: 0, digest: 1, id: 2 };
/** A bit per pin state: an image's pins are mixed when more than one bit is set (no Set per image). */
const PIN_BIT: Record<PinState, number> = { durable: 1, k3s: 2, none: 4 };

/**
 * References grouped into images by image id, each with kubelet's verdict from the one protection
 * model under the node's containerd rule `mode` (criModeOf the node's info).
 */
export function groupImages(images: readonly ImageRef[], mode: CriPinning = 'unknown'): ImageGroup[] {
  const byKey = refsByImage(images);
  const protection = protectionOfImages(byKey, mode);
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
    for (const i of list) {
      if (need === null && i.need) need = i.need;
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
  const counts: Record<PinFilter, number> = { all: groups.length, durable: 0, k3s: 0, none: 0, atRisk: 0 };
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

export function filterGroups(groups: readonly ImageGroup[], query: string, pin: PinFilter): ImageGroup[] {
  const q = normalQuery(query);
  const byPin = (g: ImageGroup) => pin === 'all' || (pin === 'atRisk' ? g.fate === 'lose' : g.pin === pin);
  return groups.filter((g) => byPin(g) && matchesLower(g, q));
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

/** Binary units (shared/format, the one byte formatter); '—' when unknown. */
export const humanSize = (bytes: number): string => formatBytes(bytes);

/** "sha256:0123456789abcdef…" → "0123456789ab" (the 12 hex digits docker and crictl print). */
export const shortId = (id: string | null): string => shortHex(id);

/** Shorten the digest part of a digest reference for display; the full value goes in a title. */
export function displayRef(name: string): string {
  const at = name.lastIndexOf('@sha256:');
  if (at < 0) return name;
  return `${name.slice(0, at)}@sha256:${name.slice(at + 8, at + 8 + 12)}…`;
}

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export const PIN_TEXT: Record<PinState, { label: string; description: string }> = {
  durable: {
    label: 'Durable',
    description: 'Pinned for the CRI without a distro label: k3s never strips it and kubelet never deletes it.',
  },
  k3s: {
    label: 'k3s pin',
    description: 'Pinned by k3s: the pin is removed at the next k3s start unless the archive is re-imported.',
  },
  none: {
    label: 'Unpinned',
    description: 'Not pinned: kubelet image garbage collection may delete it.',
  },
};

export const FATE_TEXT: Record<RefFateKind, { label: string; description: string }> = {
  kept: { label: 'Kept', description: 'Still pinned after the next k3s start.' },
  lose: {
    label: 'Will lose pin',
    description: 'Pinned now, but the next k3s start removes the pin: kubelet may then delete the image.',
  },
  gain: { label: 'Pinned at start', description: 'Not pinned now; the next k3s start imports its archive and pins it.' },
  none: { label: 'Stays unpinned', description: 'Not pinned now and not after the next k3s start.' },
  drops: {
    label: 'Own pin goes',
    description: 'This reference loses its own pin at the next k3s start; kubelet keeps the image through another reference that stays pinned.',
  },
};

/** Pin state as the labels alone say it (shared/pinState, the core's rule). */
export const pinFromLabels = (labels: Record<string, string>): PinState => pinState(labels);

export interface LabelDiff {
  key: string;
  before?: string;
  after?: string;
  kind: 'added' | 'removed' | 'changed';
}

/** Only the labels that differ, sorted by key: what an operation actually writes. */
export function diffLabels(before: Record<string, string>, after: Record<string, string>): LabelDiff[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: LabelDiff[] = [];
  for (const key of keys) {
    const b = before[key];
    const a = after[key];
    if (b === a) continue;
    if (b === undefined) out.push({ key, after: a, kind: 'added' });
    else if (a === undefined) out.push({ key, before: b, kind: 'removed' });
    else out.push({ key, before: b, after: a, kind: 'changed' });
  }
  return out;
}

export const ARCHIVE_KIND_TEXT: Record<ArchiveInfo['kind'], { label: string; description: string }> = {
  archive: { label: 'Archive', description: 'An image archive k3s imports (and pins) at every start.' },
  prepull: { label: 'Pre-pull list', description: 'A .txt list of references k3s pulls through the CRI at start.' },
  ignored: { label: 'Ignored', description: 'k3s skips this file (unsupported extension).' },
};

export function compressionText(c: ArchiveInfo['compression']): string {
  return c === null ? '—' : c === 'none' ? 'none' : c;
}

/** Archives first, then pre-pull lists, then ignored files; by path within each. */
export function sortArchives(items: readonly ArchiveInfo[]): ArchiveInfo[] {
  const rank = { archive: 0, prepull: 1, ignored: 2 } as const;
  return [...items].sort((a, b) => rank[a.kind] - rank[b.kind] || compareText(a.path, b.path));
}

/**
 * Newest first. The log is append-only, so among equal (or unreadable) times the later entry is
 * the newer one; unreadable times sort last.
 */
export function sortAudit(entries: readonly AuditEntry[]): AuditEntry[] {
  return entries
    .map((e, i) => ({ e, i, t: Date.parse(e.time) }))
    .sort((x, y) => {
      const xt = Number.isNaN(x.t) ? Number.NEGATIVE_INFINITY : x.t;
      const yt = Number.isNaN(y.t) ? Number.NEGATIVE_INFINITY : y.t;
      if (xt !== yt) return yt > xt ? 1 : -1;
      return y.i - x.i;
    })
    .map((x) => x.e);
}

export const AUDIT_ACTION_TEXT: Record<AuditEntry['action'], string> = {
  pin: 'Made durable',
  unpin: 'Released durable pin',
  'rm-archive': 'Removed archive',
  prune: 'Pruned images',
};

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${formatDate(iso)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "sha256:abcdef…" → "abcdef012345…" for a compact display; full value in a title. */
export function shortDigest(d: string, len = 16): string {
  const hex = d.includes(':') ? d.slice(d.indexOf(':') + 1) : d;
  return hex.length > len ? `${hex.slice(0, len)}…` : hex;
}

// ---------------------------------------------------------------------------------------------
// Import jobs: phases, progress, rate and ETA for the wizard and the jobs panel.

export const PHASE_TEXT: Record<ImportPhase, string> = {
  queued: 'Waiting',
  checking: 'Checking',
  uploading: 'Uploading',
  verifying: 'Verifying',
  importing: 'Importing',
  pinning: 'Pinning',
  removing: 'Removing archive',
  done: 'Done',
};

/** The phases a node goes through, in order, for the given options (the stepper's steps). */
export function phasesFor(options: Job['options']): ImportPhase[] {
  return [
    'checking',
    'uploading',
    'verifying',
    'importing',
    ...(options.pin ? (['pinning'] as const) : []),
    ...(options.removeArchive ? (['removing'] as const) : []),
    'done',
  ];
}

export function isJobFinished(state: JobState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

/** Running (and queued) first, then finished; newest first within each. */
export function sortJobs(jobs: readonly Job[]): Job[] {
  return [...jobs].sort((a, b) => {
    const fa = isJobFinished(a.state) ? 1 : 0;
    const fb = isJobFinished(b.state) ? 1 : 0;
    return fa - fb || b.createdAt.localeCompare(a.createdAt);
  });
}

/** The jobs indicator: how many run, and their mean progress (0..1). */
export function jobsSummary(jobs: readonly Job[]): { running: number; finished: number; failed: number; progress: number } {
  const running = jobs.filter((j) => !isJobFinished(j.state));
  const progress = running.length ? running.reduce((n, j) => n + clamp01(j.progress), 0) / running.length : 1;
  return {
    running: running.length,
    finished: jobs.length - running.length,
    failed: jobs.filter((j) => j.state === 'failed').length,
    progress,
  };
}

export function clamp01(v: number): number {
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
}

export function percent(v: number): string {
  return `${Math.floor(clamp01(v) * 100)}%`;
}

export function humanRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '—';
  return `${humanSize(Math.round(bytesPerSecond))}/s`;
}

/** "4 s", "2 min 05 s", "1 h 03 min"; null or unknown → "—" (shared/format). */
export const humanEta = (seconds: number | null): string => formatDuration(seconds);

export function basename(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** Paths typed or pasted into the path field: one per line, trimmed, surrounding quotes dropped. */
export function parsePathInput(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim().replace(/^(['"])(.*)\1$/, '$2').trim())
    .filter(Boolean);
}

/** A path the contract accepts as a local file: absolute (POSIX or Windows drive). */
export function isAbsoluteLocalPath(p: string): boolean {
  return (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) && !p.includes('\0');
}

/** Per node of finished jobs: the ones to run again (failed or cancelled). */
export function nodesToRetry(job: Job): string[] {
  return job.nodes.filter((n) => n.state === 'failed' || n.state === 'cancelled').map((n) => n.node);
}

/** How far one node is (0..1): bytes while uploading, a fixed share for the other phases. */
export function nodeProgress(n: JobNodeProgress): number {
  if (n.state === 'succeeded') return 1;
  if (n.phase === 'uploading' && n.bytesTotal > 0) return 0.05 + 0.75 * clamp01(n.bytesDone / n.bytesTotal);
  const share: Record<ImportPhase, number> = { queued: 0, checking: 0.02, uploading: 0.05, verifying: 0.8, importing: 0.85, pinning: 0.92, removing: 0.96, done: 1 };
  return share[n.phase] ?? 0;
}

export const JOB_STATE_TEXT: Record<JobState, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** A per-list, per-CRI-rule memo (the rule only changes when a node reports other versions). */
function memo<T>(compute: (items: readonly ImageRef[], mode: CriPinning) => T) {
  const cache = new WeakMap<readonly ImageRef[], Map<CriPinning, T>>();
  return (items: readonly ImageRef[], mode: CriPinning = 'unknown'): T => {
    let byMode = cache.get(items);
    if (!byMode) cache.set(items, (byMode = new Map()));
    if (!byMode.has(mode)) byMode.set(mode, compute(items, mode));
    return byMode.get(mode)!;
  };
}

/** groupImages, memoised per reference list and CRI rule: the tab counts, the table and the fleet share one grouping. */
export const groupsOfRefs = memo((items, mode) => groupImages(items, mode));

/** Image counts of one node's reference list, memoised (the fleet overview renders often). */
export const countsOfRefs = memo((items, mode) => countByPin(groupsOfRefs(items, mode)));

/**
 * A reference split for display in a narrow cell: the repository (which may be cut with an
 * ellipsis) and the tag or digest part (kept whole: it is what tells two versions apart).
 */
export function splitRef(name: string): [repo: string, suffix: string] {
  const repo = repositoryOf(name);
  return [repo, name.slice(repo.length)];
}

/**
 * A repository split where a narrow cell cuts it: the registry and path up to the last `/`
 * (cut first), then the image's own name (what a technician reads the row by).
 * `docker.io/library/nginx` → [`docker.io/library/`, `nginx`].
 */
export function splitRepo(repo: string): [path: string, base: string] {
  const slash = repo.lastIndexOf('/');
  return slash < 0 ? ['', repo] : [repo.slice(0, slash + 1), repo.slice(slash + 1)];
}

// ---------------------------------------------------------------------------------------------
// Pins lost behind Holdfast's back (shared/lostPins.ts), as the node view shows them: one entry
// per image and kind of loss, the tag first, the one-click remedy when there is one.

export interface LostPinGroup {
  key: string;
  node: string;
  imageId: string | null;
  kind: LostPinKind;
  /** Tags first, then digest references (CRI's sha256:<id> record last). */
  refs: string[];
  /** The newest time Holdfast made one of them durable, and who. */
  pinnedAt: string;
  pinnedBy: string;
  summary: string;
  causes: string[];
  remedy: LostPinRemedy;
  stillPinnedVia: string | null;
}

const refOrder = (name: string) => (isImageIdRecord(name) ? 2 : refKind(name) === 'tag' ? 0 : 1);

export function groupLostPins(lost: readonly LostPin[]): LostPinGroup[] {
  const byKey = new Map<string, LostPin[]>();
  for (const l of lost) {
    const key = `${l.node}\0${l.imageId ?? l.ref}\0${l.kind}`;
    byKey.set(key, [...(byKey.get(key) ?? []), l]);
  }
  const out: LostPinGroup[] = [];
  for (const [key, list] of byKey) {
    const sorted = [...list].sort((a, b) => refOrder(a.ref) - refOrder(b.ref) || compareText(a.ref, b.ref));
    const first = sorted[0]!;
    const newest = [...list].sort((a, b) => (a.pinnedAt < b.pinnedAt ? 1 : a.pinnedAt > b.pinnedAt ? -1 : 0))[0]!;
    out.push({
      key,
      node: first.node,
      imageId: first.imageId,
      kind: first.kind,
      refs: sorted.map((l) => l.ref),
      pinnedAt: newest.pinnedAt,
      pinnedBy: newest.pinnedBy,
      summary: first.summary,
      causes: first.causes,
      remedy: sorted.find((l) => l.remedy.kind === 'repin')?.remedy ?? first.remedy,
      stillPinnedVia: first.stillPinnedVia,
    });
  }
  // Images that nothing pins any more first: they are the ones kubelet may delete.
  return out.sort((a, b) => Number(a.stillPinnedVia !== null) - Number(b.stillPinnedVia !== null) || compareText(a.refs[0]!, b.refs[0]!));
}

export const lostKindText = (k: LostPinKind): string => LOST_PIN_KIND_TEXT[k];

/** One line for a live alert: "edge-01: nginx:1.27.3 — pin label removed (made durable by tech, 2025-03-01 08:15:02)". */
export function lostPinLine(l: Pick<LostPin, 'node' | 'ref' | 'kind' | 'pinnedAt' | 'pinnedBy'>): string {
  return `${l.node}: ${displayRef(l.ref)} — ${LOST_PIN_KIND_TEXT[l.kind]} (made durable by ${l.pinnedBy}, ${formatDateTime(l.pinnedAt)})`;
}

// ---------------------------------------------------------------------------------------------
// The fleet overview's pin verdict: never an all-clear for data not yet in.

export interface FleetPinInput {
  /** The node's connection state. */
  connection: string;
  /** Its images list (state, and when it last loaded). */
  images: { state: string; loadedAt?: number };
  /** Images at risk on it (counted only once its images are in). */
  atRisk: number;
}

export type FleetPinVerdict =
  | { kind: 'at-risk'; images: number; nodes: number; pending: number }
  | { kind: 'loading'; nodes: number }
  | { kind: 'unknown'; nodes: number }
  | { kind: 'all-clear' }
  | { kind: 'nothing' };

/**
 * What the fleet banner may say: images at risk; else, while a connected node's images are not in
 * yet, that they are loading (or could not be listed) — never "no pin is lost" for a node whose
 * images Holdfast has not seen; else the all-clear for the connected nodes.
 */
export function fleetPinVerdict(nodes: readonly FleetPinInput[]): FleetPinVerdict {
  const connected = nodes.filter((n) => n.connection === 'connected');
  const notIn = connected.filter((n) => !n.images.loadedAt);
  const failed = notIn.filter((n) => n.images.state === 'error').length;
  const loading = notIn.length - failed;
  const risky = connected.filter((n) => n.images.loadedAt && n.atRisk > 0);
  if (risky.length) return { kind: 'at-risk', images: risky.reduce((s, n) => s + n.atRisk, 0), nodes: risky.length, pending: notIn.length };
  if (loading) return { kind: 'loading', nodes: loading };
  if (failed) return { kind: 'unknown', nodes: failed };
  return connected.length ? { kind: 'all-clear' } : { kind: 'nothing' };
}
