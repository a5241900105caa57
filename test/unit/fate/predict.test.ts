import { describe, expect, it } from 'vitest';
import { parsePrepullList } from '../../../src/core/archives/prepull';
import type { CacheVerdict } from '../../../src/core/archives/scan';
import { predictFates, type FateArchive, type FateContext, type FatePrepull, type FateRef } from '../../../src/core/fate/predict';

const K3S = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
const DURABLE = { 'io.cri-containerd.pinned': 'pinned' };
const D = 'sha256:' + 'a'.repeat(64);
const ID = 'sha256:' + 'c'.repeat(64);
const ID2 = 'sha256:' + 'e'.repeat(64);

const ref = (name: string, labels: Record<string, string>, imageId: string | null = ID): FateRef => ({ name, digest: D, imageId, labels });
const arch = (path: string, names: string[], cachedByK3s = false, imageId: string | null = ID): FateArchive => ({
  path,
  images: names.map((name) => ({ name, imageId })),
  cachedByK3s,
});
/** An archive .cache.json makes k3s skip, its entry recording `images` (null: none recorded). */
const cached = (path: string, names: string[], images: string[] | null, why: Extract<CacheVerdict, { skipped: true }>['why'] = 'unchanged'): FateArchive => ({
  ...arch(path, names, true),
  cache: { skipped: true, images, why },
});
const list = (path: string, text: string, extra: Partial<FatePrepull> = {}): FatePrepull => ({ path, list: parsePrepullList(text), cachedByK3s: false, ...extra });
const k3s = (v: string | null = 'v1.31.6+k3s1') => ({ distro: 'k3s' as const, distroVersion: v });
const fateOf = (refs: FateRef[], archives: FateArchive[], ctx: FateContext = k3s(), prepull: FatePrepull[] = [], name = refs[0]!.name) =>
  predictFates(refs, archives, ctx, prepull).get(name)!;

describe('predictFates', () => {
  it('a k3s pin survives only while its archive is in the images dir', () => {
    const refs = [ref('docker.io/library/app:1', K3S)];
    const kept = fateOf(refs, [arch('apps.tar', ['docker.io/library/app:1'])]);
    expect(kept).toMatchObject({ afterRestart: 'pinned', archive: 'apps.tar' });
    expect(kept.reason).toContain('re-imports apps.tar');
    const lost = fateOf(refs, []);
    expect(lost).toMatchObject({ afterRestart: 'unpinned', archive: null });
    expect(lost.reason).toMatch(/strips this pin.*no archive/);
  });

  it('digest references follow their image through repository and image id', () => {
    const refs = [ref(`docker.io/library/app@${D}`, K3S)];
    expect(fateOf(refs, [arch('a.tar', ['docker.io/library/app:1'])]).afterRestart).toBe('pinned');
    // same repository, other image id: not brought back
    expect(fateOf(refs, [arch('a.tar', ['docker.io/library/app:1'], false, ID2)]).afterRestart).toBe('unpinned');
  });

  it('a durable pin survives, but becomes k3s-managed again while its archive is present', () => {
    const refs = [ref('x/app:1', DURABLE)];
    expect(fateOf(refs, [])).toMatchObject({ afterRestart: 'pinned', reason: 'Durable pin: k3s never touches it.' });
    const again = fateOf(refs, [arch('a.tar.gz', ['x/app:1'])]);
    expect(again.afterRestart).toBe('pinned');
    expect(again.reason).toMatch(/k3s-managed again: remove a\.tar\.gz/);
  });

  it('an unpinned image is pinned by an archive that brings it, else stays unpinned', () => {
    const refs = [ref('x/app:1', {})];
    expect(fateOf(refs, [arch('a.tar', ['x/app:1'])]).afterRestart).toBe('pinned');
    expect(fateOf(refs, []).reason).toMatch(/garbage collector/);
  });

  it('RKE2 strips only its own label', () => {
    const rke2 = { distro: 'rke2' as const, distroVersion: 'v1.31.6+rke2r1' };
    const withRke2 = { 'io.cattle.rke2.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
    const lost = fateOf([ref('x/app:1', withRke2)], [], rke2);
    expect(lost.afterRestart).toBe('unpinned');
    expect(lost.reason).toMatch(/^RKE2 strips/);
    // a k3s label on an RKE2 node is not RKE2's: the CRI pin stays
    expect(fateOf([ref('x/app:1', K3S)], [], rke2).afterRestart).toBe('pinned');
  });

  it('says when an unreadable archive might have brought the image', () => {
    const f = fateOf([ref('x/app:1', K3S)], [{ path: 'bad.tar', images: null, cachedByK3s: false }]);
    expect(f.afterRestart).toBe('unpinned');
    expect(f.reason).toContain('bad.tar could not be read');
  });
});

describe('the .cache.json trap: the entry is the evidence, the table explains', () => {
  const refs = [ref('x/app:1', K3S)];

  it('an entry without names is not re-pinned before the fix, nor on an unknown release', () => {
    const old = fateOf(refs, [cached('a.tar', ['x/app:1'], null)], k3s('v1.32.5+k3s1'));
    expect(old).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
    expect(old.reason).toMatch(/v1\.32\.5\+k3s1 skips unchanged archives listed in .cache.json without re-pinning them \(fixed by k3s PR #14266 in v1\.37\.0, v1\.36\.3/);
    const unknown = fateOf(refs, [cached('a.tar', ['x/app:1'], null)], k3s(null));
    expect(unknown.afterRestart).toBe('unpinned');
    expect(unknown.reason).toMatch(/cannot tell whether k3s unknown version has the .cache.json fix/);
    expect(fateOf(refs, [cached('a.tar', ['x/app:1'], null)], k3s('v1.33.9+k3s1')).afterRestart).toBe('unpinned'); // 1.33 unconfirmed
  });

  it('a fixed release cannot re-pin from an entry that records no names (the old code said pinned)', () => {
    const f = fateOf(refs, [cached('a.tar', ['x/app:1'], null)], k3s('v1.37.1+k3s1'));
    expect(f).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
    expect(f.reason).toMatch(/re-pins the names .cache.json records, but the entry for a\.tar records none \(written before k3s PR #14266\)/);
  });

  it('an entry listing the reference is re-pinned, whatever the table says (the old code said lost)', () => {
    for (const v of ['v1.36.4+k3s1', 'v1.32.5+k3s1', null]) {
      const f = fateOf(refs, [cached('a.tar', ['x/app:1'], ['x/app:1'])], k3s(v));
      expect(f, String(v)).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
      expect(f.reason).toMatch(/re-pins the names its .cache.json entry records \(k3s PR #14266\)/);
    }
  });

  it('only the recorded names: a digest reference or a name added since is not re-pinned', () => {
    const all = [ref('x/app:1', K3S), ref(`x/app@${D}`, K3S)];
    const fates = predictFates(all, [cached('a.tar', ['x/app:1'], ['x/app:1'])], k3s('v1.37.0+k3s1'));
    expect(fates.get('x/app:1')!.afterRestart).toBe('pinned');
    const digest = fates.get(`x/app@${D}`)!;
    expect(digest.afterRestart).toBe('unpinned');
    expect(digest.reason).toMatch(/re-pins only the names its entry records, not this one/);
  });

  it('a recorded name makes a durable pin k3s-managed again', () => {
    const f = fateOf([ref('x/app:1', DURABLE)], [cached('a.tar', ['x/app:1'], ['x/app:1'])], k3s('v1.37.0+k3s1'));
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/k3s-managed again/);
  });

  it('a durable pin is not taken over by a cached, skipped archive', () => {
    const f = fateOf([ref('x/app:1', DURABLE)], [cached('a.tar', ['x/app:1'], null)], k3s('v1.32.5+k3s1'));
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/^Durable pin: k3s does not touch it \(a\.tar will not pin it again/);
  });

  it('an unreadable cache, an unreadable entry and a change within the recorded second say so', () => {
    expect(fateOf(refs, [cached('a.tar', ['x/app:1'], null, 'unreadable')], k3s('v1.37.0+k3s1')).reason).toMatch(/.cache.json cannot be read/);
    expect(fateOf(refs, [cached('a.tar', ['x/app:1'], null, 'unreadable-entry')], k3s('v1.37.0+k3s1')).reason).toMatch(/entry for a\.tar cannot be read/);
    const unsure = fateOf(refs, [cached('a.tar', ['x/app:1'], null, 'maybe-unchanged')], k3s('v1.36.2+k3s1'));
    expect(unsure.afterRestart).toBe('unpinned');
    expect(unsure.reason).toMatch(/changed within the second .cache.json records/);
  });

  it('a changed archive is re-imported even with the cache on', () => {
    const a: FateArchive = { ...arch('a.tar', ['x/app:1']), cache: { skipped: false, why: 'changed' } };
    expect(fateOf(refs, [a], k3s('v1.32.5+k3s1'))).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
  });
});

describe('releases that pin nothing (before k3s PR #8781)', () => {
  it('an image an archive brings is imported but not pinned; the release is named', () => {
    const f = fateOf([ref('x/app:1', {})], [arch('a.tar', ['x/app:1'])], k3s('v1.28.5+k3s1'));
    expect(f).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
    expect(f.reason).toMatch(/^k3s v1\.28\.5\+k3s1 does not pin the images it imports \(pins came with v1\.30\.0, v1\.29\.1, v1\.28\.6, v1\.27\.10, v1\.26\.13\): a\.tar is imported again but not pinned/);
  });
  it('nothing strips pins either: an existing pin stays', () => {
    const f = fateOf([ref('x/app:1', K3S)], [], k3s('v1.27.9+k3s1'));
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/predates k3s's pins/);
  });
});

describe('the start-up walk when the release is unknown', () => {
  it('an archive only one walk takes keeps no pin (the old code said pinned)', () => {
    const a: FateArchive = { ...arch('sub/a.tar', ['x/app:1']), walked: 'unknown' };
    const f = fateOf([ref('x/app:1', K3S)], [a], k3s(null));
    expect(f).toMatchObject({ afterRestart: 'unpinned', archive: 'sub/a.tar' });
    expect(f.reason).toMatch(/cannot tell whether sub\/a\.tar is imported at all/);
    // another archive both walks take still re-pins it
    expect(fateOf([ref('x/app:1', K3S)], [a, arch('b.tar', ['x/app:1'])], k3s(null))).toMatchObject({ afterRestart: 'pinned', archive: 'b.tar' });
  });
});

describe('.txt pre-pull lists', () => {
  const tag = ref('docker.io/library/busybox:latest', K3S);
  const sibling = ref('registry.local/mirror/busybox:1.36', K3S); // same image id: one of CRI's RepoTags
  const digest = ref(`docker.io/library/busybox@${D}`, K3S);
  const other = ref('docker.io/library/other:1', K3S, ID2);
  const refs = [tag, sibling, digest, other];

  it('a present image a list names is re-pinned with every tag of it and their digest refs (the old code said lost)', () => {
    const fates = predictFates(refs, [], k3s('v1.33.2+k3s1'), [list('busybox.txt', 'busybox\n')]);
    for (const r of [tag, sibling, digest]) {
      expect(fates.get(r.name), r.name).toMatchObject({ afterRestart: 'pinned', archive: 'busybox.txt' });
      expect(fates.get(r.name)!.reason).toMatch(/re-reads busybox\.txt at start and pins the images it names again/);
    }
    expect(fates.get(other.name)!.afterRestart).toBe('unpinned');
  });

  it('a list that also names an absent image pins nothing (the pull fails offline)', () => {
    const f = fateOf([tag], [], k3s('v1.33.2+k3s1'), [list('site.txt', 'busybox\nregistry.local/absent:1\n')]);
    expect(f).toMatchObject({ afterRestart: 'unpinned', archive: 'site.txt' });
    expect(f.reason).toMatch(/also names registry\.local\/absent:1, which is not in containerd/);
  });

  it('a list k3s fails on brings nothing back, and says so', () => {
    const f = fateOf([tag], [], k3s('v1.33.2+k3s1'), [list('big.txt', 'busybox\n' + 'x'.repeat(70 * 1024))]);
    expect(f.afterRestart).toBe('unpinned');
    expect(f.reason).toContain('big.txt could not be read');
  });

  it('.cache.json skips an unchanged list too: lost before the fix, re-pinned from its recorded names with it', () => {
    const skip = (images: string[] | null): Partial<FatePrepull> => ({ cachedByK3s: true, cache: { skipped: true, images, why: 'unchanged' } });
    const old = fateOf([tag], [], k3s('v1.36.2+k3s1'), [list('busybox.txt', 'busybox\n', skip(null))]);
    expect(old.afterRestart).toBe('unpinned');
    expect(old.reason).toMatch(/skips unchanged archives listed in .cache.json/);
    const fixed = fateOf([tag], [], k3s('v1.36.3+k3s1'), [list('busybox.txt', 'busybox\n', skip(['docker.io/library/busybox:latest']))]);
    expect(fixed).toMatchObject({ afterRestart: 'pinned', archive: 'busybox.txt' });
  });

  it('the sibling-tag trap: a durable tag that only shares its image with a listed one is taken over by k3s', () => {
    const durableSibling = ref('registry.local/mirror/busybox:1.36', DURABLE);
    const fates = predictFates([tag, durableSibling, other], [], k3s('v1.33.2+k3s1'), [list('busybox.txt', 'busybox\n')]);
    const f = fates.get(durableSibling.name)!;
    expect(f).toMatchObject({ afterRestart: 'pinned', archive: 'busybox.txt', listTrap: { list: 'busybox.txt', listed: 'docker.io/library/busybox:latest' } });
    expect(f.reason).toContain('busybox.txt names docker.io/library/busybox:latest, another tag of the same image');
    expect(f.reason).toContain('once busybox.txt is gone, the start after that strips it');
    // The listed tag itself and an unrelated durable image are no trap.
    expect(fates.get(tag.name)!.listTrap).toBeUndefined();
    expect(predictFates([tag, ref('x/other:1', DURABLE, ID2)], [], k3s(), [list('busybox.txt', 'busybox\n')]).get('x/other:1')!.listTrap).toBeUndefined();
    // A list that fails (an absent name) takes nothing over.
    expect(fateOf([durableSibling, tag], [], k3s(), [list('site.txt', 'busybox\nregistry.local/absent:1\n')]).listTrap).toBeUndefined();
    // An archive that brings the sibling by its own name speaks first (the old message).
    const both = fateOf([durableSibling, tag], [arch('m.tar', [durableSibling.name])], k3s(), [list('busybox.txt', 'busybox\n')]);
    expect(both).toMatchObject({ archive: 'm.tar' });
    expect(both.listTrap).toBeUndefined();
  });

  it('a durable pin named by a list becomes k3s-managed again', () => {
    const f = fateOf([ref('docker.io/library/busybox:latest', DURABLE)], [], k3s('v1.33.2+k3s1'), [list('busybox.txt', 'docker.io/library/busybox:latest\n')]);
    expect(f.reason).toMatch(/k3s-managed again: remove busybox\.txt/);
  });
});
