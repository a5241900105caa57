import { describe, expect, it } from 'vitest';
import { labelDelta, buildPinPlan } from '../../../../../src/core/usecases/pin/plan';
import { PROVENANCE } from '../../../../../src/shared/domain/labels';
import type { ImageRef } from '../../../../../src/shared/domain/images';
import { pinState } from '../../../../../src/shared/pinState';

const ID1 = 'sha256:' + '1'.repeat(64);
const ID2 = 'sha256:' + '2'.repeat(64);
const mk = (name: string, imageId: string, labels: Record<string, string>): ImageRef => ({
  name,
  digest: 'sha256:' + 'd'.repeat(64),
  mediaType: '',
  imageId,
  size: 1,
  platforms: [],
  createdAt: null,
  labels,
  pin: pinState(labels),
  afterRestart: 'pinned',
  reason: '',
  archive: null,
});
const K3S = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned', 'io.cri-containerd.image': 'managed' };
const prov = { user: 'tech@laptop', time: '2026-11-29T10:00:00.000Z' };

const refs = [
  mk('docker.io/library/app:1', ID1, K3S),
  mk(`docker.io/library/app@sha256:${'d'.repeat(64)}`, ID1, K3S),
  mk('docker.io/library/db:2', ID2, { 'io.cri-containerd.pinned': 'pinned' }),
  mk('docker.io/library/db:latest', ID2, {}),
];

describe('buildPinPlan', () => {
  it('pins every reference of the selected image, removing only the distro label', () => {
    const plan = buildPinPlan('n1', 'pin', refs, { refs: ['docker.io/library/app:1'] }, [], prov);
    expect(plan.changes.map((c) => c.ref)).toEqual(['docker.io/library/app:1', `docker.io/library/app@sha256:${'d'.repeat(64)}`]);
    for (const c of plan.changes) {
      expect(c.after['io.cattle.k3s.pinned']).toBeUndefined();
      expect(c.after['io.cri-containerd.pinned']).toBe('pinned');
      expect(c.after['io.cri-containerd.image']).toBe('managed');
      expect(c.after[PROVENANCE.by]).toBe('tech@laptop');
      expect(labelDelta(c)).toEqual({
        'io.cattle.k3s.pinned': null,
        [PROVENANCE.by]: 'tech@laptop',
        [PROVENANCE.at]: prov.time,
      });
    }
  });

  it("puts the CRI label on CRI's own sha256:<id> record too (containerd 1.7.3–1.7.9 may have loaded it first)", () => {
    const withId = [...refs, mk(ID1, ID1, { 'io.cri-containerd.image': 'managed' })];
    const plan = buildPinPlan('n1', 'pin', withId, { archive: 'apps.tar' }, [{ path: 'apps.tar', images: [{ name: 'docker.io/library/app:1', imageId: ID1 }], cachedByK3s: false }], prov);
    expect(plan.changes.map((c) => c.ref).sort()).toEqual([ID1, 'docker.io/library/app:1', `docker.io/library/app@sha256:${'d'.repeat(64)}`].sort());
    const idChange = plan.changes.find((c) => c.ref === ID1)!;
    expect(labelDelta(idChange)).toMatchObject({ 'io.cri-containerd.pinned': 'pinned' });
  });

  it('leaves already durable references alone', () => {
    const plan = buildPinPlan('n1', 'pin', refs, { refs: ['docker.io/library/db:2'] }, [], prov);
    expect(plan.changes.map((c) => c.ref)).toEqual(['docker.io/library/db:latest']);
    expect(plan.unchanged).toEqual([{ ref: 'docker.io/library/db:2', reason: 'already durably pinned' }]);
  });

  it('refuses the whole plan when a named reference is not on the node (NOT_FOUND), naming it', () => {
    expect(() => buildPinPlan('n1', 'pin', refs, { refs: ['docker.io/library/db:2', 'nope:1'] }, [], prov)).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', message: 'no reference "nope:1" on n1' }),
    );
    expect(() => buildPinPlan('n1', 'unpin', refs, { refs: ['nope:1'] }, [], prov)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('finds short names as explain does (CRI normalisation), for pin and unpin', () => {
    expect(buildPinPlan('n1', 'pin', refs, { refs: ['app:1'] }, [], prov).changes.map((c) => c.ref)).toEqual(['docker.io/library/app:1', `docker.io/library/app@sha256:${'d'.repeat(64)}`]);
    // db (no tag) is docker.io/library/db:latest, the image db:2 is a tag of
    expect(buildPinPlan('n1', 'unpin', refs, { refs: ['db'] }, [], prov).changes.map((c) => c.ref)).toEqual(['docker.io/library/db:2']);
  });

  it('selects an archive\'s images and records it as provenance', () => {
    const plan = buildPinPlan('n1', 'pin', refs, { archive: 'sub/apps.tar.zst' }, [
      { path: 'sub/apps.tar.zst', images: [{ name: 'docker.io/library/app:1', imageId: ID1 }], cachedByK3s: false },
    ], prov);
    expect(plan.changes).toHaveLength(2);
    expect(plan.changes[0]!.after[PROVENANCE.from]).toBe('sub/apps.tar.zst');
  });

  it('selects all k3s pins', () => {
    expect(buildPinPlan('n1', 'pin', refs, { allK3s: true }, [], prov).changes).toHaveLength(2);
  });

  it('unpins durable references only', () => {
    const plan = buildPinPlan('n1', 'unpin', refs, { refs: ['docker.io/library/db:2', 'docker.io/library/app:1'] }, [], prov);
    expect(plan.changes.map((c) => c.ref)).toEqual(['docker.io/library/db:2']);
    expect(labelDelta(plan.changes[0]!)).toEqual({ 'io.cri-containerd.pinned': null });
    expect(plan.unchanged.map((u) => u.reason)).toContain('pinned by k3s, which manages this pin itself');
    // on an RKE2 node the reason names RKE2
    const onRke2 = buildPinPlan('n1', 'unpin', refs, { refs: ['docker.io/library/app:1'] }, [], prov, 'RKE2');
    expect(onRke2.unchanged.map((u) => u.reason)).toContain('pinned by RKE2, which manages this pin itself');
  });
});

describe('buildPinPlan with a pin set (#50)', () => {
  const set = (over: { images?: string[]; patterns?: string[] }) => ({ pinSet: { images: [], needed: false, patterns: [], ...over } });

  it('pins what the set selects, whole images, and lists what the node lacks without refusing the rest', () => {
    const plan = buildPinPlan('n1', 'pin', refs, set({ images: ['docker.io/library/app:1', 'registry.local/absent:1'] }), [], prov);
    expect(plan.changes.map((c) => c.ref)).toEqual(['docker.io/library/app:1', `docker.io/library/app@sha256:${'d'.repeat(64)}`]);
    expect(plan.unchanged).toEqual([{ ref: 'registry.local/absent:1', reason: 'not present in containerd on this node' }]);
  });

  it('leaves durable references as they are and touches nothing outside the set', () => {
    const plan = buildPinPlan('n1', 'pin', refs, set({ patterns: ['docker.io/library/db:*'] }), [], prov);
    expect(plan.changes.map((c) => c.ref)).toEqual(['docker.io/library/db:latest']);
    expect(plan.unchanged).toEqual([{ ref: 'docker.io/library/db:2', reason: 'already durably pinned' }]);
  });

  it('never unpins', () => {
    expect(() => buildPinPlan('n1', 'unpin', refs, set({ images: ['docker.io/library/db:2'] }), [], prov)).toThrow(/never unpins/);
  });
});
