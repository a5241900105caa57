// Which k3s / RKE2 releases re-pin images from archives that the import cache (.cache.json)
// skips at start (k3s PR #14266, June 2026). Kept as one small table so it is easy to correct
// when the first patch releases of the backports are confirmed.

/** Every release from this minor on carries the fix. */
export const CACHE_FIX_FROM_MINOR = 37;

/**
 * Backports: minor → first patch release with the fix, or null while that release is not
 * confirmed (then Holdfast cannot tell and assumes the pin is lost).
 * Minors not listed (≤ 1.32) never got the fix.
 */
export const CACHE_FIX_BACKPORTS: Readonly<Record<number, number | null>> = {
  33: null,
  34: null,
  35: null,
  36: null,
};

export type FixStatus = 'fixed' | 'not-fixed' | 'unknown';

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
}

/** "v1.31.6+k3s1" / "v1.33.2+rke2r1" → {1, 31, 6}; null when unparseable. */
export function parseK8sVersion(v: string | null | undefined): ParsedVersion | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v ?? '');
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : null;
}

export function cacheFixStatus(version: string | null | undefined): FixStatus {
  const v = parseK8sVersion(version);
  if (!v || v.major !== 1) return 'unknown';
  if (v.minor >= CACHE_FIX_FROM_MINOR) return 'fixed';
  if (!(v.minor in CACHE_FIX_BACKPORTS)) return 'not-fixed';
  const first = CACHE_FIX_BACKPORTS[v.minor];
  if (first === null || first === undefined) return 'unknown';
  return v.patch >= first ? 'fixed' : 'not-fixed';
}
