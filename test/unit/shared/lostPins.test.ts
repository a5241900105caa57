// The pure lost-pin rule (shared/lostPins.ts): each kind of loss, an unpin by Holdfast is not a
// loss, a re-pin resets the record, and the remedy names what brings the pin back.
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../src/shared/domain/audit';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { PinState } from '../../../src/shared/domain/pins';
import { remedyCommand } from '../../../src/cli/remedyText';
import { activeDurablePins, findLostPins, lostPinInWords, type CurrentRef, type ImagesDirFile } from '../../../src/shared/lostPins';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const ID = 'sha256:' + '1'.repeat(64);
const OTHER_ID = 'sha256:' + '2'.repeat(64);
const TAG = 'docker.io/library/app:1.0';
const DIGEST = 'docker.io/library/app@sha256:' + 'd'.repeat(64);
const CRI_REF = ID; // the sha256:<image id> reference containerd 2.x's CRI makes

// Labels as Holdfast's pin plan writes them (core/usecases/pin/plan.ts): CRI pin, no k3s label, provenance.
const durable = { [CRI]: 'pinned', 'io.cri-containerd.image': 'managed', 'io.holdfast.pinned-by': 'tech@laptop', 'io.holdfast.pinned-at': '2026-03-01T08:00:00.000Z' };
const k3sPinned = { [CRI]: 'pinned', [K3S]: 'pinned', 'io.cri-containerd.image': 'managed' };

const change = (ref: string, imageId: string | null = ID) => ({ ref, imageId, before: k3sPinned, after: durable });
const pinEntry = (time: string, refs: string[], user = 'tech@laptop', node = 'n1'): AuditEntry => ({ time, user, node, action: 'pin', changes: refs.map((r) => change(r)) });
const unpinEntry = (time: string, refs: string[]): AuditEntry => ({
  time,
  user: 'ops@desk',
  node: 'n1',
  action: 'unpin',
  changes: refs.map((r) => ({ ref: r, imageId: ID, before: durable, after: { 'io.cri-containerd.image': 'managed' } })),
});

const ref = (name: string, pin: PinState, labels: Record<string, string>, imageId: string | null = ID, extra: Partial<ImageRef> = {}): CurrentRef => ({
  name,
  imageId,
  labels,
  pin,
  createdAt: '2026-02-01T00:00:00.000Z',
  ...extra,
});

const PINNED_AT = '2026-03-01T08:00:00.000Z';
const audit = [pinEntry(PINNED_AT, [TAG, DIGEST, CRI_REF])];
const lost = (refs: CurrentRef[], imagesDir: ImagesDirFile[] = [], entries = audit, info: { containerdVersion: string } | null = null) =>
  findLostPins({ node: 'n1', pins: activeDurablePins(entries, 'n1'), refs, imagesDir, info }).map((l) => lostPinInWords(l, remedyCommand));

describe('activeDurablePins', () => {
  it('replays pins and unpins by time whatever the order given, per node', () => {
    const entries: AuditEntry[] = [
      unpinEntry('2026-03-02T00:00:00.000Z', [DIGEST]), // newest first, as AuditLog.list gives them
      pinEntry('2026-03-01T09:00:00.000Z', [TAG], 'other@box'),
      pinEntry(PINNED_AT, [TAG, DIGEST]),
      pinEntry(PINNED_AT, ['elsewhere:1'], 'tech@laptop', 'n2'),
      { time: '2026-03-03T00:00:00.000Z', user: 'x', node: 'n1', action: 'pin', note: 'failed: containerd unavailable' },
    ];
    expect(activeDurablePins(entries, 'n1')).toEqual([{ ref: TAG, imageId: ID, pinnedAt: '2026-03-01T09:00:00.000Z', pinnedBy: 'other@box' }]);
    expect(activeDurablePins(entries, 'n2').map((p) => p.ref)).toEqual(['elsewhere:1']);
  });

  it('does not count a pin that left the k3s label on as durable', () => {
    const e: AuditEntry = { time: PINNED_AT, user: 'u', node: 'n1', action: 'pin', changes: [{ ref: TAG, imageId: ID, before: {}, after: k3sPinned }] };
    expect(activeDurablePins([e], 'n1')).toEqual([]);
  });
});

describe('findLostPins', () => {
  it('reports nothing while every pin is still durable', () => {
    expect(lost([ref(TAG, 'durable', durable), ref(DIGEST, 'durable', durable), ref(CRI_REF, 'durable', durable)])).toEqual([]);
  });

  it('an unpin done by Holdfast after the pin is not a loss', () => {
    const entries = [...audit, unpinEntry('2026-03-05T00:00:00.000Z', [TAG, DIGEST, CRI_REF])];
    const none = { 'io.cri-containerd.image': 'managed' };
    expect(lost([ref(TAG, 'none', none), ref(DIGEST, 'none', none), ref(CRI_REF, 'none', none)], [], entries)).toEqual([]);
  });

  it('label-removed: one label taken off by hand, the image still pinned through its other references', () => {
    const { [CRI]: _gone, ...rest } = durable;
    const [l, ...others] = lost([ref(TAG, 'none', rest), ref(DIGEST, 'durable', durable), ref(CRI_REF, 'durable', durable)]);
    expect(others).toEqual([]);
    expect(l).toMatchObject({ node: 'n1', kind: 'label-removed', ref: TAG, imageId: ID, pinnedAt: PINNED_AT, pinnedBy: 'tech@laptop', stillPinnedVia: DIGEST });
    expect(l!.summary).toContain(`still pinned through ${DIGEST}`);
    expect(l!.causes[0]).toContain(`ctr -n k8s.io images label ${TAG} ${CRI}=`);
    expect(l!.remedy).toEqual({
      kind: 'repin',
      text: expect.stringContaining('durable again'),
      command: `holdfast pin n1 ${TAG}`,
      target: { refs: [TAG] },
    });
  });

  it('label-removed with the whole label map replaced points at the 2.x transfer-service import first', () => {
    const replaced = { 'io.cri-containerd.image': 'managed' };
    const out = lost([ref(TAG, 'none', replaced), ref(DIGEST, 'none', replaced), ref(CRI_REF, 'none', replaced)]);
    expect(out.map((l) => [l.ref, l.kind, l.stillPinnedVia])).toEqual([
      [TAG, 'label-removed', null],
      [DIGEST, 'label-removed', null],
      [CRI_REF, 'label-removed', null],
    ]);
    expect(out[0]!.summary).toContain("kubelet's image GC may delete it");
    expect(out[0]!.causes[0]).toMatch(/k3s ctr images import.*containerd 2\.x without `--local`.*whole label map/);
    expect(out[0]!.causes.join(' ')).toContain('ctr images import --label');
  });

  it('label-removed on a reference created again after the pin says so first', () => {
    const out = lost([ref(TAG, 'none', {}, ID, { createdAt: '2026-03-04T00:00:00.000Z' }), ref(DIGEST, 'durable', durable), ref(CRI_REF, 'durable', durable)]);
    expect(out[0]!.causes[0]).toContain('created again after Holdfast pinned it (created 2026-03-04T00:00:00.000Z)');
  });

  it('ref-deleted: the tag is gone, the image stays under its other references', () => {
    const out = lost([ref(DIGEST, 'durable', durable), ref(CRI_REF, 'durable', durable)]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ kind: 'ref-deleted', ref: TAG, stillPinnedVia: DIGEST });
    expect(out[0]!.summary).toContain(`still on the node as ${DIGEST}, ${CRI_REF}`);
    expect(out[0]!.causes.join(' ')).toContain(`ctr -n k8s.io images rm ${TAG}`);
    // Still pinned: the name comes back by re-tagging or re-importing, not by pinning.
    expect(out[0]!.remedy.kind).toBe('reimport');
    expect(out[0]!.remedy.text).toContain(`ctr -n k8s.io images tag ${DIGEST} ${TAG}`);
  });

  it('ref-deleted with the rest of the image unpinned offers re-pinning what is left in one click', () => {
    const out = lost([ref(DIGEST, 'none', {}), ref(CRI_REF, 'none', {})], [], [pinEntry(PINNED_AT, [TAG])]);
    expect(out[0]).toMatchObject({ kind: 'ref-deleted', stillPinnedVia: null, remedy: { kind: 'repin', target: { refs: [DIGEST] }, command: `holdfast pin n1 ${DIGEST}` } });
  });

  it('image-deleted: with an archive in the images dir, the remedy restores from it', () => {
    const dir: ImagesDirFile[] = [
      { path: 'apps/app.tar.gz', kind: 'archive', images: [TAG], cachedByK3s: false },
      { path: 'notes.md', kind: 'ignored', images: [] },
    ];
    const out = lost([ref('docker.io/library/other:1', 'none', {}, OTHER_ID)], dir);
    expect(out.map((l) => [l.ref, l.kind])).toEqual([
      [TAG, 'image-deleted'],
      [DIGEST, 'image-deleted'],
      [CRI_REF, 'image-deleted'],
    ]);
    // The digest and CRI references come back with the tag's archive too.
    for (const l of out) {
      expect(l.remedy).toMatchObject({ kind: 'restore-from-archive', archive: 'apps/app.tar.gz', command: 'holdfast pin n1 --archive apps/app.tar.gz' });
      expect(l.remedy.text).toContain('restart k3s');
    }
    expect(out[0]!.causes.join(' ')).toMatch(/ctr images prune --all.*ignore pins/);
  });

  it('image-deleted: an archive k3s would skip (.cache.json) says how to get it imported', () => {
    const out = lost([], [{ path: 'app.tar', kind: 'archive', images: [TAG], cachedByK3s: true }]);
    expect(out[0]!.remedy.text).toContain('.cache.json lists it unchanged');
  });

  it('image-deleted with no archive for it must be re-imported; on 1.6 kubelet GC is a likely cause', () => {
    const out = lost([], [], audit, { containerdVersion: '1.6.20~ds1' });
    expect(out[0]!.remedy).toEqual({ kind: 'reimport', text: expect.stringContaining('import it again'), command: 'holdfast import n1 FILE --pin' });
    expect(out[0]!.causes[0]).toContain("kubelet's image GC deleted it: containerd 1.6.20~ds1 has no CRI image pinning");
    expect(lost([], [], audit, { containerdVersion: '2.1.9' })[0]!.causes.join(' ')).not.toContain("kubelet's image GC");
  });

  it('image-deleted when the name now points to another image', () => {
    const out = lost([ref(TAG, 'none', {}, OTHER_ID)], [], [pinEntry(PINNED_AT, [TAG])]);
    expect(out[0]).toMatchObject({ kind: 'image-deleted', ref: TAG });
    expect(out[0]!.summary).toContain(`${TAG} now names another image (id 222222222222)`);
  });

  it('k3s-managed-again: the archive is back in the images dir', () => {
    const out = lost(
      [ref(TAG, 'distro', { ...k3sPinned, 'io.holdfast.pinned-by': 'tech@laptop' }), ref(DIGEST, 'distro', k3sPinned), ref(CRI_REF, 'durable', durable)],
      [{ path: 'site/app.tar.zst', kind: 'archive', images: [TAG], cachedByK3s: false }],
    );
    expect(out.map((l) => [l.ref, l.kind, l.stillPinnedVia])).toEqual([
      [TAG, 'k3s-managed-again', CRI_REF],
      [DIGEST, 'k3s-managed-again', CRI_REF],
    ]);
    expect(out[0]!.summary).toContain('only while site/app.tar.zst stays');
    expect(out[0]!.causes[0]).toContain('site/app.tar.zst in the images dir brings it');
    expect(out[0]!.remedy).toMatchObject({ kind: 'repin', target: { refs: [TAG] }, archive: 'site/app.tar.zst' });
    expect(out[0]!.remedy.text).toContain('holdfast rm-archive n1 site/app.tar.zst');
  });

  it('k3s-managed-again through a pre-pull list', () => {
    const out = lost([ref(TAG, 'distro', k3sPinned)], [{ path: 'prepull.txt', kind: 'prepull', images: [TAG] }], [pinEntry(PINNED_AT, [TAG])]);
    expect(out[0]!.causes).toEqual(['The pre-pull list prepull.txt names it: k3s pins the images a .txt list names at every start.']);
  });

  it('a re-pin after a loss replaces the record: the pin counts from the new time', () => {
    const entries = [...audit, pinEntry('2026-03-09T00:00:00.000Z', [TAG], 'ops@desk')];
    const out = lost([ref(TAG, 'none', {}), ref(DIGEST, 'durable', durable), ref(CRI_REF, 'durable', durable)], [], entries);
    expect(out[0]).toMatchObject({ pinnedAt: '2026-03-09T00:00:00.000Z', pinnedBy: 'ops@desk' });
  });
});
