// The images table's view model (src/renderer/model/images.ts): grouping, counts, search,
// filter, sort and each image's fate at the next k3s start.
import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../../src/shared/domain/images';
import { atRiskGroups, countByPin, filterGroups, groupImages, isUnverifiedGroup, matchesQuery, sortGroups, sortPlatforms } from '../../../../src/renderer/model/images';

const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
/** A reference whose labels say what its pin state says (as shared/pinState reads them). */
function ref(p: Partial<ImageRef> & Pick<ImageRef, 'name'>): ImageRef {
  const pin = p.pin ?? 'none';
  return {
    digest: D('d'),
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: D('1'),
    size: 100,
    platforms: ['linux/amd64'],
    createdAt: null,
    labels: pin === 'durable' ? CRI : pin === 'distro' ? { ...CRI, 'io.cattle.k3s.pinned': 'pinned' } : {},
    pin,
    afterRestart: 'unpinned',
    reason: 'Not pinned.',
    archive: null,
    ...p,
  };
}

const images: ImageRef[] = [
  ref({ name: `docker.io/library/nginx@${D('a')}`, digest: D('a'), imageId: D('4'), size: 500, pin: 'durable', createdAt: '2024-01-02T00:00:00Z' }),
  ref({ name: 'docker.io/library/nginx:1.27', digest: D('a'), imageId: D('4'), size: 500, pin: 'durable', createdAt: '2024-01-02T00:00:00Z' }),
  ref({ name: 'docker.io/rancher/pause:3.6', digest: D('b'), imageId: D('6'), size: 10, pin: 'distro', createdAt: '2021-01-01T00:00:00Z' }),
  ref({ name: 'acme/agent:2', digest: D('c'), imageId: D('9'), size: 9000, labels: { vendor: 'Acme Field' } }),
  ref({ name: 'broken:1', digest: D('e'), imageId: null, size: 0 }),
];

describe('groupImages', () => {
  const groups = groupImages(images);

  it('puts references with one image id in one group, tags before digest refs', () => {
    expect(groups).toHaveLength(4);
    const nginx = groups.find((g) => g.imageId === D('4'))!;
    expect(nginx.refs.map((r) => [r.name, r.kind])).toEqual([
      ['docker.io/library/nginx:1.27', 'tag'],
      [`docker.io/library/nginx@${D('a')}`, 'digest'],
    ]);
    expect(nginx.primaryName).toBe('docker.io/library/nginx:1.27');
    expect(nginx.pin).toBe('durable');
    expect(nginx.mixedPins).toBe(false);
  });

  it('keeps records without an image id apart, keyed by their digest', () => {
    const broken = groups.find((g) => g.imageId === null)!;
    expect(broken.key).toBe(D('e'));
  });

  it('an image is durable if any reference is (CRI semantics), and flags mixed pins', () => {
    const [g] = groupImages([
      ref({ name: 'x:1', imageId: D('7'), pin: 'distro' }),
      ref({ name: 'x:2', imageId: D('7'), pin: 'durable' }),
      ref({ name: 'x:3', imageId: D('7'), pin: 'none' }),
    ]);
    expect(g!.pin).toBe('durable');
    expect(g!.mixedPins).toBe(true);
    expect(groupImages([ref({ name: 'y:1', pin: 'none' }), ref({ name: 'y:2', pin: 'distro' })])[0]!.pin).toBe('distro');
  });

  it("CRI's unlabelled id record neither weakens nor mixes the pin; the fields merge over every reference", () => {
    const [g] = groupImages([
      ref({ name: 'z:1', imageId: D('8'), digest: D('b'), pin: 'durable', size: 10, createdAt: '2025-02-01T00:00:00Z', platforms: ['linux/arm/v7', 'linux/arm64'], labels: { a: '1' } }),
      ref({ name: D('8'), imageId: D('8'), digest: D('c'), pin: 'none', size: 30, createdAt: '2025-01-01T00:00:00Z', platforms: ['linux/amd64', 'linux/arm64'], labels: { b: '2' } }),
      ref({ name: `z@${D('b')}`, imageId: D('8'), digest: D('b'), pin: 'durable', size: 20, createdAt: null, platforms: [], labels: { a: '3' } }),
    ]);
    expect(g).toMatchObject({ pin: 'durable', mixedPins: false, size: 30, createdAt: '2025-01-01T00:00:00Z', digests: [D('b'), D('c')], labels: { a: '3', b: '2' } });
    expect(g!.platforms).toEqual(['linux/amd64', 'linux/arm64', 'linux/arm/v7']);
    expect(g!.refs.map((r) => r.kind)).toEqual(['tag', 'digest', 'id']);
    // Only CRI's record: its own (absent) pin is the image's.
    expect(groupImages([ref({ name: D('9'), imageId: D('9'), pin: 'none' })])[0]).toMatchObject({ pin: 'none', mixedPins: false });
  });

  it('counts per pin state', () => {
    expect(countByPin(groups)).toEqual({ all: 4, durable: 1, distro: 1, none: 2, atRisk: 2 });
  });
});

describe('filterGroups', () => {
  const groups = groupImages(images);
  const names = (q: string, pin: 'all' | 'durable' | 'distro' | 'none' = 'all') =>
    filterGroups(groups, q, pin).map((g) => g.primaryName);

  it('matches reference names, digests, image ids and labels, case-insensitively', () => {
    expect(names('NGINX')).toEqual(['docker.io/library/nginx:1.27']);
    expect(names('bbbbbbbb')).toEqual(['docker.io/rancher/pause:3.6']); // digest
    expect(names(D('9').slice(0, 15))).toEqual(['acme/agent:2']); // image id
    expect(names('acme field')).toEqual(['acme/agent:2']); // label value
    expect(names('vendor=Acme')).toEqual(['acme/agent:2']);
    expect(names('  ')).toHaveLength(4);
  });

  it('combines search and pin filter', () => {
    expect(names('', 'distro')).toEqual(['docker.io/rancher/pause:3.6']);
    expect(names('nginx', 'none')).toEqual([]);
  });
});

describe('sortGroups', () => {
  const groups = groupImages(images);
  const order = (key: 'name' | 'size' | 'created', dir: 'asc' | 'desc') => sortGroups(groups, key, dir).map((g) => g.primaryName);

  it('sorts by name, size and created; unknown dates last in both directions', () => {
    expect(order('name', 'asc')[0]).toBe('acme/agent:2');
    expect(order('size', 'desc')).toEqual(['acme/agent:2', 'docker.io/library/nginx:1.27', 'docker.io/rancher/pause:3.6', 'broken:1']);
    expect(order('created', 'asc').slice(0, 2)).toEqual(['docker.io/rancher/pause:3.6', 'docker.io/library/nginx:1.27']);
    expect(order('created', 'desc').slice(0, 2)).toEqual(['docker.io/library/nginx:1.27', 'docker.io/rancher/pause:3.6']);
    expect(order('created', 'desc').slice(2).sort()).toEqual(['acme/agent:2', 'broken:1']);
  });

  it('the precomputed name order is the collator order, also for a filtered list and for groups of two groupings', () => {
    const many = groupImages(
      ['b-2:1', 'B-10:1', 'a.1:1', 'a_1:1', 'Ä:1', 'a:1', 'z:1', '1:1'].map((name, i) => ref({ name, digest: D(String(i)), imageId: D(String(i)) })),
    );
    const collator = new Intl.Collator();
    const byCollator = (list: readonly { primaryName: string }[]) => list.map((g) => g.primaryName).sort((a, b) => collator.compare(a, b));
    expect(sortGroups(many, 'name', 'asc').map((g) => g.primaryName)).toEqual(byCollator(many));
    expect(sortGroups(many, 'name', 'desc').map((g) => g.primaryName)).toEqual(byCollator(many).reverse());
    const some = filterGroups(many, 'a', 'all');
    expect(sortGroups(some, 'name', 'asc').map((g) => g.primaryName)).toEqual(byCollator(some));
    const mixed = [...groupImages([ref({ name: 'm:1' })]), ...many];
    expect(sortGroups(mixed, 'name', 'asc').map((g) => g.primaryName)).toEqual(byCollator(mixed));
  });
});

describe('search text (built once per group)', () => {
  it('a term never matches across two fields, and the same group answers the same for every term', () => {
    const [g] = groupImages([ref({ name: 'acme/agent:2', labels: { vendor: 'Acme Field' } })]);
    expect(matchesQuery(g!, 'agent:2')).toBe(true);
    expect(matchesQuery(g!, `:2${D('d').slice(0, 4)}`)).toBe(false); // end of the name + start of the digest
    expect(matchesQuery(g!, 'ACME FIELD')).toBe(true);
    expect(matchesQuery(g!, 'vendor=acme')).toBe(true);
    expect(matchesQuery(g!, 'field\nvendor')).toBe(false);
    expect(matchesQuery(g!, 'nginx')).toBe(false);
  });
});

describe('platforms', () => {
  it('the common ones first, then the rest alphabetically', () => {
    expect(sortPlatforms(['linux/386', 'linux/arm64', 'linux/amd64', 'linux/arm/v7'])).toEqual([
      'linux/amd64',
      'linux/arm64',
      'linux/386',
      'linux/arm/v7',
    ]);
  });
});

describe('fate at the next k3s start (the shared protection model, per image id)', () => {
  it('a group is kept if any reference keeps its pin (containerd ≥ 1.7.10); its reason names the deciding reference', () => {
    const groups = groupImages([
      ref({ name: 'a:1', imageId: D('a'), pin: 'distro', afterRestart: 'unpinned', reason: 'lost: no archive' }),
      ref({ name: `a@${D('f')}`, imageId: D('a'), pin: 'distro', afterRestart: 'pinned', reason: 'kept: a.tar', archive: 'a.tar' }),
      ref({ name: 'b:1', imageId: D('b'), pin: 'distro', afterRestart: 'unpinned', reason: 'lost: cache', archive: 'b.tar' }),
      ref({ name: 'c:1', imageId: D('c'), pin: 'none', afterRestart: 'unpinned', reason: 'never pinned' }),
      ref({ name: 'g:1', imageId: D('9'), pin: 'none', afterRestart: 'pinned', reason: 'g.tar re-pins it' }),
    ]);
    const [a, b, c, g] = groups;
    expect(a).toMatchObject({ fate: 'kept', afterRestart: 'pinned', archive: 'a.tar' });
    expect(a!.reason).toMatch(new RegExp(`through a@${D('f')}\\. a@${D('f')}: kept: a\\.tar`));
    expect(a!.refs.map((r) => r.fate)).toEqual(['drops', 'kept']);
    expect(b).toMatchObject({ fate: 'lose', archive: 'b.tar' });
    expect(b!.reason).toMatch(/b:1: lost: cache/);
    expect(c).toMatchObject({ fate: 'none', archive: null });
    expect(g).toMatchObject({ fate: 'gain' });
    expect(countByPin(groups).atRisk).toBe(1);
    expect(atRiskGroups(groups).map((x) => x.primaryName)).toEqual(['b:1']);
    expect(filterGroups(groups, '', 'atRisk').map((x) => x.primaryName)).toEqual(['b:1']);
  });

  // Issue #16: after the import race the tag was durable and the digest reference k3s added after
  // its labels still k3s-pinned. The CLI said "loses its pin", the app "Kept": both now ask the
  // one model, whose answer depends on the node's containerd.
  const raced = [
    ref({ name: 'registry.local/app:3', imageId: D('3'), pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin: k3s never touches it.' }),
    ref({ name: `registry.local/app@${D('5')}`, imageId: D('3'), pin: 'distro', afterRestart: 'unpinned', reason: 'k3s strips this pin at start' }),
  ];
  it('the raced image is kept on containerd ≥ 1.7.10 (its digest reference shows "own pin goes")', () => {
    const [g] = groupImages(raced, 'any');
    expect(g).toMatchObject({ fate: 'kept' });
    expect(g!.refs.map((r) => [r.name, r.fate])).toEqual([
      ['registry.local/app:3', 'kept'],
      [`registry.local/app@${D('5')}`, 'drops'],
    ]);
  });

  it('the raced image loses its pin on 1.7.3–1.7.9, where every reference must carry it', () => {
    const [g] = groupImages(raced, 'first-loaded');
    expect(g).toMatchObject({ fate: 'lose' });
    expect(g!.reason).toMatch(/whichever reference CRI loaded first/);
    expect(g!.refs.map((r) => r.fate)).toEqual(['kept', 'lose']);
    expect(countByPin([g!]).atRisk).toBe(1);
  });

  it('nothing is pinned, nor at risk, on a containerd without CRI pinning', () => {
    const [g] = groupImages(raced, 'none');
    expect(g).toMatchObject({ fate: 'none' });
    expect(g!.reason).toMatch(/no CRI image pinning/);
  });
});

describe('signatures in the images table (#48)', () => {
  const AT = '2026-12-08T10:00:00Z';
  const verified = { verified: true as const, by: '3f1c2a4b'.padEnd(64, '0'), format: 'bundle' as const, at: AT };
  const refused = { verified: false as const, reason: 'no signature', at: AT };
  const signed: ImageRef[] = [
    // CRI's sha256:<id> record carries no labels: the image's verdict is its tag's.
    ref({ name: 'lab.local/web:1', digest: D('a'), imageId: D('4'), signature: verified }),
    ref({ name: D('4'), digest: D('a'), imageId: D('4'), signature: null }),
    ref({ name: 'lab.local/worker:1', digest: D('b'), imageId: D('6'), signature: refused }),
    ref({ name: 'lab.local/old:1', digest: D('c'), imageId: D('9') }),
  ];
  const groups = groupImages(signed);
  const byName = (n: string) => groups.find((g) => g.primaryName === n)!;

  it("each image carries its references' verdict: verified, refused, or none", () => {
    expect(byName('lab.local/web:1').signature).toEqual(verified);
    expect(byName('lab.local/worker:1').signature).toEqual(refused);
    expect(byName('lab.local/old:1').signature).toBeNull();
  });

  it('"Not verified" keeps the refused and the never verified, on top of the pin filter', () => {
    expect(groups.filter(isUnverifiedGroup).map((g) => g.primaryName).sort()).toEqual(['lab.local/old:1', 'lab.local/worker:1']);
    expect(filterGroups(groups, 'worker', 'all', true).map((g) => g.primaryName)).toEqual(['lab.local/worker:1']);
    expect(filterGroups(groups, '', 'durable', true)).toEqual([]);
    expect(filterGroups(groups, '', 'all')).toHaveLength(3);
  });
});
