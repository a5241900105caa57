// A node's pin state as Prometheus series (`holdfast metrics`, `holdfast inspect --openmetrics`):
// the text exposition format node_exporter's textfile collector reads. Every value comes from a
// rule that has its home elsewhere — protection (what kubelet sees now and after the next k3s
// start), needs (needed images at risk), the lost-pin audit, the archive check, the signature
// record, the disk picture — this file only counts and prints. Pure: tested against exact text.
import type { FsUsage } from './diskPicture';
import type { FleetNodeResult } from './fleet';
import type { GcPolicy } from './gcPolicy';
import type { PinState } from './domain/pins';
import { atRiskOf } from './needs';
import { gcBound, imageProtection, losingImages, refsByImage } from './protection';
import { signatureCounts } from './signatures';
import { criPinning } from './versions';

/** One node's facts: the fleet inspection's result, and its disk picture when one was taken. */
export interface NodeMetricsInput {
  /** The `node` label (inspect --openmetrics); null: none (a node's own textfile, node_exporter labels it). */
  label: string | null;
  result: FleetNodeResult;
  /** The image file system and kubelet's GC policy (disk.picture); absent: those series are left out. */
  disk?: { imagefs: FsUsage | null; policy: GcPolicy } | null;
}

export type ImageState = 'durable' | 'k3s' | 'unpinned';
export const IMAGE_STATES: readonly ImageState[] = ['durable', 'k3s', 'unpinned'];

const PIN_RANK: Record<PinState, number> = { none: 0, distro: 1, durable: 2 };

/**
 * Images (by image id, as kubelet counts them) by the pin that protects them now: unpinned when
 * kubelet sees no pin (protection's `now`), else the strongest pin among the references that
 * protect (a reference containerd's own GC removes — gcBound — protects nothing).
 */
export function imageStates(result: Pick<FleetNodeResult, 'images' | 'versions'>): Record<ImageState, number> {
  const images = result.images ?? [];
  const counts: Record<ImageState, number> = { durable: 0, k3s: 0, unpinned: 0 };
  const protection = imageProtection(images, criPinning(result.versions?.containerdVersion));
  for (const [key, refs] of refsByImage(images)) {
    if (!protection.get(key)?.now) {
      counts.unpinned++;
      continue;
    }
    const best = refs.filter((r) => !gcBound(r.labels)).reduce<PinState>((b, r) => (PIN_RANK[r.pin] > PIN_RANK[b] ? r.pin : b), 'none');
    // The metric's label says k3s for a distro pin (RKE2's too): dashboards and alerts key on it.
    counts[best === 'durable' ? 'durable' : 'k3s']++;
  }
  return counts;
}

interface Sample {
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: 'gauge';
  samples: (n: NodeMetricsInput) => Sample[];
}

const one = (value: number, labels: Record<string, string> = {}): Sample[] => [{ labels, value }];

/** Series only a reachable node has (an unreachable one's values are unknown, not zero). */
const reached = (f: (n: NodeMetricsInput, r: FleetNodeResult) => Sample[]) => (n: NodeMetricsInput) => (n.result.reachable ? f(n, n.result) : []);

/** What the node's images, pins and archives are. */
const IMAGE_FAMILIES: readonly Family[] = [
  {
    name: 'holdfast_images',
    help: 'Images in containerd (by image id) by the pin kubelet sees now: durable, k3s (removed at the next k3s start unless re-imported) or unpinned.',
    type: 'gauge',
    samples: reached((_n, r) => {
      const s = imageStates(r);
      return IMAGE_STATES.map((state) => ({ labels: { state }, value: s[state] }));
    }),
  },
  {
    name: 'holdfast_images_losing_pin_at_next_start',
    help: 'Images kubelet sees pinned now that lose the pin at the next k3s start.',
    type: 'gauge',
    samples: reached((_n, r) => one(losingImages(r.images ?? [], criPinning(r.versions?.containerdVersion)).length)),
  },
  {
    name: 'holdfast_images_at_risk',
    help: 'Needed images that are missing, unprotected now or unprotected after the next k3s start (needs read from the cluster, else images from air-gap archives).',
    type: 'gauge',
    samples: reached((_n, r) => (r.needs ? one(atRiskOf(r.images, r.needs).length) : [])),
  },
  {
    name: 'holdfast_pins_lost',
    help: 'Durable pins Holdfast made (its audit log) that are gone from containerd.',
    type: 'gauge',
    samples: reached((_n, r) => one(r.lostPins?.length ?? 0)),
  },
  {
    name: 'holdfast_archives',
    help: 'Air-gap archives and pre-pull lists in the images dir, by whether removing them is safe.',
    type: 'gauge',
    samples: reached((_n, r) => {
      const files = (r.archives ?? []).filter((a) => a.kind !== 'ignored');
      const safe = files.filter((a) => a.safeToRemove).length;
      return [
        { labels: { safe_to_remove: 'true' }, value: safe },
        { labels: { safe_to_remove: 'false' }, value: files.length - safe },
      ];
    }),
  },
];

/**
 * What Holdfast verified of the images' signatures at import (shared/signatures signatureCounts).
 * By reference, as the record is kept; CRI's own sha256:<id> records are not counted.
 */
const SIGNATURE_FAMILIES: readonly Family[] = [
  {
    name: 'holdfast_images_verified',
    help: 'Image references whose signature Holdfast verified at import (CRI\'s own sha256:<id> records not counted).',
    type: 'gauge',
    samples: reached((_n, r) => one(signatureCounts(r.images ?? []).verified)),
  },
  {
    name: 'holdfast_images_unverified',
    help: 'Image references without a signature Holdfast verified: never verified, or imported not verified (CRI\'s own sha256:<id> records not counted).',
    type: 'gauge',
    samples: reached((_n, r) => one(signatureCounts(r.images ?? []).unverified)),
  },
  {
    name: 'holdfast_needed_images_unverified',
    help: 'Image references the site needs without a signature Holdfast verified (needs read from the cluster, else images from air-gap archives).',
    type: 'gauge',
    samples: reached((_n, r) => (r.needs ? one(signatureCounts(r.images ?? []).neededUnverified) : [])),
  },
];

/** The image file system and kubelet's image GC settings (from the node's disk picture). */
const DISK_FAMILIES: readonly Family[] = [
  {
    name: 'holdfast_imagefs_used_bytes',
    help: "Used bytes of the file system kubelet's image GC watches (capacity minus what non-root users may use).",
    type: 'gauge',
    samples: reached((n) => {
      const fs = n.disk?.imagefs;
      return fs && fs.totalBytes !== null ? one(fs.totalBytes - Math.min(fs.freeBytes, fs.totalBytes)) : [];
    }),
  },
  {
    name: 'holdfast_imagefs_capacity_bytes',
    help: "Capacity in bytes of the file system kubelet's image GC watches.",
    type: 'gauge',
    samples: reached((n) => (n.disk?.imagefs && n.disk.imagefs.totalBytes !== null ? one(n.disk.imagefs.totalBytes) : [])),
  },
  {
    name: 'holdfast_gc_high_threshold_ratio',
    help: "kubelet's imageGCHighThresholdPercent as a ratio: image GC starts above this use of the image file system.",
    type: 'gauge',
    samples: reached((n) => (n.disk ? one(n.disk.policy.highPercent / 100) : [])),
  },
  {
    name: 'holdfast_gc_max_age_seconds',
    help: "kubelet's imageMaximumGCAge in seconds, only where it is on: kubelet deletes every unpinned image unused that long, whatever the disk usage.",
    type: 'gauge',
    samples: reached((n) => (n.disk?.policy.maxAge ? one(n.disk.policy.maxAge.seconds) : [])),
  },
];

/** Whether and when Holdfast read the node. */
const checkFamilies = (checkedAt: number): Family[] => [
  {
    name: 'holdfast_check_success',
    help: 'Whether Holdfast could read the node (1) or not (0, with the kind of error).',
    type: 'gauge',
    samples: (n) => (n.result.reachable ? one(1) : one(0, { kind: (n.result.error?.code ?? 'INTERNAL').toLowerCase() })),
  },
  {
    name: 'holdfast_check_timestamp_seconds',
    help: 'When Holdfast last checked the node, in seconds since the epoch.',
    type: 'gauge',
    samples: () => one(checkedAt),
  },
];

/** The series, in the order they are written. */
const FAMILIES = (checkedAt: number): Family[] => [...IMAGE_FAMILIES, ...SIGNATURE_FAMILIES, ...DISK_FAMILIES, ...checkFamilies(checkedAt)];

/** A label value as the exposition format wants it: backslash, double quote and line feed escaped. */
export const escapeLabelValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function sampleLine(name: string, labels: Record<string, string>, value: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  return `${name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${Number.isFinite(value) ? String(value) : 'NaN'}`;
}

/**
 * The Prometheus text exposition (version 0.0.4) of the nodes' facts: each family's HELP and
 * TYPE once, then its samples for every node (the `node` label first when the node has one).
 * `checkedAt`: seconds since the epoch.
 */
export function renderMetrics(nodes: readonly NodeMetricsInput[], checkedAt: number): string {
  const lines: string[] = [];
  for (const f of FAMILIES(checkedAt)) {
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const n of nodes) {
      for (const s of f.samples(n)) lines.push(sampleLine(f.name, n.label === null ? s.labels : { node: n.label, ...s.labels }, s.value));
    }
  }
  return lines.join('\n') + '\n';
}

// ---- holdfast guard (#50): what the last run kept, fixed and could not fix ----

/** One guard run, as its textfile says it. */
export interface GuardMetricsInput {
  /** The pin set's metadata.name. */
  pinSet: string;
  /** The run read the node and applied its plan; false: only the time and the total are written. */
  ok: boolean;
  /** References the run made durable: newly, or again after their durable pin was lost. */
  pinned: number;
  restored: number;
  /** Every reference guard made durable since the textfile was first written (a counter). */
  fixedTotal: number;
  /** References the set selects that were durable when the run ended. */
  durable: number;
  /** References the set names that the node lacks (never faked: import them). */
  missing: readonly string[];
  /** References the set made durable although their image fails its signature requirement (guard always says; absent: no series). */
  unverified?: readonly string[];
}

/** At most this many missing references get a series of their own (the count has them all). */
export const GUARD_MISSING_SERIES = 50;

type GuardFamily = { name: string; help: string; type: 'gauge' | 'counter'; samples: (g: GuardMetricsInput, at: number) => Sample[]; always?: true; unverified?: true };

const GUARD_FAMILIES: readonly GuardFamily[] = [
  { name: 'holdfast_guard_last_run_timestamp_seconds', help: 'When the Holdfast guard last ran, in seconds since the epoch.', type: 'gauge', samples: (_, at) => one(at), always: true },
  { name: 'holdfast_guard_last_run_success', help: 'Whether the last guard run read the node and applied its pin set (1) or failed (0).', type: 'gauge', samples: (g) => one(g.ok ? 1 : 0), always: true },
  { name: 'holdfast_guard_info', help: 'The pin set this node keeps (its metadata.name).', type: 'gauge', samples: (g) => [{ labels: { pin_set: g.pinSet }, value: 1 }], always: true },
  { name: 'holdfast_guard_fixed_total', help: 'References the Holdfast guard made durable since this file was first written.', type: 'counter', samples: (g) => one(g.fixedTotal), always: true },
  {
    name: 'holdfast_guard_fixed',
    help: 'References the last run made durable: pinned (not durable before) or restored (Holdfast\'s durable pin was lost behind its back).',
    type: 'gauge',
    samples: (g) => [
      { labels: { kind: 'pinned' }, value: g.pinned },
      { labels: { kind: 'restored' }, value: g.restored },
    ],
  },
  { name: 'holdfast_guard_durable_references', help: 'References the pin set selects that are durably pinned.', type: 'gauge', samples: (g) => one(g.durable) },
  { name: 'holdfast_guard_missing_images', help: 'References the pin set names that are not on this node: guard cannot pin them; import them.', type: 'gauge', samples: (g) => one(g.missing.length) },
  {
    name: 'holdfast_guard_missing_image',
    help: `One series per reference the pin set names that is not on this node (the first ${GUARD_MISSING_SERIES}, sorted).`,
    type: 'gauge',
    samples: (g) => [...g.missing].sort().slice(0, GUARD_MISSING_SERIES).map((ref) => ({ labels: { ref }, value: 1 })),
  },
  { name: 'holdfast_guard_unverified', help: 'References the pin set requires signed whose image carries no verified signature (by a named signer): pinned anyway, since the site needs them.', type: 'gauge', samples: (g) => one(g.unverified?.length ?? 0), unverified: true },
  {
    name: 'holdfast_guard_unverified_image',
    help: `One series per reference the pin set requires signed that is not verified (the first ${GUARD_MISSING_SERIES}, sorted).`,
    type: 'gauge',
    samples: (g) => [...(g.unverified ?? [])].sort().slice(0, GUARD_MISSING_SERIES).map((ref) => ({ labels: { ref }, value: 1 })),
    unverified: true,
  },
];

/** The textfile of one guard run (`at`: seconds since the epoch). A failed run keeps only what it knows. */
export function renderGuardMetrics(g: GuardMetricsInput, at: number): string {
  const lines: string[] = [];
  for (const f of GUARD_FAMILIES) {
    if ((!g.ok && !f.always) || (f.unverified && !g.unverified)) continue;
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples(g, at)) lines.push(sampleLine(f.name, s.labels, s.value));
  }
  return lines.join('\n') + '\n';
}

/** holdfast_guard_fixed_total in a textfile guard wrote before (0 when there is none). */
export function guardFixedTotal(previous: string | null): number {
  const m = previous === null ? null : /^holdfast_guard_fixed_total (\d+)$/m.exec(previous);
  return m ? Number(m[1]) : 0;
}
