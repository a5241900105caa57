// `holdfast archives NODE --json` says the node's .cache.json health once, not on every file.
import { describe, expect, it } from 'vitest';
import { archivesReport } from '../../../src/shared/archivesReport';
import type { ArchiveInfo } from '../../../src/shared/domain/archives';
import type { ImportCacheHealth } from '../../../src/shared/importCacheHealth';

const health: ImportCacheHealth = {
  state: 'on',
  repins: 'no',
  rule: 'without-fix',
  entries: 2,
  skippedUnpinned: ['a.tar'],
  skippedRepinned: [],
  reimported: [],
  savesNothing: false,
  stale: [{ path: 'gone.tar', why: 'gone' }],
};

const file = (path: string, over: Partial<ArchiveInfo> = {}): ArchiveInfo => ({
  path,
  kind: 'archive',
  compression: null,
  size: 1024,
  mtime: '2026-12-05T17:00:00Z',
  images: [`docker.io/library/${path.replace(/\..*$/, '')}:1`],
  imported: true,
  safeToRemove: false,
  reason: 'its images are not durably pinned yet',
  cachedByK3s: true,
  importCache: health,
  ...over,
});

describe('archivesReport', () => {
  it('lifts the cache health out of the files, once for the node, and keeps every other field', () => {
    const list = [file('a.tar'), file('b.tar', { cachedByK3s: false }), file('site.txt', { kind: 'prepull', images: [] })];
    const r = archivesReport('edge1', list);
    expect(r.node).toBe('edge1');
    expect(r.importCache).toEqual(health);
    expect(r.archives).toHaveLength(3);
    for (const [i, a] of r.archives.entries()) {
      expect(Object.keys(a)).not.toContain('importCache');
      const { importCache: _h, ...rest } = list[i]!;
      // every other field kept, with the removal's tone added (shared/removalVerdict)
      expect(a).toEqual({ ...rest, removalTone: 'refused' });
    }
    expect(JSON.stringify(r).split('"skippedUnpinned"')).toHaveLength(2);
  });

  it('an empty images dir: no files, no health', () => {
    expect(archivesReport('edge1', [])).toEqual({ node: 'edge1', importCache: null, archives: [] });
  });
});
