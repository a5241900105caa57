// Version rules from the facts sheet (shared/k3s-image-pinning.md) that depend on what a node
// runs: which containerd lines honour the CRI pin label and how, and which k3s/RKE2 releases
// pin imported images at all. Pure, so the CLI, the server, main and the renderer give the same
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

/**
 * Whether a k3s/RKE2 release pins the images it imports (k3s PR #8781: v1.29.1, v1.28.6,
 * v1.27.10, v1.26.13 and later). Older releases hold imported images with a lease, which
 * kubelet's image GC ignores: on those nodes nothing imported is pinned at all.
 */
export const DISTRO_PINS_FROM: Readonly<Record<number, number>> = { 26: 13, 27: 10, 28: 6, 29: 1 };

export type Support = 'yes' | 'no' | 'unknown';

export function distroPinsImports(distroVersion: string | null | undefined): Support {
  const v = parseSemVer(distroVersion);
  if (!v || v.major !== 1) return 'unknown';
  if (v.minor >= 30) return 'yes';
  const first = DISTRO_PINS_FROM[v.minor];
  if (first === undefined) return 'no'; // ≤ 1.25
  return v.patch >= first ? 'yes' : 'no';
}
