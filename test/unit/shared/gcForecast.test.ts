// What kubelet's GC would delete first and what that really frees (shared/gcForecast).
import { describe, expect, it } from 'vitest';
import { forecastGc, gcCandidates } from '../../../src/shared/gcForecast';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';
import { kubeletUse, store } from '../../support/diskStore';

const KB = 1000;
const repo = 'registry.lan/acme/agent';
// 1,000,000-byte file system at exactly the high mark's arithmetic: GC wants 50,000 bytes.
const fs = { totalBytes: 1_000_000, freeBytes: 500_000 };
const policy = resolveGcPolicy([]);

function node() {
  return store([
    { key: 'v3', refs: [`${repo}:3`], blobs: [['base', 30 * KB], ['l3', 5 * KB]], usedBy: [kubeletUse('c1', `${repo}:3`)], lastChangedAt: '2025-03-01T00:00:00Z' },
    { key: 'v2', refs: [`${repo}:2`], blobs: [['base', 30 * KB], ['l2', 6 * KB]], lastChangedAt: '2025-02-01T00:00:00Z' },
    { key: 'v1', refs: [`${repo}:1`], blobs: [['base', 30 * KB], ['l1', 7 * KB]], lastChangedAt: '2024-06-01T00:00:00Z' },
    { key: 'old', refs: ['docker.io/library/redis:7.2'], blobs: [['r', 20 * KB]], lastChangedAt: '2024-01-01T00:00:00Z' },
    { key: 'pinned', refs: ['docker.io/library/nginx:1'], blobs: [['n', 40 * KB]], pin: 'durable', lastChangedAt: '2023-01-01T00:00:00Z' },
    { key: 'ctr', refs: ['docker.io/library/tool:1'], blobs: [['t', 1 * KB]], usedBy: [{ id: 'debug', image: 'docker.io/library/tool:1', kubelet: false }], lastChangedAt: '2024-03-01T00:00:00Z' },
  ]);
}

describe('forecastGc', () => {
  it('takes unused, unpinned images oldest first; a record made outside CRI does not protect its image from kubelet', () => {
    const { images } = node();
    expect(gcCandidates(images).map((i) => i.key)).toEqual(['old', 'ctr', 'v1', 'v2']);
  });

  it('stops once the CRI sizes it counted reach the target, and reports the (smaller) real gain of shared layers', () => {
    const { images, index } = node();
    const f = forecastGc({ images, index, imagefs: fs, policy });
    expect(f.bytesToFree).toBe(50_000);
    // counted: old 20k, ctr 21k, v1 58k ≥ 50k → stop; v2 only at eviction
    expect(f.steps.map((s) => [s.key, s.deleted])).toEqual([
      ['old', true],
      ['ctr', true],
      ['v1', true],
      ['v2', false],
    ]);
    expect(f.kubeletCounts).toBe(58 * KB);
    // v1's base layer is still held by v2 and v3: only its own 7 kB go
    expect(f.realFreed).toBe(28 * KB);
    expect(f.steps.find((s) => s.key === 'v2')!.frees).toBe(6 * KB);
    expect(f.usageAfterPercent).toBe(83);
    expect(f.reachesLow).toBe(false);
    expect(f.notes.join(' ')).toContain('shared layers');
  });

  it('flags the images the site needs: rollback versions and images in use only outside CRI', () => {
    const { images, index } = node();
    const f = forecastGc({ images, index, imagefs: fs, policy });
    const flags = Object.fromEntries(f.steps.map((s) => [s.key, s.needed.map((n) => n.kind)]));
    expect(flags).toEqual({ old: [], ctr: ['outside-cri'], v1: [], v2: ['rollback'] });
    expect(f.neededDeleted).toBe(1);
    expect(f.orderNote).toContain('approximates');
  });

  it('on a containerd without CRI pinning, pinned images are candidates too, flagged', () => {
    const { images, index } = store([{ key: 'p', refs: ['a/b:1'], blobs: [['x', 10]], pin: 'durable', pinnedForKubelet: false }]);
    const f = forecastGc({ images, index, imagefs: fs, policy });
    expect(f.steps[0]!.needed.map((n) => n.kind)).toEqual(['pin-ignored']);
  });

  it('deleting nothing, the disk ends where GC starts: at the high threshold, on a capacity 85 % does not divide', () => {
    // Every image pinned: kubelet may delete none of them.
    const { images, index } = store([{ key: 'p', refs: ['a/b:1'], blobs: [['x', 10]], pin: 'durable' }]);
    const f = forecastGc({ images, index, imagefs: { totalBytes: 16 * 1024 * 1024, freeBytes: 8 * 1024 * 1024 }, policy });
    expect(f.deletedCount).toBe(0);
    expect(f.realFreed).toBe(0);
    expect(f.usageAfterPercent).toBe(85);
    // already above it: ends where it is now
    const full = forecastGc({ images, index, imagefs: { totalBytes: 16 * 1024 * 1024, freeBytes: 1_000_003 }, policy });
    expect(full.triggeredNow).toBe(true);
    expect(full.usageAfterPercent).toBe(full.usedPercent);
  });

  it('without a measured file system keeps the order but deletes nothing', () => {
    const { images, index } = node();
    const f = forecastGc({ images, index, imagefs: null, policy });
    expect(f.measured).toBe(false);
    expect(f.steps.every((s) => !s.deleted)).toBe(true);
  });
});

describe("forecastGc: kubelet's max-age GC", () => {
  it('off: no max-age part', () => {
    const { images, index } = node();
    expect(forecastGc({ images, index, imagefs: fs, policy }).maxAge).toBeNull();
  });

  it('set: every candidate goes by age whatever the disk says, within one age after kubelet starts; pinned and in-use images stay', () => {
    const { images, index } = node();
    const aged = resolveGcPolicy([{ flag: 'image-maximum-gc-age', value: '168h', source: '/etc/rancher/k3s/config.yaml' }], [], { minor: 35 });
    // A nearly empty disk (1 % used): the threshold GC is far off, the max-age GC takes them anyway.
    const f = forecastGc({ images, index, imagefs: { totalBytes: 1_000_000, freeBytes: 990_000 }, policy: aged });
    expect(f.triggeredNow).toBe(false);
    expect(f.maxAge).toMatchObject({ seconds: 604800, age: '7 days', when: "within 7 days after kubelet's last start", keys: ['old', 'ctr', 'v1', 'v2'], needed: 2 });
    expect(f.maxAge!.text).toBe(
      "kubelet's max-age GC (image-maximum-gc-age=168h, /etc/rancher/k3s/config.yaml) deletes every unpinned image no container used for 7 days, whatever the disk usage: all 4 images below, within 7 days after kubelet's last start (it does not keep last use across restarts). Pinned images are exempt.",
    );
  });

  it('set, nothing to take: says so', () => {
    const { images, index } = store([{ key: 'p', refs: ['a/b:1'], blobs: [['x', 10]], pin: 'durable' }]);
    const aged = resolveGcPolicy([{ flag: 'image-maximum-gc-age', value: '24h', source: 's' }], [], { minor: 35 });
    expect(forecastGc({ images, index, imagefs: fs, policy: aged }).maxAge!.text).toContain('no image here (every one is in use or pinned for kubelet), within 1 day');
  });
});
