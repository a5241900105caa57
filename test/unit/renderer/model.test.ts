import { describe, expect, it } from 'vitest';
import type { ImageRef, Job } from '../../../src/shared/domain';
import {
  humanEta,
  humanRate,
  isAbsoluteLocalPath,
  jobsSummary,
  nodeProgress,
  parsePathInput,
  phasesFor,
  sortJobs,
  countByPin,
  displayRef,
  fleetPinVerdict,
  filterGroups,
  formatDate,
  groupImages,
  humanSize,
  refKind,
  shortId,
  splitRef,
  splitRepo,
  matchesQuery,
  sortGroups,
  sortPlatforms,
} from '../../../src/renderer/model';

const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
/** A reference whose labels say what its pin state says (as core/images/pinState reads them). */
function ref(p: Partial<ImageRef> & Pick<ImageRef, 'name'>): ImageRef {
  const pin = p.pin ?? 'none';
  return {
    digest: D('d'),
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: D('1'),
    size: 100,
    platforms: ['linux/amd64'],
    createdAt: null,
    labels: pin === 'durable' ? CRI : pin === 'k3s' ? { ...CRI, 'io.cattle.k3s.pinned': 'pinned' } : {},
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
  ref({ name: 'docker.io/rancher/pause:3.6', digest: D('b'), imageId: D('6'), size: 10, pin: 'k3s', createdAt: '2021-01-01T00:00:00Z' }),
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
      ref({ name: 'x:1', imageId: D('7'), pin: 'k3s' }),
      ref({ name: 'x:2', imageId: D('7'), pin: 'durable' }),
      ref({ name: 'x:3', imageId: D('7'), pin: 'none' }),
    ]);
    expect(g!.pin).toBe('durable');
    expect(g!.mixedPins).toBe(true);
    expect(groupImages([ref({ name: 'y:1', pin: 'none' }), ref({ name: 'y:2', pin: 'k3s' })])[0]!.pin).toBe('k3s');
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
    expect(countByPin(groups)).toEqual({ all: 4, durable: 1, k3s: 1, none: 2, atRisk: 2 });
  });
});

describe('filterGroups', () => {
  const groups = groupImages(images);
  const names = (q: string, pin: 'all' | 'durable' | 'k3s' | 'none' = 'all') =>
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
    expect(names('', 'k3s')).toEqual(['docker.io/rancher/pause:3.6']);
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

describe('references split for a narrow cell', () => {
  it('keeps the tag or digest apart, and the image name apart from its registry and path', () => {
    expect(splitRef('docker.io/rancher/mirrored-coredns-coredns:1.12.0')).toEqual(['docker.io/rancher/mirrored-coredns-coredns', ':1.12.0']);
    expect(splitRef('registry.site.lan:5000/acme/agent@sha256:abc')).toEqual(['registry.site.lan:5000/acme/agent', '@sha256:abc']);
    expect(splitRef('registry.site.lan:5000/acme/agent')).toEqual(['registry.site.lan:5000/acme/agent', '']);
    // A tag and a digest both stay whole; CRI's id record has no repository to cut.
    expect(splitRef('docker.io/rancher/mirrored-pause:3.6@sha256:abc')).toEqual(['docker.io/rancher/mirrored-pause', ':3.6@sha256:abc']);
    expect(splitRef(D('8'))).toEqual([D('8'), '']);
    expect(splitRepo('docker.io/rancher/mirrored-coredns-coredns')).toEqual(['docker.io/rancher/', 'mirrored-coredns-coredns']);
    expect(splitRepo('registry.site.lan:5000/acme/agent')).toEqual(['registry.site.lan:5000/acme/', 'agent']);
    expect(splitRepo('busybox')).toEqual(['', 'busybox']);
    expect(splitRepo('sha256:80d331785726')).toEqual(['', 'sha256:80d331785726']);
  });
});

describe('formatting', () => {
  it('humanSize uses binary units', () => {
    expect(humanSize(0)).toBe('0 B');
    expect(humanSize(1023)).toBe('1023 B');
    expect(humanSize(1536)).toBe('1.5 KiB');
    expect(humanSize(72_405_113)).toBe('69.1 MiB');
    expect(humanSize(148_211_004)).toBe('141 MiB');
    expect(humanSize(-1)).toBe('—');
  });

  it('shortId, displayRef, refKind, formatDate, sortPlatforms', () => {
    expect(shortId(D('4'))).toBe('444444444444');
    expect(shortId(null)).toBe('—');
    expect(displayRef(`a/b@${D('a')}`)).toBe('a/b@sha256:aaaaaaaaaaaa…');
    expect(displayRef('a/b:1')).toBe('a/b:1');
    expect(refKind(`a/b@${D('a')}`)).toBe('digest');
    expect(refKind('localhost:5000/a:1')).toBe('tag');
    expect(formatDate(null)).toBe('—');
    expect(formatDate('garbage')).toBe('—');
    expect(formatDate('2024-11-26T12:00:00Z')).toBe('2024-11-26');
    expect(sortPlatforms(['linux/386', 'linux/arm64', 'linux/amd64', 'linux/arm/v7'])).toEqual([
      'linux/amd64',
      'linux/arm64',
      'linux/386',
      'linux/arm/v7',
    ]);
  });
});

describe('fate at the next k3s start (the shared protection model, per image id)', () => {
  it('a group is kept if any reference keeps its pin (containerd ≥ 1.7.10); its reason names the deciding reference', async () => {
    const { countByPin, atRiskGroups } = await import('../../../src/renderer/model');
    const groups = groupImages([
      ref({ name: 'a:1', imageId: D('a'), pin: 'k3s', afterRestart: 'unpinned', reason: 'lost: no archive' }),
      ref({ name: `a@${D('f')}`, imageId: D('a'), pin: 'k3s', afterRestart: 'pinned', reason: 'kept: a.tar', archive: 'a.tar' }),
      ref({ name: 'b:1', imageId: D('b'), pin: 'k3s', afterRestart: 'unpinned', reason: 'lost: cache', archive: 'b.tar' }),
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
    ref({ name: `registry.local/app@${D('5')}`, imageId: D('3'), pin: 'k3s', afterRestart: 'unpinned', reason: 'k3s strips this pin at start' }),
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

describe('label diffs, pin from labels, audit order', () => {
  it('diffLabels lists only what changes', async () => {
    const { diffLabels } = await import('../../../src/renderer/model');
    expect(
      diffLabels(
        { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned', x: '1' },
        { 'io.cri-containerd.pinned': 'pinned', x: '2', y: 'new' },
      ),
    ).toEqual([
      { key: 'io.cattle.k3s.pinned', before: 'pinned', kind: 'removed' },
      { key: 'x', before: '1', after: '2', kind: 'changed' },
      { key: 'y', after: 'new', kind: 'added' },
    ]);
  });

  it('pinFromLabels: a distro label wins; the CRI label alone is durable', async () => {
    const { pinFromLabels } = await import('../../../src/renderer/model');
    expect(pinFromLabels({ 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' })).toBe('k3s');
    expect(pinFromLabels({ 'io.cattle.rke2.pinned': 'pinned' })).toBe('k3s');
    expect(pinFromLabels({ 'io.cri-containerd.pinned': 'pinned' })).toBe('durable');
    expect(pinFromLabels({ 'io.cri-containerd.image': 'managed' })).toBe('none');
  });

  it('sortAudit: newest first, later entry first on equal times, unreadable times last', async () => {
    const { sortAudit } = await import('../../../src/renderer/model');
    const e = (time: string, note: string) => ({ time, user: 'u', node: 'n', action: 'pin' as const, note });
    const out = sortAudit([e('2025-01-01T00:00:00Z', 'old'), e('bad', 'bad'), e('2025-02-01T00:00:00Z', 'new1'), e('2025-02-01T00:00:00Z', 'new2')]);
    expect(out.map((x) => x.note)).toEqual(['new2', 'new1', 'old', 'bad']);
  });
});

describe('import jobs', () => {
  const mk = (id: string, state: Job['state'], createdAt: string, progress = 0.5): Job => ({
    id,
    kind: 'import',
    title: id,
    state,
    createdAt,
    finishedAt: null,
    progress,
    nodes: [],
    archive: { path: '/a.tar', size: 1, sha256: null },
    options: { pin: true, removeArchive: true },
  });

  it('ETA and rate read like a person would say them', () => {
    expect(humanEta(null)).toBe('—');
    expect(humanEta(4.2)).toBe('5 s');
    expect(humanEta(125)).toBe('2 min 05 s');
    expect(humanEta(3 * 3600 + 180)).toBe('3 h 03 min');
    expect(humanRate(0)).toBe('—');
    expect(humanRate(5 * 1024 * 1024)).toBe('5 MiB/s');
  });

  it('path input: one per line, quotes dropped; only absolute paths count', () => {
    expect(parsePathInput(' "/a b/x.tar" \n\n\'/y.tar.gz\'\r\n/z.tzst ')).toEqual(['/a b/x.tar', '/y.tar.gz', '/z.tzst']);
    expect(isAbsoluteLocalPath('/x.tar')).toBe(true);
    expect(isAbsoluteLocalPath('C:\\bundles\\x.tar')).toBe(true);
    expect(isAbsoluteLocalPath('bundles/x.tar')).toBe(false);
  });

  it('phases follow the options', () => {
    expect(phasesFor({ pin: true, removeArchive: true })).toEqual(['checking', 'uploading', 'verifying', 'importing', 'pinning', 'removing', 'done']);
    expect(phasesFor({ pin: false, removeArchive: false })).toEqual(['checking', 'uploading', 'verifying', 'importing', 'done']);
  });

  it('running jobs first, newest first; the indicator averages the running ones', () => {
    const jobs = [mk('old-done', 'succeeded', '2026-01-01T00:00:00Z'), mk('new-run', 'running', '2026-01-03T00:00:00Z', 0.2), mk('old-run', 'running', '2026-01-02T00:00:00Z', 0.6), mk('new-fail', 'failed', '2026-01-04T00:00:00Z')];
    expect(sortJobs(jobs).map((j) => j.id)).toEqual(['new-run', 'old-run', 'new-fail', 'old-done']);
    expect(jobsSummary(jobs)).toEqual({ running: 2, finished: 2, failed: 1, progress: 0.4 });
    expect(jobsSummary([]).running).toBe(0);
  });

  it('a node uploading half its bytes is a bit under half way', () => {
    const n = { node: 'a', state: 'running' as const, phase: 'uploading' as const, bytesDone: 50, bytesTotal: 100, rate: 1, eta: 1, message: '' };
    expect(nodeProgress(n)).toBeCloseTo(0.425);
    expect(nodeProgress({ ...n, state: 'succeeded', phase: 'done' })).toBe(1);
    expect(nodeProgress({ ...n, phase: 'importing' })).toBe(0.85);
  });
});

describe('fleet banner verdict', () => {
  const loaded = (atRisk: number) => ({ connection: 'connected', images: { state: 'ready', loadedAt: 1 }, atRisk });
  it('never claims an all-clear while a connected node\'s images are not in', () => {
    expect(fleetPinVerdict([loaded(0), { connection: 'connected', images: { state: 'loading' }, atRisk: 0 }])).toEqual({ kind: 'loading', nodes: 1 });
    expect(fleetPinVerdict([loaded(0), { connection: 'connected', images: { state: 'error' }, atRisk: 0 }])).toEqual({ kind: 'unknown', nodes: 1 });
    expect(fleetPinVerdict([loaded(0), { connection: 'error', images: { state: 'idle' }, atRisk: 0 }])).toEqual({ kind: 'all-clear' });
    expect(fleetPinVerdict([{ connection: 'connecting', images: { state: 'idle' }, atRisk: 0 }])).toEqual({ kind: 'nothing' });
  });

  it('reports images at risk as soon as one node has them, and how many nodes are still loading', () => {
    expect(fleetPinVerdict([loaded(2), loaded(1), { connection: 'connected', images: { state: 'loading' }, atRisk: 0 }])).toEqual({ kind: 'at-risk', images: 3, nodes: 2, pending: 1 });
  });
});
