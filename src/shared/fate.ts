// The fate of every image reference at the next k3s (or RKE2) start, by the rules of
// docs/k3s-facts.md ("What k3s does to images at every start", "The import cache (.cache.json)")
// and the release table (shared/versions.ts); the rules, with their k3s PRs, are on predictFates.
// Evidence on the node (the entry's `images`) wins over the version table; when neither tells,
// the pin is assumed lost and the reason says why. Pure: the same inputs give the same
// prediction, so it is unit-tested exhaustively and checked against the lab's emulated restart.
import { LABEL_CRI_PINNED, PINNED } from './domain/labels';
import type { Distro } from './domain/nodes';
import { distroProfile } from './distro';
import { distroPinsImports, firstReleases, K3S_RELEASES, type Support } from './versions';
import { isImageIdRecord, repositoryOf } from './imageReference';
import { listTrapReason, listTrapRemedy, type ListTrap } from './listTrap';
import type { PrepullList } from './domain/archives';
import type { FateVerdict, ListTrapVerdict } from './domain/images';
import type { CacheVerdict } from './importCache';

export interface FateRef {
  name: string;
  digest: string;
  imageId: string | null;
  labels: Record<string, string>;
}

export interface FateArchive {
  /** Relative to the images dir. */
  path: string;
  /** References the archive brings; null when its index could not be read. */
  images: { name: string; imageId: string | null }[] | null;
  /** k3s skips it at start because of .cache.json (or may, as far as Holdfast can tell). */
  cachedByK3s: boolean;
  /** Why, and the names k3s re-pins if it skips the file (shared/importCache cacheVerdict). */
  cache?: CacheVerdict;
  /** 'unknown': the node's release is unknown and only one of k3s's start-up walks takes it. */
  walked?: 'yes' | 'unknown';
}

/** A .txt pre-pull list in the images dir. */
export interface FatePrepull {
  path: string;
  list: PrepullList;
  cachedByK3s: boolean;
  cache?: CacheVerdict;
  walked?: 'yes' | 'unknown';
}

export interface FateContext {
  distro: Distro;
  distroVersion: string | null;
}

/** A reference's fate at the next start, with the list trap the same walk finds. */
export type RefFate = FateVerdict & ListTrapVerdict;

const isDigestRef = (ref: string) => ref.includes('@sha256:');


type Brought = { name: string; imageId: string | null };

/** Does one of `images` bring `ref` back: by name, or a digest ref by repository + image id? */
function brings(ref: FateRef, images: Brought[]): boolean {
  return images.some(
    (img) =>
      img.name === ref.name ||
      (isDigestRef(ref.name) && repositoryOf(img.name) === repositoryOf(ref.name) && img.imageId !== null && img.imageId === ref.imageId),
  );
}

/** Which archive brings a reference back on import: by name, or a digest ref by repository + image id. */
export function archivesBringing(ref: FateRef, archives: FateArchive[]): FateArchive[] {
  return archives.filter((a) => brings(ref, a.images ?? []));
}

const PIN_SINCE = firstReleases(K3S_RELEASES.pinsImports);
const WALK_SINCE = firstReleases(K3S_RELEASES.importCache);
const REPIN_SINCE = firstReleases(K3S_RELEASES.cacheRepin);

/** One file of the images dir that brings a reference, and what k3s's next start does with it. */
type Source = { path: string; trap?: ListTrap } & ({ repins: true; how: string } | { repins: false; why: string });

/** A .txt list resolved against the node's references, as k3s's prePullImages resolves it through CRI. */
interface ResolvedList {
  p: FatePrepull;
  /** Every tag of the images its names resolve to (CRI's RepoTags: all pinned together). */
  images: Brought[];
  /** The names the list itself gives (present ones), as containerd names them. */
  direct: Brought[];
  /** A listed name that is not in containerd: k3s would have to pull it. */
  missing: string | null;
}

function resolveList(p: FatePrepull, refs: FateRef[]): ResolvedList | null {
  if ('error' in p.list) return null;
  const byName = new Map(refs.map((r) => [r.name, r]));
  const ids = new Set<string>();
  const direct: Brought[] = [];
  let missing: string | null = null;
  for (const n of p.list.names) {
    const r = byName.get(n);
    if (!r) {
      missing ??= n;
      continue;
    }
    direct.push({ name: r.name, imageId: r.imageId });
    if (r.imageId) ids.add(r.imageId);
  }
  const tags = refs
    .filter((r) => r.imageId !== null && ids.has(r.imageId) && !isDigestRef(r.name) && !isImageIdRecord(r.name))
    .map((r) => ({ name: r.name, imageId: r.imageId }));
  return { p, images: [...direct, ...tags], direct, missing };
}

/** The start being predicted: who starts, which release, and what stops the prediction short. */
interface Start {
  who: string;
  /** `k3s v1.30.4+k3s1`, or `… unknown version`. */
  release: string;
  stripLabel: string;
  pinsAtAll: Support;
  /** Files of the images dir whose contents could not be read. */
  unreadable: string[];
}

/** A file's .cache.json verdict, as given, else as its `cachedByK3s` flag implies. */
const verdictOf = (f: { cachedByK3s: boolean; cache?: CacheVerdict }): CacheVerdict =>
  f.cache ?? (f.cachedByK3s ? { skipped: true, repins: [], recorded: null, why: 'unchanged', rule: 'unknown' } : { skipped: false, why: 'not-listed' });

/** Why a file k3s re-reads at start is re-read (one clause). */
const rereadWhy = (v: CacheVerdict): string =>
  v.skipped ? '' : v.why === 'no-images' ? ' (its .cache.json entry records no images)' : v.why === 'sub-second' ? ' (its mtime is later than the whole second .cache.json records)' : v.why === 'newer' || v.why === 'size' ? ' (it changed since .cache.json recorded it)' : '';

/** Why a file k3s skips at start does not pin `ref` again. */
function skipWhy(start: Start, ref: FateRef, path: string, v: CacheVerdict & { skipped: true }): string {
  const { who, release } = start;
  if (v.why === 'unreadable') return `.cache.json cannot be read, so Holdfast assumes ${who} skips ${path} without re-pinning it`;
  if (v.why === 'unreadable-entry') return `the .cache.json entry for ${path} cannot be read, so Holdfast assumes ${who} skips it without re-pinning it`;
  const unsure = v.why === 'maybe-sub-second' ? `the node did not tell ${path}'s mtime to the nanosecond, so Holdfast assumes ${who} skips it; ` : '';
  if (v.why === 'maybe-release') return `Holdfast cannot tell whether ${release} has the .cache.json fix (k3s PRs #14266/#14288); without it ${who} skips ${path} (same size) and re-pins nothing, so the pin is assumed lost`;
  if (v.rule === 'without-fix') {
    const ignored = v.recorded?.length ? '; the names its entry records are ignored by this release' : '';
    return `${unsure}${release} skips ${path} (same size in .cache.json) and re-pins nothing it skips (fixed by k3s PR #14266 in ${REPIN_SINCE})${ignored}`;
  }
  const what = isDigestRef(ref.name) ? 'not its digest references' : 'not this one';
  return `${unsure}${who} skips ${path} (unchanged to the second in .cache.json) and re-pins only the names its entry records, ${what}`;
}

type FileAtStart = { cachedByK3s: boolean; cache?: CacheVerdict; walked?: 'yes' | 'unknown' };

/** What the start does for `ref` with one file (archive or list), once read; null when the file has nothing to do with it. */
function outcome(start: Start, ref: FateRef, path: string, f: FileAtStart, brought: boolean, reread: string): Source | null {
  if (f.walked === 'unknown') {
    if (!brought) return null;
    return {
      path,
      repins: false,
      why: `${start.who} releases before ${WALK_SINCE} read only the top level of the images dir and match extensions case-insensitively, later ones the opposite; with the release unknown, Holdfast cannot tell whether ${path} is imported at all`,
    };
  }
  const v = verdictOf(f);
  if (!v.skipped) return brought ? { path, repins: true, how: `${reread}${rereadWhy(v)}` } : null;
  // The recorded names are pinned again whatever the file holds now (k3s trusts its cache).
  if (v.repins.includes(ref.name)) {
    return { path, repins: true, how: `${path} is unchanged to the second and .cache.json is on, but ${start.release} re-pins the names its .cache.json entry records (k3s PR #14266)` };
  }
  return brought ? { path, repins: false, why: skipWhy(start, ref, path, v) } : null;
}

/** What the start does for `ref` with one .txt list: a name it lacks is a pull, which fails air-gapped. */
function listOutcome(start: Start, ref: FateRef, l: ResolvedList): Source | null {
  const { who } = start;
  const brought = brings(ref, l.images);
  if (!brought) return outcome(start, ref, l.p.path, l.p, false, '');
  if (l.missing !== null) {
    return {
      path: l.p.path,
      repins: false,
      why: `${l.p.path} also names ${l.missing}, which is not in containerd: ${who} would pull it, and when that fails (no registry at an air-gapped site) it pins nothing from the list`,
    };
  }
  const o = outcome(start, ref, l.p.path, l.p, true, `${who} re-reads ${l.p.path} at start and pins the images it names again (they are present: no pull needed)`)!;
  // Not named itself: another tag of its image is (the sibling-tag trap).
  const listed = l.direct.some((d) => d.name === ref.name) ? undefined : l.direct.find((d) => d.imageId !== null && d.imageId === ref.imageId);
  return listed ? { ...o, trap: { list: l.p.path, listed: listed.name } } : o;
}

/** Before k3s PR #8781 there is neither clearLabels nor pinning: pins stay as they are. */
function fateBeforePins(start: Start, criPinned: boolean, sources: Source[]): RefFate {
  const first = sources[0]?.path ?? null;
  return criPinned
    ? {
        afterRestart: 'pinned',
        reason: `${start.release} predates k3s's pins (PR #8781: ${PIN_SINCE}): it neither pins what it imports nor strips pins at start, so this pin stays.`,
        archive: first,
      }
    : {
        afterRestart: 'unpinned',
        reason: `${start.release} does not pin the images it imports (pins came with ${PIN_SINCE})${first ? `: ${first} is imported again but not pinned` : ''}. kubelet's image garbage collector may delete it when no container uses it.`,
        archive: first,
      };
}

/** A file pins `ref` again at start: pinned, but the pin may become the distro's again. */
function fateRepinned(start: Start, ref: FateRef, repinner: Source & { repins: true }, stripped: boolean, criPinned: boolean): RefFate {
  const { who } = start;
  if (stripped || !criPinned) return { afterRestart: 'pinned', reason: `${repinner.how}.`, archive: repinner.path };
  if (repinner.trap) {
    return { afterRestart: 'pinned', reason: listTrapReason(ref.name, repinner.trap, who), remedy: listTrapRemedy(ref.name), archive: repinner.path, listTrap: repinner.trap };
  }
  return {
    afterRestart: 'pinned',
    reason: `Still pinned, but ${repinner.how}, so the pin becomes ${who}-managed again: remove ${repinner.path} from the images dir to keep it durable.`,
    archive: repinner.path,
  };
}

/** The start strips the pin and no file pins it again. */
function fateStripped(start: Start, lost: (Source & { repins: false }) | undefined): RefFate {
  const { who, unreadable } = start;
  if (lost) {
    return {
      afterRestart: 'unpinned',
      reason: `${who} strips this pin at start and ${lost.path} will not pin it again: ${lost.why}. Make the pin durable before restarting.`,
      archive: lost.path,
    };
  }
  if (unreadable.length) {
    return {
      afterRestart: 'unpinned',
      reason: `${who} strips this pin at start and no readable archive brings it back (${unreadable.join(', ')} could not be read). Make the pin durable before restarting.`,
      archive: null,
    };
  }
  return {
    afterRestart: 'unpinned',
    reason: `${who} strips this pin at start and no archive in the images dir brings it back: make the pin durable before restarting.`,
    archive: null,
  };
}

/** The fate of `ref`, from what each file of the images dir does with it at start. */
function fateOf(start: Start, ref: FateRef, sources: Source[]): RefFate {
  const { who } = start;
  // A file that brings the reference by its own name speaks before a list that brings a sibling.
  const repinner = sources.find((s): s is Source & { repins: true } => s.repins && !s.trap) ?? sources.find((s): s is Source & { repins: true } => s.repins);
  const lost = sources.find((s): s is Source & { repins: false } => !s.repins);
  const stripped = ref.labels[start.stripLabel] !== undefined;
  const criPinned = ref.labels[LABEL_CRI_PINNED] === PINNED;
  if (start.pinsAtAll === 'no') return fateBeforePins(start, criPinned, sources);
  if (repinner) return fateRepinned(start, ref, repinner, stripped, criPinned);
  if (stripped) return fateStripped(start, lost);
  if (criPinned) {
    return {
      afterRestart: 'pinned',
      reason: lost ? `Durable pin: ${who} does not touch it (${lost.path} will not pin it again: ${lost.why}).` : `Durable pin: ${who} never touches it.`,
      archive: lost?.path ?? null,
    };
  }
  return {
    afterRestart: 'unpinned',
    reason: `Not pinned: kubelet's image garbage collector may delete it when no container uses it.${lost ? ` ${lost.path} will not pin it: ${lost.why}.` : ''}`,
    archive: lost?.path ?? null,
  };
}

/**
 *   1. k3s strips its own pin label AND the CRI pin from every image carrying its label
 *      (releases that pin at all: k3s PR #8781);
 *   2. it re-imports every archive its start-up walk takes and re-reads every .txt list — unless
 *      .cache.json says the file is unchanged — and pins what they bring again; for a file the
 *      cache skips, releases with k3s PR #14266 re-pin the names its entry records.
 */
export function predictFates(refs: FateRef[], archives: FateArchive[], ctx: FateContext, prepull: FatePrepull[] = []): Map<string, RefFate> {
  const profile = distroProfile(ctx.distro);
  const who = profile.displayName;
  const start: Start = {
    who,
    release: `${who} ${ctx.distroVersion ?? 'unknown version'}`,
    stripLabel: profile.pinLabel,
    pinsAtAll: distroPinsImports(ctx.distroVersion),
    unreadable: [...archives.filter((a) => a.images === null).map((a) => a.path), ...prepull.filter((p) => 'error' in p.list).map((p) => p.path)],
  };
  const lists = prepull.map((p) => resolveList(p, refs)).filter((l): l is ResolvedList => l !== null);
  const out = new Map<string, RefFate>();
  for (const ref of refs) {
    const sources: Source[] = [
      ...archives.map((a) => outcome(start, ref, a.path, a, brings(ref, a.images ?? []), `${who} re-imports ${a.path} at start and pins it again`)),
      ...lists.map((l) => listOutcome(start, ref, l)),
    ].filter((x): x is Source => x !== null);
    out.set(ref.name, fateOf(start, ref, sources));
  }
  return out;
}
