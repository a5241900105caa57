// kubelet's image garbage collection and disk eviction thresholds, as a node's own settings make
// them. kubelet (pkg/kubelet/images/image_gc_manager.go) computes the image file system's usage
// as `100 − ⌊available × 100 / capacity⌋` percent; at or above `image-gc-high-threshold` it
// deletes unused, unpinned images, least recently used first, until what it counted as freed
// reaches `capacity × (100 − low) / 100 − available`. k3s sets no GC thresholds (kubelet's
// defaults apply: 85 / 80) but does set `eviction-hard: imagefs.available<5%,nodefs.available<5%`
// (k3s pkg/daemons/agent defaultKubeletConfig); at that point kubelet evicts pods and deletes
// every unused image. RKE2 runs the same agent code. Pure: one place for these numbers.

export type Threshold = { percent: number } | { bytes: number };

export interface GcPolicy {
  highPercent: number;
  lowPercent: number;
  /** kubelet's hard eviction thresholds on the image and node file systems; null = none set. */
  evictionHard: { imagefs: Threshold | null; nodefs: Threshold | null };
  /** Where each value came from, in words ("kubelet's default", "/etc/rancher/k3s/config.yaml", …). */
  sources: { high: string; low: string; evictionHard: string };
  /** What makes the values less than certain (unreadable files, values kubelet would refuse). */
  notes: string[];
}

export const KUBELET_GC_DEFAULTS = { highPercent: 85, lowPercent: 80 } as const;
export const K3S_EVICTION_HARD_DEFAULTS = { imagefs: { percent: 5 }, nodefs: { percent: 5 } } as const;

/** One kubelet flag as the node sets it (config file entry or command line), in the order applied. */
export interface KubeletArg {
  /** Without leading dashes, e.g. image-gc-high-threshold. */
  flag: string;
  value: string;
  /** Where it was set, in words. */
  source: string;
}

const QUANTITY = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E)?$/;
const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** "5%" or a quantity such as "2Gi"; null when kubelet would not read it either. */
export function parseThreshold(v: string): Threshold | null {
  const s = v.trim();
  if (s.endsWith('%')) {
    const n = Number(s.slice(0, -1));
    return Number.isFinite(n) && n >= 0 && n <= 100 ? { percent: n } : null;
  }
  const m = QUANTITY.exec(s);
  return m ? { bytes: Math.round(Number(m[1]) * UNITS[m[2] ?? '']!) } : null;
}

/** `imagefs.available<5%,nodefs.available<5%` → signal → threshold (other signals ignored). */
export function parseEvictionHard(v: string): { imagefs: Threshold | null; nodefs: Threshold | null; bad: string[] } {
  const out: { imagefs: Threshold | null; nodefs: Threshold | null; bad: string[] } = { imagefs: null, nodefs: null, bad: [] };
  for (const part of v.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([a-zA-Z.]+)\s*<\s*(.+)$/.exec(part);
    if (!m) {
      out.bad.push(part);
      continue;
    }
    const t = parseThreshold(m[2]!);
    if (m[1] === 'imagefs.available' || m[1] === 'nodefs.available') {
      if (!t) out.bad.push(part);
      else out[m[1] === 'imagefs.available' ? 'imagefs' : 'nodefs'] = t;
    }
  }
  return out;
}

export function formatThreshold(t: Threshold | null): string {
  if (!t) return 'none';
  return 'percent' in t ? `${t.percent} %` : `${t.bytes} bytes`;
}

/**
 * The policy a node's kubelet runs with: kubelet's and k3s's defaults, overridden by each flag's
 * last setting (kubelet takes the last occurrence of a flag). An `eviction-hard` flag replaces
 * the whole map: a signal it does not name has no hard threshold.
 */
export function resolveGcPolicy(args: KubeletArg[], notes: string[] = []): GcPolicy {
  const last = (flag: string) => [...args].reverse().find((a) => a.flag === flag);
  const out: GcPolicy = {
    highPercent: KUBELET_GC_DEFAULTS.highPercent,
    lowPercent: KUBELET_GC_DEFAULTS.lowPercent,
    evictionHard: { ...K3S_EVICTION_HARD_DEFAULTS },
    sources: { high: "kubelet's default", low: "kubelet's default", evictionHard: "k3s's default" },
    notes: [...notes],
  };
  const percent = (flag: string, key: 'highPercent' | 'lowPercent', src: 'high' | 'low') => {
    const a = last(flag);
    if (!a) return;
    const n = Number(a.value.trim());
    if (!Number.isInteger(n) || n < 0 || n > 100) {
      out.notes.push(`${flag}=${a.value} in ${a.source} is not a whole percentage; kubelet would not start with it. Holdfast assumes ${out[key]} %.`);
      return;
    }
    out[key] = n;
    out.sources[src] = a.source;
  };
  percent('image-gc-high-threshold', 'highPercent', 'high');
  percent('image-gc-low-threshold', 'lowPercent', 'low');
  if (out.lowPercent > out.highPercent) {
    out.notes.push(`image-gc-low-threshold (${out.lowPercent}) is above image-gc-high-threshold (${out.highPercent}): kubelet refuses to start with that.`);
  }
  const ev = last('eviction-hard');
  if (ev) {
    const p = parseEvictionHard(ev.value);
    out.evictionHard = { imagefs: p.imagefs, nodefs: p.nodefs };
    out.sources.evictionHard = ev.source;
    if (p.bad.length) out.notes.push(`eviction-hard in ${ev.source} has entries Holdfast cannot read: ${p.bad.join(', ')}.`);
    if (!p.imagefs && !p.nodefs) out.notes.push(`eviction-hard in ${ev.source} sets no imagefs.available or nodefs.available threshold, so none applies.`);
  }
  return out;
}

/** A file system as statvfs (or df) measured it. */
export interface FsStats {
  totalBytes: number | null;
  /** Available to non-root users (f_bavail), which is what kubelet counts as available. */
  freeBytes: number;
}

/** kubelet's usage of a file system: `100 − ⌊available × 100 / capacity⌋`; null without a capacity. */
export function kubeletUsagePercent(fs: FsStats): number | null {
  if (!fs.totalBytes || fs.totalBytes <= 0) return null;
  const available = Math.min(fs.freeBytes, fs.totalBytes);
  return 100 - Math.floor((available * 100) / fs.totalBytes);
}

/** Usage as a fraction with decimals, for charts ((capacity − available) / capacity × 100). */
export function usedPercentExact(fs: FsStats): number | null {
  if (!fs.totalBytes || fs.totalBytes <= 0) return null;
  return ((fs.totalBytes - Math.min(fs.freeBytes, fs.totalBytes)) * 100) / fs.totalBytes;
}

/** The used % at which a hard eviction threshold on available space is crossed. */
export function evictionAtPercent(t: Threshold | null, totalBytes: number | null): number | null {
  if (!t) return null;
  if ('percent' in t) return 100 - t.percent;
  if (!totalBytes) return null;
  return Math.max(0, 100 - (t.bytes * 100) / totalBytes);
}

/**
 * What kubelet sets out to free when its GC runs on this file system: if usage is already at or
 * above the high threshold, from the available space now; otherwise from the moment usage
 * reaches the high threshold. `capacity × (100 − low) / 100 − available`, as kubelet computes it.
 */
export function bytesToFreeAtHigh(fs: FsStats, policy: Pick<GcPolicy, 'highPercent' | 'lowPercent'>): { bytes: number; availableAtStart: number; now: boolean } | null {
  const usage = kubeletUsagePercent(fs);
  if (usage === null || !fs.totalBytes) return null;
  const cap = fs.totalBytes;
  const now = usage >= policy.highPercent;
  const availableAtStart = now ? Math.min(fs.freeBytes, cap) : Math.floor((cap * (100 - policy.highPercent)) / 100);
  return { bytes: Math.max(0, Math.floor((cap * (100 - policy.lowPercent)) / 100) - availableAtStart), availableAtStart, now };
}

/** The margin (percentage points below the high threshold) at which the fleet flags a node. */
export const NEAR_GC_POINTS = 5;

/** Is the node's image file system within `points` of kubelet's high threshold (or above it)? */
export function nearGcThreshold(fs: FsStats | null, policy: Pick<GcPolicy, 'highPercent'>, points = NEAR_GC_POINTS): boolean {
  if (!fs) return false;
  const used = usedPercentExact(fs);
  return used !== null && used >= policy.highPercent - points;
}
