// The health of k3s's .cache.json as `holdfast archives` shows it (issue #37, item 5).
import { describe, expect, it } from 'vitest';
import { importCacheBrief, importCacheHealth, importCacheReasons, type CacheHealthInput } from '../../../src/shared/importCacheHealth';
import { remedyCommand } from '../../../src/cli/remedyText';

const ROOT = '/var/lib/rancher/k3s/agent/images';
const files = [
  { abs: `${ROOT}/a.tar`, path: 'a.tar', size: 10, mtime: 1000 },
  { abs: `${ROOT}/sub/b.tar`, path: 'sub/b.tar', size: 20, mtime: 2000 },
];
const input = (over: Partial<CacheHealthInput>): CacheHealthInput => ({ enabled: true, readable: true, entries: new Map(), honoured: 'yes', root: `${ROOT}/`, files, ...over });

describe('importCacheHealth', () => {
  it('absent: every start re-imports everything; a release without the cache says nothing', () => {
    const h = importCacheHealth(input({ enabled: false }));
    expect(h.state).toBe('absent');
    expect(importCacheBrief(h)).toBe('no .cache.json: every k3s start re-imports every archive (slow starts on a large images dir)');
    expect(importCacheReasons(h, remedyCommand)[0]).toContain('k3s #12243');
    // Turning the cache on is advice only where k3s re-pins what it skips (k3s PR #14266) …
    const fixed = importCacheHealth(input({ enabled: false, distroVersion: 'v1.36.3+k3s1' }));
    expect(fixed.repins).toBe('yes');
    expect(importCacheReasons(fixed, remedyCommand)[0]).toContain('an empty .cache.json turns it on');
    // … never where the cache would lose the pins of every unchanged archive at each start.
    for (const v of ['v1.33.7+k3s1', 'v1.36.2+k3s1', 'v1.32.5+k3s1']) {
      const before = importCacheHealth(input({ enabled: false, distroVersion: v }));
      const long = importCacheReasons(before, remedyCommand, 'n1')[0]!;
      expect(long, v).not.toContain('turns it on');
      expect(long, v).toContain('Do not create one on this release');
      expect(long, v).toContain('holdfast pin n1 --needed');
    }
    const old = importCacheHealth(input({ enabled: false, honoured: 'no' }));
    expect(old.state).toBe('ignored');
    expect(importCacheBrief(old)).toBeNull();
  });

  const entry = (size: number, modTime: number, images: string[] | null) => ({ size, modTime, modTimeNanos: 0, images });

  it('without the fix: same-size files skipped without a re-pin; gone files stale', () => {
    const h = importCacheHealth(
      input({
        distroVersion: 'v1.33.7+k3s1',
        entries: new Map([
          [`${ROOT}/a.tar`, entry(10, 1000, null)],
          [`${ROOT}/sub/b.tar`, entry(20, 1999, ['x:1'])],
          [`${ROOT}/gone.tar`, entry(1, 1, ['y:1'])],
        ]),
      }),
    );
    expect(h).toMatchObject({ state: 'on', rule: 'without-fix', entries: 3, skippedUnpinned: ['a.tar', 'sub/b.tar'], skippedRepinned: [], reimported: [], savesNothing: false, stale: [{ path: 'gone.tar', why: 'gone' }] });
    expect(importCacheBrief(h)).toBe('.cache.json: 2 files skipped without a re-pin (pins lost at the next start), 1 stale');
    const long = importCacheReasons(h, remedyCommand, 'n1');
    expect(long).toHaveLength(2);
    expect(long[0]).toMatch(/^a\.tar, sub\/b\.tar are the same size as recorded in .cache.json, so k3s skips them at start .* pins nothing it skips/);
    expect(long[0]).toContain('holdfast pin n1 --archive FILE, for each');
    expect(long[1]).toContain('gone.tar is no longer in the images dir');
  });

  it('with the fix: no images or a sub-second mtime re-import the file; when every file is, the cache saves nothing', () => {
    const h = importCacheHealth(
      input({
        distroVersion: 'v1.34.10+k3s1',
        files: [
          { ...files[0]!, mtimeNanos: 0 },
          { ...files[1]!, mtimeNanos: 123 },
        ],
        entries: new Map([
          [`${ROOT}/a.tar`, entry(10, 1000, null)],
          [`${ROOT}/sub/b.tar`, entry(20, 2000, ['x:1'])],
        ]),
      }),
    );
    expect(h).toMatchObject({ rule: 'with-fix', skippedUnpinned: [], skippedRepinned: [], reimported: [{ path: 'a.tar', why: 'no-images' }, { path: 'sub/b.tar', why: 'sub-second' }], savesNothing: true });
    expect(importCacheBrief(h)).toBe('.cache.json: saves nothing (k3s re-imports every file at each start)');
    expect(importCacheReasons(h, remedyCommand, 'n1')[0]).toMatch(/^The cache saves nothing: k3s re-imports every file at each start \(its entry records no images; its mtime has a sub-second part/);
  });

  it('with the fix: a whole-second file with names is skipped and re-pinned (healthy)', () => {
    const h = importCacheHealth(input({ distroVersion: 'v1.34.10+k3s1', files: [{ ...files[0]!, mtimeNanos: 0 }], entries: new Map([[`${ROOT}/a.tar`, entry(10, 1000, ['x:1'])]]) }));
    expect(h).toMatchObject({ skippedRepinned: ['a.tar'], savesNothing: false });
    expect(importCacheBrief(h)).toBeNull();
  });

  it('a cache just turned on (nothing recorded yet) is not said to save nothing', () => {
    expect(importCacheHealth(input({ distroVersion: 'v1.34.10+k3s1' })).savesNothing).toBe(false);
  });

  it('a healthy cache has nothing to say; an unreadable one does', () => {
    const ok = importCacheHealth(input({ distroVersion: 'v1.37.0+k3s1', files: [{ ...files[0]!, mtimeNanos: 0 }], entries: new Map([[`${ROOT}/a.tar`, entry(10, 1000, ['x:1'])]]) }));
    expect(ok).toMatchObject({ state: 'on', skippedUnpinned: [], stale: [] });
    expect(importCacheBrief(ok)).toBeNull();
    expect(importCacheBrief(importCacheHealth(input({ readable: false })))).toMatch(/cannot be read/);
  });
});
