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
  /**
   * kubelet's max-age GC (`image-maximum-gc-age`, config `imageMaximumGCAge`; KEP-4210): every
   * unpinned image no container used for that long goes, with no disk pressure. null: off (not
   * set, 0, or a kubelet that does not run it). docs/k3s-facts.md, "kubelet's max-age GC".
   */
  maxAge?: MaxAgeGc | null;
  /** kubelet's credential verification of images already on the node (KEP-2535). */
  credentialVerification?: CredentialVerification;
}

export interface MaxAgeGc {
  seconds: number;
  /** As written ("168h"). */
  value: string;
  source: string;
}

/** KubeletConfiguration `imagePullCredentialsVerificationPolicy` (KEP-2535). */
export type VerificationPolicy = 'NeverVerify' | 'NeverVerifyPreloadedImages' | 'NeverVerifyAllowlistedImages' | 'AlwaysVerify';
export const VERIFICATION_POLICIES: readonly VerificationPolicy[] = ['NeverVerify', 'NeverVerifyPreloadedImages', 'NeverVerifyAllowlistedImages', 'AlwaysVerify'];

export interface CredentialVerification {
  /** null: kubelet does not verify at all (the KubeletEnsureSecretPulledImages gate is off). */
  policy: VerificationPolicy | null;
  /** `preloadedImagesVerificationAllowlist` (for NeverVerifyAllowlistedImages). */
  allowlist: string[];
  /** Where the policy came from ("kubelet's default for 1.35", a file). */
  source: string;
}

export const KUBELET_GC_DEFAULTS = { highPercent: 85, lowPercent: 80 } as const;
export const K3S_EVICTION_HARD_DEFAULTS = { imagefs: { percent: 5 }, nodefs: { percent: 5 } } as const;

/** One kubelet flag as the node sets it (config file entry or command line), in the order applied. */
export interface KubeletArg {
  /**
   * Without leading dashes, e.g. image-gc-high-threshold. A kubelet config file's field is given
   * as its flag (imageMaximumGCAge → image-maximum-gc-age, featureGates → feature-gates=A=true);
   * a field with no flag keeps its own name (imagePullCredentialsVerificationPolicy,
   * preloadedImagesVerificationAllowlist: a comma-separated list).
   */
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
export function resolveGcPolicy(args: KubeletArg[], notes: string[] = [], kube: { minor: number | null } = { minor: null }): GcPolicy {
  const last = (flag: string) => [...args].reverse().find((a) => a.flag === flag);
  const out: GcPolicy = {
    highPercent: KUBELET_GC_DEFAULTS.highPercent,
    lowPercent: KUBELET_GC_DEFAULTS.lowPercent,
    evictionHard: { ...K3S_EVICTION_HARD_DEFAULTS },
    sources: { high: "kubelet's default", low: "kubelet's default", evictionHard: "k3s's default" },
    notes: [...notes],
  };
  const gates = featureGates(args);
  out.maxAge = resolveMaxAge(last('image-maximum-gc-age'), gates, kube.minor, out.notes);
  out.credentialVerification = resolveVerification(args, gates, kube.minor, out.notes);
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
 * That moment's available bytes are rounded up: rounded down, a capacity the percentage does not
 * divide reads as one point more in kubelet's own usage (⌊14.99…⌋ free → 86 % at 85 %), and a
 * forecast deleting nothing would then say the disk ends higher than it starts.
 */
export function bytesToFreeAtHigh(fs: FsStats, policy: Pick<GcPolicy, 'highPercent' | 'lowPercent'>): { bytes: number; availableAtStart: number; now: boolean } | null {
  const usage = kubeletUsagePercent(fs);
  if (usage === null || !fs.totalBytes) return null;
  const cap = fs.totalBytes;
  const now = usage >= policy.highPercent;
  const availableAtStart = now ? Math.min(fs.freeBytes, cap) : Math.ceil((cap * (100 - policy.highPercent)) / 100);
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

// ---- kubelet's max-age GC and credential verification (docs/k3s-facts.md, "kubelet's max-age GC"
// and "kubelet's credential verification") ----

// Go also spells microseconds with U+00B5 and U+03BC (escaped: the CLI bundle is ASCII).
const GO_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, '\u00b5s': 1e-6, '\u03bcs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** Go's time.ParseDuration ("168h", "1h30m", "0"), in seconds; null when kubelet would refuse it. */
export function parseGoDuration(v: string): number | null {
  let s = v.trim();
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return null;
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;
  while (s) {
    const m = re.exec(s);
    if (!m) return null;
    total += Number(m[1]) * GO_UNITS[m[2]!]!;
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/** "7 days", "36 hours", "90 minutes": an age as people say it (whole units where they fit). */
export function formatAge(seconds: number): string {
  const n = (x: number, unit: string) => `${Math.round(x * 10) / 10} ${unit}${Math.round(x * 10) / 10 === 1 ? '' : 's'}`;
  if (seconds >= 86400 && seconds % 86400 === 0) return n(seconds / 86400, 'day');
  if (seconds >= 3600) return n(seconds / 3600, 'hour');
  if (seconds >= 60) return n(seconds / 60, 'minute');
  return n(seconds, 'second');
}

/**
 * When kubelet's max-age GC takes an unpinned image no container uses: kubelet keeps last-use
 * times in memory only and waits one full age after it starts before it deletes by age
 * (pkg/kubelet/images/image_gc_manager.go freeOldImages), so from outside the time is "within one
 * age after kubelet's last start" (later if a container used the image since). Pure.
 */
export function maxAgeWhen(m: Pick<MaxAgeGc, 'seconds'>): string {
  return `within ${formatAge(m.seconds)} after kubelet's last start`;
}

/** The Kubernetes minor version a k3s/RKE2 version is built on (v1.35.2+k3s1 → 35); null when unknown. */
export function kubernetesMinor(distroVersion: string | null | undefined): number | null {
  const m = /^v?1\.(\d+)\./.exec(distroVersion ?? '');
  return m ? Number(m[1]) : null;
}

/** Every feature-gates setting, in order (a later one wins per gate, as kubelet merges them). */
export function featureGates(args: readonly KubeletArg[]): Map<string, { on: boolean; source: string }> {
  const out = new Map<string, { on: boolean; source: string }>();
  for (const a of args) {
    if (a.flag !== 'feature-gates') continue;
    for (const part of a.value.split(',')) {
      const m = /^\s*([A-Za-z0-9]+)\s*=\s*(true|false)\s*$/i.exec(part);
      if (m) out.set(m[1]!, { on: m[2]!.toLowerCase() === 'true', source: a.source });
    }
  }
  return out;
}

/**
 * Whether a feature gate is on for this kubelet: as set, else its default for the Kubernetes
 * minor (`betaFrom`: the first minor it is on by default). Before `alphaFrom` the feature does not
 * exist. Unknown version: on (the setting is taken at its word).
 */
function gateOn(gates: ReadonlyMap<string, { on: boolean }>, gate: string, minor: number | null, alphaFrom: number, betaFrom: number): 'on' | 'off' | 'absent' {
  if (minor !== null && minor < alphaFrom) return 'absent';
  const set = gates.get(gate);
  if (set) return set.on ? 'on' : 'off';
  return minor === null || minor >= betaFrom ? 'on' : 'off';
}

/** KEP-4210: alpha 1.29 (gate ImageMaximumGCAge off), beta 1.30 (on), GA 1.35. */
export const MAX_AGE_GATE = { gate: 'ImageMaximumGCAge', alpha: 29, beta: 30, ga: 35 } as const;
/** KEP-2535: alpha 1.33 (gate KubeletEnsureSecretPulledImages off), beta 1.35 (on; policy NeverVerifyPreloadedImages). */
export const VERIFY_GATE = { gate: 'KubeletEnsureSecretPulledImages', alpha: 33, beta: 35 } as const;

function resolveMaxAge(a: KubeletArg | undefined, gates: ReadonlyMap<string, { on: boolean }>, minor: number | null, notes: string[]): MaxAgeGc | null {
  if (!a) return null;
  const seconds = parseGoDuration(a.value);
  if (seconds === null || seconds < 0) {
    notes.push(`image-maximum-gc-age=${a.value} in ${a.source} is not a duration kubelet reads (such as 168h); kubelet would not start with it.`);
    return null;
  }
  if (seconds === 0) return null;
  const gate = gateOn(gates, MAX_AGE_GATE.gate, minor, MAX_AGE_GATE.alpha, MAX_AGE_GATE.beta);
  if (gate === 'absent') {
    notes.push(`image-maximum-gc-age in ${a.source}: kubelet 1.${minor} has no max-age GC (it came in 1.29); kubelet would not start with that flag.`);
    return null;
  }
  if (gate === 'off') {
    notes.push(`image-maximum-gc-age in ${a.source} has no effect: the ImageMaximumGCAge feature gate is off on this kubelet (1.${minor}).`);
    return null;
  }
  return { seconds, value: a.value.trim(), source: a.source };
}

function resolveVerification(args: readonly KubeletArg[], gates: ReadonlyMap<string, { on: boolean }>, minor: number | null, notes: string[]): CredentialVerification {
  const last = (flag: string) => [...args].reverse().find((x) => x.flag === flag);
  const p = last('imagePullCredentialsVerificationPolicy');
  const list = last('preloadedImagesVerificationAllowlist');
  const allowlist = list ? list.value.split(',').map((x) => x.trim()).filter(Boolean) : [];
  const gate = gateOn(gates, VERIFY_GATE.gate, minor, VERIFY_GATE.alpha, VERIFY_GATE.beta);
  if (gate !== 'on') {
    if (p) notes.push(`imagePullCredentialsVerificationPolicy in ${p.source} has no effect: the KubeletEnsureSecretPulledImages feature gate is off on this kubelet${minor !== null ? ` (1.${minor})` : ''}.`);
    return { policy: null, allowlist, source: minor !== null && minor < VERIFY_GATE.alpha ? `not in kubelet 1.${minor}` : 'the KubeletEnsureSecretPulledImages gate is off' };
  }
  if (p) {
    const v = p.value.trim() as VerificationPolicy;
    if (VERIFICATION_POLICIES.includes(v)) return { policy: v, allowlist, source: p.source };
    notes.push(`imagePullCredentialsVerificationPolicy: ${p.value} in ${p.source} is not a policy kubelet knows; kubelet would not start with it.`);
  }
  return { policy: 'NeverVerifyPreloadedImages', allowlist, source: `kubelet's default${minor !== null ? ` in 1.${minor}` : ''}` };
}

/** Does an allow-list pattern (`registry/path`, or `registry/path/*`) cover a repository? */
export function allowlistCovers(pattern: string, repository: string): boolean {
  const p = pattern.trim();
  if (p.endsWith('/*')) return repository.startsWith(p.slice(0, -1));
  return repository === p;
}

/**
 * Whether kubelet makes a pod prove it may pull an image it did not pull itself (an imported one)
 * before using it — which means a pull, and offline a pod that does not start (KEP-2535,
 * pkg/kubelet/images/pullmanager: a preloaded image with no pull record must be pulled when the
 * policy requires verification). Pure.
 */
export function verifiesPreloaded(cv: CredentialVerification | undefined, repository: string | null): boolean {
  if (!cv?.policy) return false;
  if (cv.policy === 'AlwaysVerify') return true;
  if (cv.policy === 'NeverVerifyAllowlistedImages') return repository === null || !cv.allowlist.some((p) => allowlistCovers(p, repository));
  return false;
}
