import { describe, expect, it } from 'vitest';
import { parsePrepullList } from '../../../src/core/archives/prepull';
import { cacheVerdict, type CacheVerdict, type K3sCacheEntry } from '../../../src/shared/importCache';
import { predictFates, type FateArchive, type FateContext, type FatePrepull, type FateRef } from '../../../src/shared/fate';

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
const DIR = '/var/lib/rancher/k3s/agent/images';
/** The file now, against an entry recorded at size 100, second 1000 (nanos null: the node did not tell). */
type Now = { size?: number; mtime?: number; nanos?: number | null };
/** What the one rule (shared/importCache) says of a file whose entry records `images` (null: none), on `version`. */
const verdict = (path: string, images: string[] | null, version: string | null, now: Now = {}): CacheVerdict => {
  const entry: K3sCacheEntry = { size: 100, modTime: 1000, modTimeNanos: 0, images };
  const cache = { enabled: true, readable: true, entries: new Map([[`${DIR}/${path}`, entry]]) };
  return cacheVerdict(cache, { abs: `${DIR}/${path}`, size: now.size ?? 100, mtime: now.mtime ?? 1000, mtimeNanos: now.nanos === undefined ? 0 : now.nanos }, version);
};
/** An archive bringing `names`, with a .cache.json entry judged for `version`. */
const recorded = (path: string, names: string[], images: string[] | null, version: string | null, now: Now = {}): FateArchive => {
  const cache = verdict(path, images, version, now);
  return { ...arch(path, names, cache.skipped), cache };
};
/** An archive with a verdict Holdfast made without the rule (an unreadable cache or entry). */
const unreadable = (path: string, names: string[], why: 'unreadable' | 'unreadable-entry'): FateArchive => ({
  ...arch(path, names, true),
  cache: { skipped: true, repins: [], recorded: null, why, rule: 'with-fix' },
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

describe('the .cache.json rules as k3s applies them (measured on its own start-up code)', () => {
  const refs = [ref('x/app:1', K3S)];
  const FIXED = 'v1.37.0+k3s1';

  it('without the fix, a same-size file is skipped and nothing re-pinned, names recorded or not', () => {
    for (const images of [null, ['x/app:1']]) {
      for (const v of ['v1.32.5+k3s1', 'v1.33.7+k3s1']) {
        const f = fateOf(refs, [recorded('a.tar', ['x/app:1'], images, v)], k3s(v));
        expect(f, `${v} ${String(images)}`).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
        expect(f.reason).toMatch(/skips a\.tar \(same size in .cache.json\) and re-pins nothing it skips \(fixed by k3s PR #14266 in v1\.37\.0, v1\.36\.3/);
      }
    }
    // The old forecast called a recorded name re-pinned on this release: k3s ignores the list.
    expect(fateOf(refs, [recorded('a.tar', ['x/app:1'], ['x/app:1'], 'v1.33.7+k3s1')], k3s('v1.33.7+k3s1')).reason).toMatch(/the names its entry records are ignored by this release/);
  });

  it('an unknown release without recorded names: assumed lost, and said why', () => {
    for (const v of [null, 'v1.33.13+k3s1']) {
      const f = fateOf(refs, [recorded('a.tar', ['x/app:1'], null, v)], k3s(v));
      expect(f.afterRestart).toBe('unpinned');
      expect(f.reason).toMatch(/cannot tell whether k3s .* has the .cache.json fix/);
    }
  });

  it('with the fix, an entry that records no names is re-imported: every pin kept (the old forecast said lost)', () => {
    const f = fateOf(refs, [recorded('a.tar', ['x/app:1'], null, FIXED)], k3s(FIXED));
    expect(f).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
    expect(f.reason).toMatch(/re-imports a\.tar at start and pins it again \(its .cache.json entry records no images\)/);
  });

  it('with the fix, a sub-second mtime is later than the whole-second record: re-imported, digest reference too', () => {
    const all = [ref('x/app:1', K3S), ref(`x/app@${D}`, K3S)];
    const fates = predictFates(all, [recorded('a.tar', ['x/app:1'], ['x/app:1'], FIXED, { nanos: 250_000_000 })], k3s(FIXED));
    for (const r of all) expect(fates.get(r.name), r.name).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
    expect(fates.get('x/app:1')!.reason).toMatch(/later than the whole second .cache.json records/);
  });

  it('with the fix and a whole-second mtime, only the recorded names: a digest reference is not re-pinned', () => {
    const all = [ref('x/app:1', K3S), ref(`x/app@${D}`, K3S)];
    const fates = predictFates(all, [recorded('a.tar', ['x/app:1'], ['x/app:1'], FIXED)], k3s(FIXED));
    expect(fates.get('x/app:1')!).toMatchObject({ afterRestart: 'pinned' });
    expect(fates.get('x/app:1')!.reason).toMatch(/re-pins the names its .cache.json entry records \(k3s PR #14266\)/);
    const digest = fates.get(`x/app@${D}`)!;
    expect(digest.afterRestart).toBe('unpinned');
    expect(digest.reason).toMatch(/re-pins only the names its entry records, not its digest references/);
  });

  it('an unknown release with recorded names: the entry is the evidence of the fix', () => {
    expect(fateOf(refs, [recorded('a.tar', ['x/app:1'], ['x/app:1'], null)], k3s(null))).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
  });

  it('a same-size replacement with an older mtime: k3s re-pins the OLD recorded names, not what the file holds now', () => {
    const oldTag = ref('x/app:1', K3S);
    const newTag = ref('x/app:2', K3S, ID2);
    const replaced = recorded('a.tar', ['x/app:2'], ['x/app:1'], FIXED, { mtime: 900 });
    const fates = predictFates([oldTag, newTag], [{ ...replaced, images: [{ name: 'x/app:2', imageId: ID2 }] }], k3s(FIXED));
    expect(fates.get('x/app:1')!).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
    expect(fates.get('x/app:2')!).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
    expect(fates.get('x/app:2')!.reason).toMatch(/re-pins only the names its entry records, not this one/);
  });

  it('a recorded name makes a durable pin k3s-managed again', () => {
    const f = fateOf([ref('x/app:1', DURABLE)], [recorded('a.tar', ['x/app:1'], ['x/app:1'], FIXED)], k3s(FIXED));
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/k3s-managed again/);
  });

  it('a durable pin is not taken over by a cached, skipped archive', () => {
    const f = fateOf([ref('x/app:1', DURABLE)], [recorded('a.tar', ['x/app:1'], null, 'v1.32.5+k3s1')], k3s('v1.32.5+k3s1'));
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/^Durable pin: k3s does not touch it \(a\.tar will not pin it again/);
  });

  it('an unreadable cache, an unreadable entry and a change the node could not time to the nanosecond say so', () => {
    expect(fateOf(refs, [unreadable('a.tar', ['x/app:1'], 'unreadable')], k3s(FIXED)).reason).toMatch(/.cache.json cannot be read/);
    expect(fateOf(refs, [unreadable('a.tar', ['x/app:1'], 'unreadable-entry')], k3s(FIXED)).reason).toMatch(/entry for a\.tar cannot be read/);
    const unsure = fateOf(refs, [recorded('a.tar', ['x/app:1'], null, 'v1.36.2+k3s1', { size: 101, nanos: null })], k3s('v1.36.2+k3s1'));
    expect(unsure.afterRestart).toBe('unpinned');
    expect(unsure.reason).toMatch(/the node did not tell a\.tar's mtime to the nanosecond/);
  });

  it('a changed archive (new size, newer mtime) is re-imported on every release', () => {
    for (const v of ['v1.32.5+k3s1', FIXED, null]) {
      expect(fateOf(refs, [recorded('a.tar', ['x/app:1'], null, v, { size: 200, mtime: 2000 })], k3s(v))).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
    }
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
    const skip = (images: string[] | null, v: string): Partial<FatePrepull> => {
      const cache = verdict('busybox.txt', images, v);
      return { cachedByK3s: cache.skipped, cache };
    };
    const old = fateOf([tag], [], k3s('v1.36.2+k3s1'), [list('busybox.txt', 'busybox\n', skip(null, 'v1.36.2+k3s1'))]);
    expect(old.afterRestart).toBe('unpinned');
    expect(old.reason).toMatch(/skips busybox\.txt \(same size in .cache.json\) and re-pins nothing it skips/);
    const fixed = fateOf([tag], [], k3s('v1.36.3+k3s1'), [list('busybox.txt', 'busybox\n', skip(['docker.io/library/busybox:latest'], 'v1.36.3+k3s1'))]);
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
