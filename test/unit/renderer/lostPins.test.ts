// What the renderer derives from lost pins and node capability warnings: the node view's groups,
// the live alert (store), and the fleet matrix's column markers and at-risk count. Lost pins come
// from the shared rule itself (shared/lostPins.ts), as the backend sends them.
import { describe, expect, it, vi } from 'vitest';
import type { ClientApi } from '../../../src/renderer/api';
import { buildMatrix, summarizeMatrix } from '../../../src/renderer/fleetMatrix';
import { groupLostPins, lostPinLine } from '../../../src/renderer/model/lostPins';
import { createAppStore, lostPinsOf } from '../../../src/renderer/store';
import type { Envelope, LiveEvent } from '../../../src/shared/contract';
import type { AuditEntry } from '../../../src/shared/domain/audit';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { LostPin } from '../../../src/shared/domain/lostPins';
import type { NodeDef } from '../../../src/shared/domain/nodes';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { activeDurablePins, findLostPins } from '../../../src/shared/lostPins';
import { fakeApi, imagesReport } from '../../doubles/api';

const CRI = 'io.cri-containerd.pinned';
const ID_A = 'sha256:' + 'a'.repeat(64);
const ID_B = 'sha256:' + 'b'.repeat(64);
const A = 'docker.io/library/app:1.0';
const A_DIGEST = 'docker.io/library/app@sha256:' + 'd'.repeat(64);
const B = 'docker.io/library/db:2';

const durable = { [CRI]: 'pinned', 'io.holdfast.pinned-by': 'tech' };
const audit: AuditEntry[] = [
  { time: '2026-03-01T08:00:00.000Z', user: 'tech', node: 'n1', action: 'pin', changes: [A, A_DIGEST, ID_A].map((ref) => ({ ref, imageId: ID_A, before: {}, after: durable })) },
  { time: '2026-03-02T09:30:00.000Z', user: 'ops', node: 'n1', action: 'pin', changes: [{ ref: B, imageId: ID_B, before: {}, after: durable }] },
];
const ref = (name: string, imageId: string, pin: ImageRef['pin'], labels: Record<string, string>): ImageRef => ({
  name,
  digest: 'sha256:' + 'e'.repeat(64),
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId,
  size: 1,
  platforms: ['linux/amd64'],
  createdAt: null,
  labels,
  pin,
  afterRestart: pin === 'none' ? 'unpinned' : 'pinned',
  reason: '',
  archive: null,
});
/** n1 after someone replaced app's label map (every reference) and deleted db entirely. */
const lost: LostPin[] = findLostPins({
  node: 'n1',
  pins: activeDurablePins(audit, 'n1'),
  refs: [ref(A, ID_A, 'none', {}), ref(A_DIGEST, ID_A, 'none', {}), ref(ID_A, ID_A, 'none', {})],
  imagesDir: [],
});

describe('groupLostPins', () => {
  it('one entry per image and kind, the tag first, with its causes and one-click remedy', () => {
    const g = groupLostPins(lost);
    expect(g.map((x) => [x.refs, x.kind])).toEqual([
      [[A, A_DIGEST, ID_A], 'label-removed'],
      [[B], 'image-deleted'],
    ]);
    expect(g[0]).toMatchObject({ pinnedBy: 'tech', pinnedAt: '2026-03-01T08:00:00.000Z', stillPinnedVia: null, remedy: { kind: 'repin', target: { refs: [A] } } });
    expect(g[0]!.causes[0]).toContain('without `--local`');
    expect(g[1]!.remedy).toMatchObject({ kind: 'reimport' });
  });

  it('puts images something still pins after those nothing pins', () => {
    const partly = findLostPins({
      node: 'n1',
      pins: activeDurablePins(audit, 'n1'),
      refs: [ref(A, ID_A, 'none', {}), ref(A_DIGEST, ID_A, 'durable', durable), ref(ID_A, ID_A, 'durable', durable)],
    });
    expect(groupLostPins(partly).map((x) => [x.refs[0], x.stillPinnedVia])).toEqual([
      [B, null],
      [A, A_DIGEST],
    ]);
  });

  it('lostPinLine says node, reference, what happened and who made the pin when', () => {
    expect(lostPinLine(lost.find((l) => l.ref === B)!)).toMatch(/^n1: docker\.io\/library\/db:2 — image deleted \(made durable by ops, 2026-03-0[12] \d\d:\d\d:00\)$/);
  });
});

const node = (name: string): NodeDef => ({ name, host: `${name}.lan`, port: 22, user: 'root', socket: '/s', imagesDir: '/i', namespace: 'k8s.io' });
const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });

function storeWith(listLostPins: ClientApi['listLostPins'] | undefined) {
  const listeners = new Set<(e: LiveEvent) => void>();
  const api = fakeApi({
    listNodes: vi.fn(async () => ok([node('n1'), node('n2')])),
    connectNode: vi.fn(async ({ name }: { name: string }) => ok({ name, state: 'connected' as const })),
    getImagesReport: vi.fn(async () => ok(imagesReport())),
    listLostPins,
    // A server without disk pictures: the store leaves them out.
    getDiskPicture: undefined,
    listJobs: vi.fn(async () => ok([])),
    onEvent: vi.fn((cb: (e: LiveEvent) => void) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    }),
    removeNode: vi.fn(async ({ name }: { name: string }) => ok({ removed: name })),
  });
  const store = createAppStore(api, { refreshDebounceMs: 0 });
  return { api, store, emit: (e: LiveEvent) => [...listeners].forEach((l) => l(e)) };
}

describe('store: lost pins', () => {
  it('loads them with each node’s images', async () => {
    const listLostPins = vi.fn(async ({ node: n }: { node: string }) => ok(n === 'n1' ? lost : []));
    const { store } = storeWith(listLostPins);
    await store.getState().init();
    await vi.waitFor(() => expect(lostPinsOf(store.getState(), 'n1').state).toBe('ready'));
    expect(lostPinsOf(store.getState(), 'n1').items).toEqual(lost);
    expect(lostPinsOf(store.getState(), 'n2').items).toEqual([]);
    expect(listLostPins).toHaveBeenCalledWith({ node: 'n1' });
  });

  it('a live pins.lost event raises an alert at once, shows the pins, refreshes, and is dismissed', async () => {
    let server: LostPin[] = [];
    const listLostPins = vi.fn(async () => ok(server));
    const { store, emit } = storeWith(listLostPins);
    await store.getState().init();
    const stop = store.getState().startLive();
    await vi.waitFor(() => expect(lostPinsOf(store.getState(), 'n1').state).toBe('ready'));
    const calls = listLostPins.mock.calls.length;

    server = lost;
    emit({ type: 'node.changed', payload: { node: 'n1', topic: 'pins.lost', name: B, lostPins: lost.filter((l) => l.ref === B) } });
    const s = store.getState();
    expect(s.pinAlerts).toHaveLength(1);
    expect(s.pinAlerts[0]).toMatchObject({ node: 'n1', lost: [{ ref: B, kind: 'image-deleted' }] });
    expect(lostPinsOf(s, 'n1').items.map((l) => l.ref)).toEqual([B]);
    // The refresh the event schedules replaces what the event said with the backend's full list.
    await vi.waitFor(() => expect(lostPinsOf(store.getState(), 'n1').items).toEqual(lost));
    expect(listLostPins.mock.calls.length).toBeGreaterThan(calls);

    // Other node.changed events raise no alert; unknown nodes are ignored.
    emit({ type: 'node.changed', payload: { node: 'n1', topic: '/images/update', name: A } });
    emit({ type: 'node.changed', payload: { node: 'gone', topic: 'pins.lost', name: B, lostPins: lost } });
    expect(store.getState().pinAlerts).toHaveLength(1);

    store.getState().dismissPinAlert(store.getState().pinAlerts[0]!.id);
    expect(store.getState().pinAlerts).toEqual([]);
    stop();
  });

  it('an older bridge without listLostPins shows none; removing a node drops its pins and alerts', async () => {
    const { store, emit } = storeWith(undefined);
    await store.getState().init();
    expect(lostPinsOf(store.getState(), 'n1').state).toBe('idle');
    const stop = store.getState().startLive();
    emit({ type: 'node.changed', payload: { node: 'n2', topic: 'pins.lost', name: B, lostPins: lost } });
    expect(store.getState().pinAlerts).toHaveLength(1);
    await store.getState().removeNode('n2');
    expect(store.getState().pinAlerts).toEqual([]);
    expect(lostPinsOf(store.getState(), 'n2').items).toEqual([]);
    stop();
  });
});

describe('fleet matrix: lost pins and capability markers', () => {
  const result = (n: string, extra: Partial<FleetNodeResult>): FleetNodeResult => ({ node: n, reachable: true, error: null, versions: null, images: [], archives: [], disk: null, ...extra });

  it('counts lost pins per column, takes warnings from the report or the versions, and counts such nodes at risk', () => {
    const m = buildMatrix(['n1', 'n2', 'n3'], {
      n1: result('n1', { lostPins: lost }),
      // An older report without `warnings`: derived from the versions with the same rule.
      n2: result('n2', { versions: { containerdVersion: '1.6.20~ds1', containerdRevision: '', distro: 'k3s', distroVersion: null } }),
      n3: result('n3', { versions: { containerdVersion: '2.1.9', containerdRevision: '', distro: 'k3s', distroVersion: 'v1.33.1+k3s1' }, warnings: [] }),
    });
    expect(m.columns.map((c) => [c.node, c.lostPins, c.warnings.map((w) => w.kind)])).toEqual([
      ['n1', lost.length, []],
      ['n2', 0, ['no-cri-pinning']],
      ['n3', 0, []],
    ]);
    expect(summarizeMatrix(m)).toMatchObject({ nodesAtRisk: 2, lostPins: lost.length });
  });
});
