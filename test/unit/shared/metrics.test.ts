// `holdfast metrics` / `inspect --openmetrics`: the exact exposition text for a sample fleet — one
// node with every kind of image, a lost pin, archives and a disk picture, one node not reached —
// with each value traced to the rule it comes from (protection, needs, the archive check).
import { describe, expect, it } from 'vitest';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import type { ArchiveFile } from '../../../src/shared/archivesReport';
import type { ArchiveInfo } from '../../../src/shared/domain/archives';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { LostPin } from '../../../src/shared/domain/lostPins';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';
import { escapeLabelValue, GUARD_MISSING_SERIES, guardFixedTotal, imageStates, renderGuardMetrics, renderMetrics } from '../../../src/shared/metrics';
import { applyNeeds, type NodeNeeds } from '../../../src/shared/needs';
import { imageProtection } from '../../../src/shared/protection';
import type { SignatureRecord } from '../../../src/shared/signatures';
import { criPinning } from '../../../src/shared/versions';
import { imageRef } from '../../support/imageRef';

const VERSIONS = { containerdVersion: '2.1.9', containerdRevision: 'r', distro: 'k3s' as const, distroVersion: 'v1.33.7+k3s1' };

const LABELS: Record<ImageRef['pin'], Record<string, string>> = {
  durable: { 'io.cri-containerd.pinned': 'pinned' },
  distro: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' }, // k3s sets both
  none: {},
};

const ref = (name: string, id: string, pin: ImageRef['pin'], afterRestart: ImageRef['afterRestart']): ImageRef =>
  imageRef(name, { labels: LABELS[pin], pin, afterRestart, reason: 'r' }, id);

const SIGNED: SignatureRecord = { verified: true, by: '3f1c2a4b'.padEnd(64, '0'), format: 'bundle', at: '2026-12-08T10:00:00Z' };
const REFUSED: SignatureRecord = { verified: false, reason: 'no signature', at: '2026-12-08T10:00:00Z' };

const NEEDS: NodeNeeds = {
  sources: [{ kind: 'cluster', label: 'kubectl on n1' }],
  images: [
    { ref: 'docker.io/library/web:1', workloads: [{ kind: 'Deployment', namespace: 'default', name: 'web', why: 'scaled to 0' }], source: 'cluster' },
    { ref: 'docker.io/library/db:2', workloads: [{ kind: 'StatefulSet', namespace: 'data', name: 'db', why: 'running' }], source: 'cluster' },
  ],
  notes: [],
};

const archive = (path: string, safeToRemove: boolean, kind: ArchiveInfo['kind'] = 'archive'): ArchiveFile => ({
  path,
  kind,
  compression: null,
  size: 1,
  mtime: '2026-12-05T00:00:00Z',
  images: [],
  imported: true,
  safeToRemove,
  reason: 'r',
  cachedByK3s: false,
  removalTone: safeToRemove ? 'safe' : 'refused',
});

const lost: LostPin = {
  node: 'n1',
  kind: 'label-removed',
  ref: 'docker.io/library/gone:1',
  imageId: null,
  pinnedAt: '2026-12-01T00:00:00Z',
  pinnedBy: 'tech',
  summary: 's',
  causes: [],
  remedy: { kind: 'reimport', text: 't' },
  stillPinnedVia: null,
};

function reached(): FleetNodeResult {
  const refs = [
    ref('docker.io/library/web:1', 'a', 'none', 'unpinned'), // needed, unpinned: at risk
    { ...ref('docker.io/library/db:2', 'b', 'durable', 'pinned'), signature: SIGNED }, // needed, verified
    { ...ref('docker.io/library/old:0', 'd', 'durable', 'pinned'), signature: REFUSED }, // imported not verified
    ref('docker.io/library/app:3', 'e', 'distro', 'unpinned'), // k3s pin, no archive: lost at the next start
    ref('docker.io/library/app@sha256:' + 'e'.repeat(64), 'e', 'distro', 'unpinned'), // same image: counted once
    ref('docker.io/library/tool:1', 'f', 'distro', 'pinned'),
  ];
  const judged = applyNeeds(refs, imageProtection(refs, criPinning(VERSIONS.containerdVersion)), NEEDS, { holders: () => [] });
  return {
    node: 'n1',
    reachable: true,
    error: null,
    versions: VERSIONS,
    images: judged.refs,
    archives: [archive('a.tar', true), archive('b.tar.zst', false), archive('list.txt', false, 'prepull'), archive('notes.md', false, 'ignored')],
    disk: null,
    lostPins: [lost],
    needs: judged.report,
  };
}

const unreached: FleetNodeResult = {
  node: 'n"2',
  reachable: false,
  error: { code: 'UNREACHABLE', message: 'Cannot reach 10.0.0.2:22.' },
  versions: null,
  images: null,
  archives: null,
  disk: null,
};

const GiB = 1024 ** 3;
const disk = {
  imagefs: { roles: ['content' as const, 'snapshots' as const], paths: {}, totalBytes: 100 * GiB, freeBytes: 40 * GiB, via: 'statvfs' as const },
  policy: resolveGcPolicy([]),
};

const HELP = {
  images: '# HELP holdfast_images Images in containerd (by image id) by the pin kubelet sees now: durable, k3s (removed at the next k3s start unless re-imported) or unpinned.\n# TYPE holdfast_images gauge',
  losing: '# HELP holdfast_images_losing_pin_at_next_start Images kubelet sees pinned now that lose the pin at the next k3s start.\n# TYPE holdfast_images_losing_pin_at_next_start gauge',
  atRisk:
    '# HELP holdfast_images_at_risk Needed images that are missing, unprotected now or unprotected after the next k3s start (needs read from the cluster, else images from air-gap archives).\n# TYPE holdfast_images_at_risk gauge',
  lost: '# HELP holdfast_pins_lost Durable pins Holdfast made (its audit log) that are gone from containerd.\n# TYPE holdfast_pins_lost gauge',
  archives: '# HELP holdfast_archives Air-gap archives and pre-pull lists in the images dir, by whether removing them is safe.\n# TYPE holdfast_archives gauge',
  verified:
    "# HELP holdfast_images_verified Image references whose signature Holdfast verified at import (CRI's own sha256:<id> records not counted).\n# TYPE holdfast_images_verified gauge",
  unverified:
    "# HELP holdfast_images_unverified Image references without a signature Holdfast verified: never verified, or imported not verified (CRI's own sha256:<id> records not counted).\n# TYPE holdfast_images_unverified gauge",
  neededUnverified:
    '# HELP holdfast_needed_images_unverified Image references the site needs without a signature Holdfast verified (needs read from the cluster, else images from air-gap archives).\n# TYPE holdfast_needed_images_unverified gauge',
  used: "# HELP holdfast_imagefs_used_bytes Used bytes of the file system kubelet's image GC watches (capacity minus what non-root users may use).\n# TYPE holdfast_imagefs_used_bytes gauge",
  capacity: "# HELP holdfast_imagefs_capacity_bytes Capacity in bytes of the file system kubelet's image GC watches.\n# TYPE holdfast_imagefs_capacity_bytes gauge",
  gc: "# HELP holdfast_gc_high_threshold_ratio kubelet's imageGCHighThresholdPercent as a ratio: image GC starts above this use of the image file system.\n# TYPE holdfast_gc_high_threshold_ratio gauge",
  maxAge:
    "# HELP holdfast_gc_max_age_seconds kubelet's imageMaximumGCAge in seconds, only where it is on: kubelet deletes every unpinned image unused that long, whatever the disk usage.\n# TYPE holdfast_gc_max_age_seconds gauge",
  success: '# HELP holdfast_check_success Whether Holdfast could read the node (1) or not (0, with the kind of error).\n# TYPE holdfast_check_success gauge',
  stamp: '# HELP holdfast_check_timestamp_seconds When Holdfast last checked the node, in seconds since the epoch.\n# TYPE holdfast_check_timestamp_seconds gauge',
};

describe('holdfast metrics text', () => {
  it('one node, no node label (its own textfile): every series with HELP and TYPE, values by the shared rules', () => {
    expect(renderMetrics([{ label: null, result: reached(), disk }], 1796479564)).toBe(
      [
        HELP.images,
        'holdfast_images{state="durable"} 2',
        'holdfast_images{state="k3s"} 2',
        'holdfast_images{state="unpinned"} 1',
        HELP.losing,
        'holdfast_images_losing_pin_at_next_start 1',
        HELP.atRisk,
        'holdfast_images_at_risk 1',
        HELP.lost,
        'holdfast_pins_lost 1',
        HELP.archives,
        'holdfast_archives{safe_to_remove="true"} 1',
        'holdfast_archives{safe_to_remove="false"} 2',
        HELP.verified,
        'holdfast_images_verified 1', // db:2
        HELP.unverified,
        'holdfast_images_unverified 5', // web:1 and app:3 never verified, old:0 refused, app's digest reference, tool:1
        HELP.neededUnverified,
        'holdfast_needed_images_unverified 1', // web:1: db:2, the other needed image, is verified
        HELP.used,
        `holdfast_imagefs_used_bytes ${60 * GiB}`,
        HELP.capacity,
        `holdfast_imagefs_capacity_bytes ${100 * GiB}`,
        HELP.gc,
        'holdfast_gc_high_threshold_ratio 0.85',
        // Max-age GC off (not set): no sample.
        HELP.maxAge,
        HELP.success,
        'holdfast_check_success 1',
        HELP.stamp,
        'holdfast_check_timestamp_seconds 1796479564',
        '',
      ].join('\n'),
    );
  });

  it('a fleet (inspect --openmetrics): a node label first, an unreached node only says it failed and why', () => {
    expect(renderMetrics([{ label: 'n1', result: reached() }, { label: 'n"2', result: unreached }], 1796479564)).toBe(
      [
        HELP.images,
        'holdfast_images{node="n1",state="durable"} 2',
        'holdfast_images{node="n1",state="k3s"} 2',
        'holdfast_images{node="n1",state="unpinned"} 1',
        HELP.losing,
        'holdfast_images_losing_pin_at_next_start{node="n1"} 1',
        HELP.atRisk,
        'holdfast_images_at_risk{node="n1"} 1',
        HELP.lost,
        'holdfast_pins_lost{node="n1"} 1',
        HELP.archives,
        'holdfast_archives{node="n1",safe_to_remove="true"} 1',
        'holdfast_archives{node="n1",safe_to_remove="false"} 2',
        HELP.verified,
        'holdfast_images_verified{node="n1"} 1',
        HELP.unverified,
        'holdfast_images_unverified{node="n1"} 5',
        HELP.neededUnverified,
        'holdfast_needed_images_unverified{node="n1"} 1',
        // No disk picture in a fleet report: the imagefs and GC series are left out, not zero.
        HELP.used,
        HELP.capacity,
        HELP.gc,
        HELP.maxAge,
        HELP.success,
        'holdfast_check_success{node="n1"} 1',
        'holdfast_check_success{node="n\\"2",kind="unreachable"} 0',
        HELP.stamp,
        'holdfast_check_timestamp_seconds{node="n1"} 1796479564',
        'holdfast_check_timestamp_seconds{node="n\\"2"} 1796479564',
        '',
      ].join('\n'),
    );
  });

  it("kubelet's max-age GC, where it is on: its age in seconds", () => {
    const aged = { ...disk, policy: resolveGcPolicy([{ flag: 'image-maximum-gc-age', value: '168h', source: 'config.yaml' }], [], { minor: 35 }) };
    const text = renderMetrics([{ label: 'n1', result: reached(), disk: aged }], 1796479564);
    expect(text).toContain(`${HELP.maxAge}\nholdfast_gc_max_age_seconds{node="n1"} 604800\n`);
  });

  it('image states count images, not references, and a pin containerd GC may drop protects nothing', () => {
    const refs = [
      ref('docker.io/library/a:1', 'a', 'durable', 'pinned'),
      { ...ref('docker.io/library/b:1', 'b', 'durable', 'pinned'), labels: { 'io.cri-containerd.pinned': 'pinned', 'containerd.io/gc.expire': '2026-12-06T00:00:00Z' } },
    ];
    expect(imageStates({ images: refs, versions: VERSIONS })).toEqual({ durable: 1, k3s: 0, unpinned: 1 });
  });

  it('label values are escaped as the exposition format wants', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });
});

describe('renderGuardMetrics (#50)', () => {
  const run = { pinSet: 'site', ok: true, pinned: 2, restored: 1, fixedTotal: 7, durable: 5, missing: ['registry.local/b:1', 'registry.local/a"x:1'] };

  it('prints every family once, with the missing references sorted and escaped', () => {
    const text = renderGuardMetrics(run, 1_800_000_000);
    const samples = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(samples).toEqual([
      'holdfast_guard_last_run_timestamp_seconds 1800000000',
      'holdfast_guard_last_run_success 1',
      'holdfast_guard_info{pin_set="site"} 1',
      'holdfast_guard_fixed_total 7',
      'holdfast_guard_fixed{kind="pinned"} 2',
      'holdfast_guard_fixed{kind="restored"} 1',
      'holdfast_guard_durable_references 5',
      'holdfast_guard_missing_images 2',
      'holdfast_guard_missing_image{ref="registry.local/a\\"x:1"} 1',
      'holdfast_guard_missing_image{ref="registry.local/b:1"} 1',
    ]);
    expect(text).toContain('# TYPE holdfast_guard_fixed_total counter');
  });

  it('a failed run keeps the time, the failure, the set and the total only', () => {
    const text = renderGuardMetrics({ ...run, ok: false }, 1);
    expect(text.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      'holdfast_guard_last_run_timestamp_seconds 1',
      'holdfast_guard_last_run_success 0',
      'holdfast_guard_info{pin_set="site"} 1',
      'holdfast_guard_fixed_total 7',
    ]);
  });

  it('bounds the per-reference series, and reads the total back from its own file', () => {
    const many = Array.from({ length: GUARD_MISSING_SERIES + 10 }, (_, i) => `r.local/m:${String(i).padStart(3, '0')}`);
    const text = renderGuardMetrics({ ...run, missing: many }, 1);
    expect(text.match(/^holdfast_guard_missing_image\{/gm)).toHaveLength(GUARD_MISSING_SERIES);
    expect(text).toContain(`holdfast_guard_missing_images ${many.length}`);
    expect(guardFixedTotal(text)).toBe(7);
    expect(guardFixedTotal(null)).toBe(0);
    expect(guardFixedTotal('garbage')).toBe(0);
  });
});

describe('renderGuardMetrics: images a pin set requires signed (#50)', () => {
  const run = { pinSet: 'site', ok: true, pinned: 0, restored: 0, fixedTotal: 0, durable: 2, missing: [] };

  it('counts them and names each, 0 when every one verifies', () => {
    const samples = (unverified: string[]) => renderGuardMetrics({ ...run, unverified }, 1).split('\n').filter((l) => l.startsWith('holdfast_guard_unverified'));
    expect(samples(['registry.local/b:1', 'registry.local/a:1'])).toEqual([
      'holdfast_guard_unverified 2',
      'holdfast_guard_unverified_image{ref="registry.local/a:1"} 1',
      'holdfast_guard_unverified_image{ref="registry.local/b:1"} 1',
    ]);
    expect(samples([])).toEqual(['holdfast_guard_unverified 0']);
  });

  it('a failed run says nothing of them', () => {
    expect(renderGuardMetrics({ ...run, ok: false, unverified: ['registry.local/a:1'] }, 1)).not.toMatch(/unverified/);
  });
});
