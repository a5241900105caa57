// Version rules from docs/k3s-facts.md (each release boundary cited there) that depend on what a
// node runs: which containerd lines honour the CRI pin label and how, and what each k3s/RKE2 release
// does to images at start (pins at all, start-up walk, import cache and its fixes, watcher). Pure, so the CLI, the server, main and the renderer give the same
// answer; keep every version boundary here, in one place that is easy to correct.

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
}

/**
 * Leading x.y.z of a version string as containerd, k3s and Debian print them:
 * "1.7.24~ds1", "2.1.9+unknown", "v2.0.5-k3s1.32", "v1.31.6+k3s1" → {…}; null when unparseable.
 */
export function parseSemVer(v: string | null | undefined): SemVer | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec((v ?? '').trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : null;
}

export function compareSemVer(a: SemVer, b: SemVer): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

const atLeast = (v: SemVer, major: number, minor: number, patch: number): boolean =>
  compareSemVer(v, { major, minor, patch }) >= 0;

/**
 * How containerd's CRI plugin (what kubelet asks) honours `io.cri-containerd.pinned`:
 * - none:         before 1.7.3 (1.6.x): no CRI pinning at all; kubelet's GC may delete anything.
 * - first-loaded: 1.7.3–1.7.9: an image (all references with one image id) is pinned as the
 *                 reference CRI loaded first says, so every reference must carry the label.
 * - any:          1.7.10 and later, 2.x: pinned when ANY reference of the image carries it.
 * - unknown:      the version string could not be read.
 */
export type CriPinning = 'none' | 'first-loaded' | 'any' | 'unknown';

export function criPinning(containerdVersion: string | null | undefined): CriPinning {
  const v = parseSemVer(containerdVersion);
  if (!v) return 'unknown';
  if (!atLeast(v, 1, 7, 3)) return 'none';
  if (!atLeast(v, 1, 7, 10)) return 'first-loaded';
  return 'any';
}

// ---------------------------------------------------------------------------------------------
// k3s / RKE2 releases. Every rule that changed in one release per minor line lives in this ONE
// table (RKE2 carries the same agent code on the same Kubernetes version lines). To correct a
// boundary — e.g. when a first patch release is confirmed by a tag — edit only the table below.

/**
 * When one change arrived: in every release from `fromMinor` on, and in the first patch release
 * `backports[minor]` of each older line it was backported to. `null`: backported, but which
 * release first carries it is not confirmed (Holdfast then cannot tell). An older minor that is
 * not listed never got it.
 */
export interface ReleaseBoundary {
  fromMinor: number;
  backports: Readonly<Record<number, number | null>>;
  /**
   * Per line, the first patch release that MAY carry a backport not yet confirmed by a tag:
   * releases from it up to `backports[minor]` (exclusive) read 'unknown', older ones 'no'.
   */
  unconfirmedFrom?: Readonly<Record<number, number>>;
}

export const K3S_RELEASES = {
  /**
   * (a) k3s PR #8781: imported images are pinned (and k3s's pins cleared at every start).
   * Older releases hold imports with a lease, which kubelet's image GC ignores.
   */
  pinsImports: { fromMinor: 30, backports: { 26: 13, 27: 10, 28: 6, 29: 1 } },
  /**
   * (c) k3s PR #12237: the start-up walk rewrite that brought `.cache.json` (docs: "starting
   * with 1.33.1, 1.32.5, 1.31.9 and 1.30.13"). From it on k3s recurses into subfolders and
   * matches extensions case-sensitively; before it, k3s read only the top level of the images
   * dir, matched extensions case-insensitively and had no import cache at all.
   */
  importCache: { fromMinor: 34, backports: { 30: 13, 31: 9, 32: 5, 33: 1 } },
  /**
   * (b) k3s PR #14266 (June 2026; backports tracked in #14270–#14273, validated 2026-07-22):
   * cache entries record `images`, and archives skipped by the cache have those names re-pinned
   * once at start. First releases inferred from the July 2026 batch, not confirmed by tags
   * (the facts sheet: treat v1.36.3, v1.35.7, v1.34.10, v1.33.14 as fixed and the releases just
   * below as unknown); v1.36.2 still has the bug; 1.30–1.32 never got it. With it, start-up also
   * re-imports an entry without `images` or with a later mtime (k3s PR #14288; shared/importCache).
   */
  cacheRepin: { fromMinor: 37, backports: { 33: 14, 34: 10, 35: 7, 36: 3 }, unconfirmedFrom: { 33: 13, 34: 9, 35: 6 } },
  /**
   * (d) k3s #14284 (fix PR #14288, July 2026; backports #14317–#14320): a file whose size is
   * unchanged but whose mtime is newer is re-imported. Validated on the same release-branch
   * commits as the cache fix (1.34, 1.35, 1.36), hence the same inferred first releases; 1.33 on
   * another commit (unconfirmed); no backport below 1.33.
   */
  sameSizeReimport: { fromMinor: 37, backports: { 33: 14, 34: 10, 35: 7, 36: 3 }, unconfirmedFrom: { 33: 13, 34: 9, 35: 6 } },
  /** The running agent's file watcher (imports new files ~2 s after they appear). */
  importWatcher: { fromMinor: 33, backports: { 29: 13, 30: 9, 31: 5, 32: 1 } },
  /**
   * (e) k3s PR #13221 (v1.35.0; backports to the v1.32.11 / v1.33.7 line; 1.34 tracked in
   * #13230, first release unconfirmed): after labelling what it imported, k3s also creates a
   * `<repository>@sha256:<target digest>` reference per name (and extra-registry references),
   * which its embedded registry mirror needs.
   */
  digestRefs: { fromMinor: 35, backports: { 32: 11, 33: 7, 34: null } },
  /**
   * (f) k3s #14484 (v1.37.0): no extra-registry retag for a registry the image is already hosted
   * by. Older releases added such a duplicate tag again at every start. Not backported.
   */
  noRetagForHostingRegistry: { fromMinor: 37, backports: {} },
  /**
   * (g) k3s #14732 (v1.37.2 and the backports of the same batch): a `.txt` list that cannot be
   * read as lines (a binary file: bufio's "token too long") is reported as an error instead of
   * being skipped without a word. The other lines' first releases are not confirmed.
   */
  unreadableListIsError: { fromMinor: 38, backports: { 37: 2, 36: null, 35: null, 34: null } },
} as const satisfies Record<string, ReleaseBoundary>;

/**
 * The containerd each k3s (and RKE2) release bundles, where the facts sheet records it: one row
 * per release or run of patch releases, newest first (`patches`: inclusive range). Source: the
 * "Embedded Component Versions" table of each k3s release's notes (docs/k3s-facts.md, "Which
 * containerd k3s ships"). Releases not listed are unknown here: the rules read the node's own
 * containerd version, this table only says what to expect before connecting.
 */
export const K3S_BUNDLED_CONTAINERD: readonly { minor: number; patches: readonly [number, number]; containerd: string }[] = [
  { minor: 37, patches: [2, 2], containerd: '2.3.7' },
  { minor: 37, patches: [0, 1], containerd: '2.3.4' },
  { minor: 36, patches: [2, 2], containerd: '2.3.2' },
  { minor: 36, patches: [0, 1], containerd: '2.2.3' },
  { minor: 35, patches: [6, 6], containerd: '2.2.5' },
  { minor: 34, patches: [9, 9], containerd: '2.2.5' },
  { minor: 33, patches: [13, 13], containerd: '2.2.5' },
];

/** The containerd a k3s/RKE2 release bundles ("2.3.7"), or null when the table does not say. */
export function bundledContainerd(distroVersion: string | null | undefined): string | null {
  const v = parseSemVer(distroVersion);
  if (!v || v.major !== 1) return null;
  return K3S_BUNDLED_CONTAINERD.find((r) => r.minor === v.minor && v.patch >= r.patches[0] && v.patch <= r.patches[1])?.containerd ?? null;
}

/**
 * Does this containerd label the references its transfer-service import makes for an index name
 * with containerd.io/gc.bref.image / containerd.io/gc.expire (containerd #12667, 2.3.0), which its
 * own GC honours whatever the CRI pin says (shared/protection gcBound)? k3s v1.36.2 on bundles it.
 */
export function containerdWritesGcBackrefs(containerdVersion: string | null | undefined): Support {
  const v = parseSemVer(containerdVersion);
  if (!v) return 'unknown';
  return atLeast(v, 2, 3, 0) ? 'yes' : 'no';
}

export type Support = 'yes' | 'no' | 'unknown';

/** Does the k3s/RKE2 release `distroVersion` carry the change? 'unknown' when unreadable or unconfirmed. */
export function releaseHas(boundary: ReleaseBoundary, distroVersion: string | null | undefined): Support {
  const v = parseSemVer(distroVersion);
  if (!v || v.major !== 1) return 'unknown';
  if (v.minor >= boundary.fromMinor) return 'yes';
  if (!(v.minor in boundary.backports)) return 'no';
  const first = boundary.backports[v.minor];
  if (first === null || first === undefined) return 'unknown';
  if (v.patch >= first) return 'yes';
  const maybe = boundary.unconfirmedFrom?.[v.minor];
  return maybe !== undefined && v.patch >= maybe ? 'unknown' : 'no';
}

/** "v1.36.3, v1.35.7, v1.34.10": the first releases of a boundary, newest line first (for sentences). */
export function firstReleases(boundary: ReleaseBoundary): string {
  const known = Object.entries(boundary.backports)
    .filter((e): e is [string, number] => e[1] !== null)
    .map(([minor, patch]) => ({ minor: Number(minor), patch }))
    .sort((a, b) => b.minor - a.minor)
    .map((r) => `v1.${r.minor}.${r.patch}`);
  return [`v1.${boundary.fromMinor}.0`, ...known].join(', ');
}

/**
 * Whether a k3s/RKE2 release pins the images it imports (k3s PR #8781: v1.29.1, v1.28.6,
 * v1.27.10, v1.26.13 and later). Older releases hold imported images with a lease, which
 * kubelet's image GC ignores: on those nodes nothing imported is pinned at all.
 */
export const DISTRO_PINS_FROM: Readonly<Record<number, number>> = K3S_RELEASES.pinsImports.backports;

export function distroPinsImports(distroVersion: string | null | undefined): Support {
  return releaseHas(K3S_RELEASES.pinsImports, distroVersion);
}

/** Does the release honour `.cache.json` at start (k3s PR #12237)? Older ones ignore the file. */
export function importCacheHonoured(distroVersion: string | null | undefined): Support {
  return releaseHas(K3S_RELEASES.importCache, distroVersion);
}

/** Does the release re-pin the `images` recorded for archives the cache skips (k3s PR #14266)? */
export function cacheRepinFix(distroVersion: string | null | undefined): Support {
  return releaseHas(K3S_RELEASES.cacheRepin, distroVersion);
}

/**
 * (c) How k3s walks the images dir at start:
 * - recursive-case-sensitive:   subfolders too, `.tar.gz` but not `APP.TAR.GZ` (k3s PR #12237 on);
 * - top-level-case-insensitive: the top level only, `APP.TAR.GZ` imported too (older releases).
 */
export type StartupWalk = 'recursive-case-sensitive' | 'top-level-case-insensitive';

/** The node's start-up walk; 'unknown' when its release cannot be read. */
export function startupWalk(distroVersion: string | null | undefined): StartupWalk | 'unknown' {
  const s = releaseHas(K3S_RELEASES.importCache, distroVersion);
  return s === 'yes' ? 'recursive-case-sensitive' : s === 'no' ? 'top-level-case-insensitive' : 'unknown';
}

/** A file as k3s compares it: size in bytes, mtime in seconds since the epoch. */
export interface FileStamp {
  size: number;
  /** Seconds since the epoch; Holdfast sees whole seconds (SFTP), a fraction is ignored. */
  mtime: number;
}

/**
 * (d) Does k3s take `current` for a changed file, compared with the `recorded` size and mtime
 * of that same path? One rule for both places k3s compares: the running watcher, and (from k3s
 * PR #12237 on, whose start-up walk is the watcher's own code) start-up against `.cache.json`.
 * - Before k3s #14284: only if the size changed AND the mtime is newer (watcher.go:
 *   `size != last.Size && ModTime().After(last.ModTime)`). k3s compares its full-precision
 *   mtime with the recorded one, which `.cache.json` stores in whole seconds (metav1.Time);
 *   Holdfast sees whole seconds too, so a new size within the recorded second may or may not
 *   count as newer: 'unknown'.
 * - With the fix: if the size changed OR the mtime is newer. Assumed at the record's whole-second
 *   precision (the fix's diff was not available): counting the sub-second rest as newer would
 *   re-import every unchanged archive at every start.
 * Callers treat 'unknown' as "k3s skips it" — the reading that can only over-predict lost pins.
 */
export function k3sTakesChange(recorded: FileStamp, current: FileStamp, distroVersion: string | null | undefined): Support {
  const rec = Math.floor(recorded.mtime);
  const cur = Math.floor(current.mtime);
  const sizeChanged = recorded.size !== current.size;
  const before: Support = !sizeChanged ? 'no' : cur > rec ? 'yes' : cur < rec ? 'no' : 'unknown';
  const after: Support = sizeChanged || cur > rec ? 'yes' : 'no';
  const fixed = releaseHas(K3S_RELEASES.sameSizeReimport, distroVersion);
  if (fixed === 'yes') return after;
  if (fixed === 'no') return before;
  return before === after ? before : 'unknown';
}

/**
 * (d) Does the running k3s import a file that appears or changes in the images dir? A name that
 * held no file before (`recorded` null — e.g. renamed into place from an ignored `.part` name)
 * is new and is imported; a changed file follows k3sTakesChange. Releases without the watcher
 * import nothing until the next start. For upload/import code: treat 'unknown' as 'no'.
 */
export function watcherImports(recorded: FileStamp | null, current: FileStamp, distroVersion: string | null | undefined): Support {
  const watcher = releaseHas(K3S_RELEASES.importWatcher, distroVersion);
  if (watcher === 'no') return 'no';
  const takes: Support = recorded === null ? 'yes' : k3sTakesChange(recorded, current, distroVersion);
  if (watcher === 'yes') return takes;
  return takes === 'no' ? 'no' : 'unknown';
}

/**
 * (e) Does the release add a `<repository>@sha256:<digest>` reference for each name it imports,
 * after labelling the names (k3s PR #13221)? An import is finished only once those exist too.
 */
export function addsDigestRefs(distroVersion: string | null | undefined): Support {
  return releaseHas(K3S_RELEASES.digestRefs, distroVersion);
}
