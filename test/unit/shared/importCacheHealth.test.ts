// The health of k3s's .cache.json as `holdfast archives` shows it (issue #37, item 5).
import { describe, expect, it } from 'vitest';
import { importCacheBrief, importCacheHealth, importCacheReasons, type CacheHealthInput } from '../../../src/shared/importCacheHealth';

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
    expect(importCacheReasons(h)[0]).toContain('k3s #12243');
    // Turning the cache on is advice only where k3s re-pins what it skips (k3s PR #14266) …
    const fixed = importCacheHealth(input({ enabled: false, distroVersion: 'v1.36.3+k3s1' }));
    expect(fixed.repins).toBe('yes');
    expect(importCacheReasons(fixed)[0]).toContain('an empty .cache.json turns it on');
    // … never where the cache would lose the pins of every unchanged archive at each start.
    for (const v of ['v1.33.7+k3s1', 'v1.36.2+k3s1', 'v1.32.5+k3s1']) {
      const before = importCacheHealth(input({ enabled: false, distroVersion: v }));
      const long = importCacheReasons(before, 'n1')[0]!;
      expect(long, v).not.toContain('turns it on');
      expect(long, v).toContain('Do not create one on this release');
      expect(long, v).toContain('holdfast pin n1 --needed');
    }
    const old = importCacheHealth(input({ enabled: false, honoured: 'no' }));
    expect(old.state).toBe('ignored');
    expect(importCacheBrief(old)).toBeNull();
  });

  it('entries without images, for gone files and for changed files', () => {
    const h = importCacheHealth(
      input({
        entries: new Map([
          [`${ROOT}/a.tar`, { size: 10, modTime: 1000, images: null }],
          [`${ROOT}/sub/b.tar`, { size: 20, modTime: 1999, images: ['x:1'] }],
          [`${ROOT}/gone.tar`, { size: 1, modTime: 1, images: ['y:1'] }],
        ]),
      }),
    );
    expect(h).toEqual({ state: 'on', entries: 3, withoutImages: ['a.tar'], stale: [{ path: 'sub/b.tar', why: 'changed' }, { path: 'gone.tar', why: 'gone' }], repins: 'unknown' });
    expect(importCacheBrief(h)).toBe('.cache.json: 1 entry without images (pins lost at the next start), 2 stale');
    const long = importCacheReasons(h, 'n1');
    expect(long).toHaveLength(3);
    expect(long[0]).toContain('written before k3s PR #14266');
    expect(long[0]).toContain('holdfast pin n1 --archive a.tar');
    expect(long[2]).toContain('gone.tar is no longer in the images dir');
  });

  it('a healthy cache has nothing to say; an unreadable one does', () => {
    const ok = importCacheHealth(input({ entries: new Map([[`${ROOT}/a.tar`, { size: 10, modTime: 1000, images: ['x:1'] }]]) }));
    expect(ok).toMatchObject({ state: 'on', withoutImages: [], stale: [] });
    expect(importCacheBrief(ok)).toBeNull();
    expect(importCacheBrief(importCacheHealth(input({ readable: false })))).toMatch(/cannot be read/);
  });
});
