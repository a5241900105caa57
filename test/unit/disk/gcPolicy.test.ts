// kubelet's GC and eviction thresholds as the node sets them, and kubelet's own arithmetic (shared/gcPolicy).
import { describe, expect, it } from 'vitest';
import { bytesToFreeAtHigh, kubeletUsagePercent, nearGcThreshold, parseEvictionHard, resolveGcPolicy } from '../../../src/shared/gcPolicy';

describe('resolveGcPolicy', () => {
  it('without settings: kubelet’s 85/80 and k3s’s eviction-hard 5 %/5 %', () => {
    const p = resolveGcPolicy([]);
    expect(p).toMatchObject({ highPercent: 85, lowPercent: 80, evictionHard: { imagefs: { percent: 5 }, nodefs: { percent: 5 } } });
    expect(p.sources.high).toBe("kubelet's default");
  });

  it('takes the last occurrence of each flag and says where it came from', () => {
    const p = resolveGcPolicy([
      { flag: 'image-gc-high-threshold', value: '90', source: '/etc/rancher/k3s/config.yaml' },
      { flag: 'image-gc-high-threshold', value: '92', source: 'the k3s server command line' },
      { flag: 'image-gc-low-threshold', value: '70', source: '/etc/rancher/k3s/config.yaml' },
    ]);
    expect(p).toMatchObject({ highPercent: 92, lowPercent: 70, sources: { high: 'the k3s server command line', low: '/etc/rancher/k3s/config.yaml' } });
  });

  it('an eviction-hard flag replaces the whole map; values kubelet refuses are noted, not used', () => {
    const p = resolveGcPolicy([
      { flag: 'eviction-hard', value: 'imagefs.available<2Gi,memory.available<100Mi', source: 'f' },
      { flag: 'image-gc-high-threshold', value: 'ninety', source: 'f' },
    ]);
    expect(p.evictionHard).toEqual({ imagefs: { bytes: 2 * 2 ** 30 }, nodefs: null });
    expect(p.highPercent).toBe(85);
    expect(p.notes.join(' ')).toContain('image-gc-high-threshold=ninety');
  });

  it('parses eviction-hard entries', () => {
    expect(parseEvictionHard('imagefs.available<10%, nodefs.available<500M')).toEqual({ imagefs: { percent: 10 }, nodefs: { bytes: 500e6 }, bad: [] });
    expect(parseEvictionHard('imagefs.available<lots').bad).toEqual(['imagefs.available<lots']);
  });
});

describe('kubelet arithmetic', () => {
  it('usage is 100 − ⌊available × 100 / capacity⌋, so GC starts as soon as less than 16 % is free', () => {
    expect(kubeletUsagePercent({ totalBytes: 1000, freeBytes: 160 })).toBe(84);
    expect(kubeletUsagePercent({ totalBytes: 1000, freeBytes: 159 })).toBe(85);
    expect(kubeletUsagePercent({ totalBytes: null, freeBytes: 5 })).toBeNull();
  });

  it('frees capacity × (100 − low) / 100 − available: from the high mark, or from now when above it', () => {
    const policy = { highPercent: 85, lowPercent: 80 };
    expect(bytesToFreeAtHigh({ totalBytes: 1000, freeBytes: 500 }, policy)).toEqual({ bytes: 50, availableAtStart: 150, now: false });
    expect(bytesToFreeAtHigh({ totalBytes: 1000, freeBytes: 100 }, policy)).toEqual({ bytes: 100, availableAtStart: 100, now: true });
  });

  it('flags a file system within 5 points of the high threshold', () => {
    expect(nearGcThreshold({ totalBytes: 1000, freeBytes: 200 }, { highPercent: 85 })).toBe(true);
    expect(nearGcThreshold({ totalBytes: 1000, freeBytes: 201 }, { highPercent: 85 })).toBe(false);
  });
});
