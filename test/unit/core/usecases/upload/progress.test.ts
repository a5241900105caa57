import { describe, expect, it } from 'vitest';
import { ProgressMeter, type UploadProgress } from '../../../../../src/core/usecases/upload/progress';

function meter(total: number) {
  let t = 0;
  const seen: UploadProgress[] = [];
  const m = new ProgressMeter({ bytesTotal: total, onProgress: (p) => seen.push(p), now: () => t });
  return { m, seen, at: (ms: number) => (t = ms) };
}

describe('ProgressMeter', () => {
  it('smooths the rate over ~2 s and derives the ETA from it', () => {
    const { m, seen, at } = meter(1000e6);
    m.setPhase('uploading', 0);
    // 100 MB/s for 3 s, sampled every 50 ms
    for (let ms = 50; ms <= 3000; ms += 50) {
      at(ms);
      m.update(ms * 100_000);
    }
    const last = m.snapshot();
    expect(last.rate).toBeCloseTo(100e6, -3);
    expect(last.eta).toBeCloseTo((1000e6 - 300e6) / 100e6, 3);
    // then it slows to 10 MB/s: after 2 s the old speed has left the window
    let bytes = 300e6;
    for (let ms = 3050; ms <= 5100; ms += 50) {
      at(ms);
      bytes += 500_000;
      m.update(bytes);
    }
    expect(m.snapshot().rate).toBeCloseTo(10e6, -4);
    expect(seen.every((p) => p.phase === 'uploading')).toBe(true);
  });

  it('reports at most ~10 times a second, but every phase change', () => {
    const { m, seen, at } = meter(100);
    m.setPhase('checking', 0);
    m.setPhase('uploading', 0);
    for (let ms = 1; ms <= 1000; ms++) {
      at(ms);
      m.update(Math.min(100, ms / 10));
    }
    const uploading = seen.filter((p) => p.phase === 'uploading');
    expect(uploading.length).toBeLessThanOrEqual(11);
    expect(uploading.length).toBeGreaterThanOrEqual(9);
    m.setPhase('verifying', 100);
    m.setPhase('renaming', 100);
    expect(seen.map((p) => p.phase).filter((p, i, a) => p !== a[i - 1])).toEqual(['checking', 'uploading', 'verifying', 'renaming']);
  });

  it('has no rate or ETA before bytes move; the resumed prefix does not count as speed', () => {
    const { m, at } = meter(1000);
    m.setPhase('uploading', 600);
    expect(m.snapshot()).toEqual({ bytesDone: 600, bytesTotal: 1000, rate: 0, eta: null, phase: 'uploading' });
    at(1000);
    m.update(700);
    expect(m.snapshot().rate).toBe(100);
    expect(m.snapshot().eta).toBe(3);
  });

  it('survives a listener that throws', () => {
    const m = new ProgressMeter({ bytesTotal: 1, onProgress: () => { throw new Error('boom'); } });
    expect(() => m.setPhase('uploading', 0)).not.toThrow();
  });
});
