// Grouping references into images and finding the images containers name (core/disk/store).
import { describe, expect, it } from 'vitest';
import { buildStore, imageOfContainer, type TargetFacts } from '../../../../src/core/disk/store';
import { parseDfLines } from '../../../../src/core/disk/fileSystems';
import type { ImageRef } from '../../../../src/shared/domain/images';

const h = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;
const ref = (name: string, over: Partial<ImageRef> = {}): ImageRef => ({
  name,
  digest: h('d'),
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: h('1'),
  size: 0,
  platforms: ['linux/amd64'],
  createdAt: '2025-01-01T00:00:00.000Z',
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason: '',
  archive: null,
  ...over,
});

describe('buildStore', () => {
  const refs = [
    ref('docker.io/library/app:1.0'),
    ref(`docker.io/library/app@${h('d')}`),
    ref(h('1'), { labels: { 'io.cri-containerd.image': 'managed' } }),
    ref('docker.io/library/app:0.9', { digest: h('e'), imageId: h('2'), labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable' }),
  ];
  const facts = new Map<string, TargetFacts>([
    [h('d'), { blobs: [h('d'), 'cfg1', 'base', 'l1'], criSize: 60, configCreated: '2024-12-01T00:00:00Z' }],
    [h('e'), { blobs: [h('e'), 'cfg2', 'base'], criSize: 50, configCreated: null }],
  ]);
  const sizes = { [h('d')]: 1, [h('e')]: 1, cfg1: 2, cfg2: 2, base: 40, l1: 17 };
  const records = refs.map((r) => ({ name: r.name, labels: r.labels, target: { mediaType: r.mediaType, digest: r.digest, size: 1, annotations: {} }, createdAt: new Date('2025-01-01T00:00:00Z'), updatedAt: r.name.endsWith(':1.0') ? new Date('2025-02-02T00:00:00Z') : new Date('2025-01-01T00:00:00Z') }));
  const c = (id: string, image: string, kind?: string) => ({ id, image, labels: (kind ? { 'io.cri-containerd.kind': kind } : {}) as Record<string, string>, runtime: 'io.containerd.runc.v2', createdAt: null, updatedAt: null });

  it('groups every reference with one image id (CRI’s id record included) and sizes it by its own blobs', () => {
    const { images } = buildStore({ refs, records, containers: [], criPinning: 'any' }, facts, sizes);
    expect(images.map((i) => [i.key, i.refs])).toEqual([
      [h('2'), ['docker.io/library/app:0.9']],
      [h('1'), ['docker.io/library/app:1.0', `docker.io/library/app@${h('d')}`, h('1')]],
    ]);
    const app = images.find((i) => i.key === h('1'))!;
    expect(app).toMatchObject({ criSize: 60, contentBytes: 60, exclusiveBytes: 20, lastChangedAt: '2025-02-02T00:00:00.000Z', configCreated: '2024-12-01T00:00:00Z' });
    expect(images.find((i) => i.key === h('2'))).toMatchObject({ state: 'durable', pinnedForKubelet: true, exclusiveBytes: 3 });
  });

  it('finds the image a container names by tag, digest reference, image id or familiar name; only CRI’s records count for kubelet', () => {
    const { images, unmatched } = buildStore(
      { refs, records, containers: [c('a', 'docker.io/library/app:1.0', 'container'), c('b', h('2')), c('s', 'app:0.9', 'sandbox'), c('x', 'docker.io/library/gone:1')], criPinning: 'any' },
      facts,
      sizes,
    );
    expect(images.find((i) => i.key === h('1'))!.usedBy).toEqual([{ id: 'a', image: 'docker.io/library/app:1.0', kubelet: true }]);
    expect(images.find((i) => i.key === h('2'))!.usedBy.map((u) => [u.id, u.kubelet])).toEqual([
      ['b', false],
      ['s', true],
    ]);
    expect(unmatched.map((u) => u.id)).toEqual(['x']);
    const byName = new Map([['docker.io/library/app:1.0', 'K']]);
    expect(imageOfContainer(`docker.io/library/app@${h('d')}`, byName, new Map(), new Map([[h('d'), 'K']]))).toBe('K');
  });

  it('on 1.7.3–1.7.9 an image pinned on some references only is uncertain for kubelet', () => {
    const mixed = [ref('r/a:1', { labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable' }), ref(h('1'))];
    const { images } = buildStore({ refs: mixed, records: [], containers: [], criPinning: 'first-loaded' }, facts, sizes);
    expect(images[0]).toMatchObject({ pinnedForKubelet: false, pinUncertain: true });
  });

  it('carries the Images tab’s verdict for the next k3s start: a k3s pin nothing re-pins is pinned now, not after', () => {
    const k3s = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
    const two = [
      ref('r/lost:1', { labels: k3s, pin: 'distro', afterRestart: 'unpinned' }),
      ref('r/kept:1', { digest: h('e'), imageId: h('2'), labels: k3s, pin: 'distro', afterRestart: 'pinned', archive: 'kept.tar' }),
    ];
    const { images } = buildStore({ refs: two, records: [], containers: [], criPinning: 'any' }, facts, sizes);
    expect(images.map((i) => [i.refs[0], i.state, i.pinnedForKubelet, i.pinnedAfterRestart])).toEqual([
      ['r/kept:1', 'distro', true, true],
      ['r/lost:1', 'distro', true, false],
    ]);
  });
});

describe('parseDfLines', () => {
  it('reads total, available and the mount point of each line (device names with spaces are harmless)', () => {
    const out = 'Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/vda 264212084 24677916 81712996 24% /\nmy disk 1000 10 990 1% /mnt/with space\n';
    expect(parseDfLines(out)).toEqual([
      { totalBytes: 264212084 * 1024, freeBytes: 81712996 * 1024, mount: '/' },
      { totalBytes: 1000 * 1024, freeBytes: 990 * 1024, mount: '/mnt/with space' },
    ]);
  });
});
