// RKE2's own *-image.txt lists (issue #37, item 6): when RKE2 writes them, and the words.
import { describe, expect, it } from 'vitest';
import { RKE2_LISTS_BRIEF, rke2ListsAfterRemoval, rke2ListsNotice, rke2ListsReason, rke2ListsRemovalWarning, rke2WritesLists } from '../../../src/shared/rke2Lists';
import { imagesWhere } from '../../../src/cli/remedyText';

describe('rke2WritesLists', () => {
  it('on RKE2: when the top level holds no file but .txt and .json', () => {
    expect(rke2WritesLists('rke2', [])).toBe(true);
    expect(rke2WritesLists('rke2', ['.cache.json', 'runtime-image.txt', 'site.txt'])).toBe(true);
    // subfolders do not count: RKE2 reads the top level only
    expect(rke2WritesLists('rke2', ['site/apps.tar.gz', 'site/more.tar'])).toBe(true);
    expect(rke2WritesLists('rke2', ['apps.tar.gz'])).toBe(false);
    expect(rke2WritesLists('rke2', ['site/apps.tar.gz', 'runtime.tar.zst', 'a.txt'])).toBe(false);
  });

  it('takes any other top-level file for an archive, as RKE2 does (case-sensitive suffixes)', () => {
    expect(rke2WritesLists('rke2', ['README'])).toBe(false);
    expect(rke2WritesLists('rke2', ['LIST.TXT'])).toBe(false);
    expect(rke2WritesLists('rke2', ['notes.json.bak'])).toBe(false);
    expect(rke2WritesLists('rke2', ['.hidden'])).toBe(false);
  });

  it('never on k3s, nor on an undetected distro', () => {
    expect(rke2WritesLists('k3s', [])).toBe(false);
    expect(rke2WritesLists('k3s', ['a.txt'])).toBe(false);
    expect(rke2WritesLists('unknown', [])).toBe(false);
  });
});

describe('rke2ListsAfterRemoval', () => {
  it('is true only when the removal takes the last top-level archive away', () => {
    expect(rke2ListsAfterRemoval('rke2', ['apps.tar', 'a.txt', '.cache.json'], 'apps.tar')).toBe(true);
    expect(rke2ListsAfterRemoval('rke2', ['apps.tar', 'more.tar'], 'apps.tar')).toBe(false);
    // a subfolder's archive never counted
    expect(rke2ListsAfterRemoval('rke2', ['apps.tar', 'site/b.tar'], 'site/b.tar')).toBe(false);
    expect(rke2ListsAfterRemoval('rke2', ['apps.tar', 'site/b.tar'], 'apps.tar')).toBe(true);
    // already writing them: the removal changes nothing
    expect(rke2ListsAfterRemoval('rke2', ['a.txt', 'site/b.tar'], 'site/b.tar')).toBe(false);
    expect(rke2ListsAfterRemoval('k3s', ['apps.tar'], 'apps.tar')).toBe(false);
  });
});

describe('the words', () => {
  it('one short clause, then what happens and what to do', () => {
    expect(RKE2_LISTS_BRIEF).toBe('no archive at the top level: RKE2 writes its own image lists here at its next start');
    const long = rke2ListsReason('rke', imagesWhere('rke'));
    expect(long).toContain('RKE2 writes its own <component>-image.txt lists there');
    expect(long).toContain('becomes RKE2-managed');
    expect(long).toContain('Keep an archive at the top level of the images dir');
    expect(long).toContain('`holdfast images rke`');
    const warn = rke2ListsRemovalWarning('rke', 'runtime.tar');
    expect(warn).toMatch(/^Removing runtime\.tar leaves no archive at the top level of the images dir of rke, so at its next start RKE2 writes/);
    expect(warn).toContain('take over the durable pins of every image they name. Keep an archive at the top level');
    expect(rke2ListsNotice('rke', 'rke2', ['a.txt'], imagesWhere('rke'))).toEqual({ brief: RKE2_LISTS_BRIEF, reason: long });
    expect(rke2ListsNotice('rke', 'rke2', ['a.tar'], imagesWhere('rke'))).toBeNull();
    expect(rke2ListsNotice('k', 'k3s', [], imagesWhere('k'))).toBeNull();
  });
});
