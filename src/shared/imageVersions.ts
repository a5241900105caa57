// Which images are versions of one another, and which of them a site needs to roll back to.
// A repository's versions are its images (by image id) ordered newest first: by their tags when
// every tag there reads as a version (1.2.3, v0.9.3-build20241008), else by when they were built
// (the config's `created`), else by when they reached the node. Pure, so the GC forecast, the
// prune planner, the CLI and the app keep the same images for rollback.
import { compareText } from './compareText';
import { type ReferenceParts, splitReference } from './imageReference';

export interface Version {
  numbers: number[];
  /** What follows the numbers ('' for a plain release), compared naturally. */
  suffix: string;
}

const VERSION = /^v?(\d+(?:\.\d+){0,3})(?:[-+_.]?(.*))?$/i;

/** "v1.8.2" → [1,8,2]; "0.9.3-build20241008" → [0,9,3] + suffix; "latest" → null. */
export function parseVersion(tag: string): Version | null {
  const m = VERSION.exec(tag);
  if (!m) return null;
  return { numbers: m[1]!.split('.').map(Number), suffix: m[2] ?? '' };
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.numbers.length, b.numbers.length); i++) {
    const d = (a.numbers[i] ?? 0) - (b.numbers[i] ?? 0);
    if (d !== 0) return d;
  }
  if (a.suffix === b.suffix) return 0;
  // A plain release is newer than the same numbers with a suffix (1.0 > 1.0-rc1).
  if (a.suffix === '') return 1;
  if (b.suffix === '') return -1;
  return a.suffix.localeCompare(b.suffix, 'en', { numeric: true });
}

/** What the version rules read of one image (a StoreImage satisfies it). */
export interface VersionedImage {
  key: string;
  refs: string[];
  /** The image config's `created` (build time), when known. */
  configCreated: string | null;
  /** When the image's first record appeared on the node. */
  createdAt: string | null;
}

/** The image's highest version among its tags in `repository`, or null. */
function versionIn(img: VersionedImage, repository: string): Version | null {
  let best: Version | null = null;
  for (const r of img.refs) {
    const p = splitReference(r);
    if (!p || p.repository !== repository || p.tag === null) continue;
    const v = parseVersion(p.tag);
    if (v && (!best || compareVersions(v, best) > 0)) best = v;
  }
  return best;
}

const time = (s: string | null): number => (s ? Date.parse(s) || 0 : 0);

/** The repositories an image belongs to: those of its tags and digest references. */
export function repositoriesOf(img: Pick<VersionedImage, 'refs'>): string[] {
  return [...new Set(img.refs.map(splitReference).filter((p): p is ReferenceParts => p !== null).map((p) => p.repository))].sort();
}

/**
 * The images of one repository, newest first. Versions decide only when every image there has
 * one (a mixed order would not be an order); otherwise build time, then arrival on the node.
 */
export function versionsNewestFirst<T extends VersionedImage>(images: T[], repository: string): T[] {
  const members = images.filter((i) => repositoriesOf(i).includes(repository));
  const versions = new Map(members.map((i) => [i.key, versionIn(i, repository)]));
  const byVersion = members.every((i) => versions.get(i.key) !== null);
  return [...members].sort((a, b) => {
    if (byVersion) {
      const d = compareVersions(versions.get(b.key)!, versions.get(a.key)!);
      if (d !== 0) return d;
    }
    return time(b.configCreated) - time(a.configCreated) || time(b.createdAt) - time(a.createdAt) || compareText(a.key, b.key);
  });
}

export const DEFAULT_KEEP_VERSIONS = 2;

/** Why an image is kept for rollback. */
export interface RollbackKeep {
  repository: string;
  /** newest: one of the newest N versions; rollback: one of the N−1 versions just below an in-use one. */
  why: 'newest' | 'rollback';
  /** The in-use reference it is the rollback target of (why = rollback). */
  below?: string;
  text: string;
}

/**
 * The images to keep so every repository in use can roll back: in each repository that a
 * container uses, the newest `keep` versions, and the `keep − 1` versions just below each
 * version in use (so rolling back from what runs stays possible even when a newer, not yet
 * rolled out version is present). In-use images themselves are not listed (they are kept anyway).
 */
export function rollbackKeeps<T extends VersionedImage & { inUse: boolean }>(images: T[], keep: number = DEFAULT_KEEP_VERSIONS): Map<string, RollbackKeep> {
  const out = new Map<string, RollbackKeep>();
  const repos = new Set(images.filter((i) => i.inUse).flatMap((i) => repositoriesOf(i)));
  for (const repo of [...repos].sort()) {
    const order = versionsNewestFirst(images, repo);
    const set = (img: T, k: RollbackKeep) => {
      if (!img.inUse && !out.has(img.key)) out.set(img.key, k);
    };
    order.forEach((img, i) => {
      if (i < keep) set(img, { repository: repo, why: 'newest', text: `one of the ${keep} newest versions of ${repo}, which a container uses` });
    });
    order.forEach((img, i) => {
      if (!img.inUse) return;
      const ref = img.refs.find((r) => splitReference(r)?.repository === repo && splitReference(r)?.tag) ?? img.refs[0] ?? img.key;
      for (const older of order.slice(i + 1, i + keep)) {
        set(older, { repository: repo, why: 'rollback', below: ref, text: `the version to roll back to from ${ref}, which a container uses` });
      }
    });
  }
  return out;
}
