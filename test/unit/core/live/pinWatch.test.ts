// The live lost-pin watch's bookkeeping (core/live/pinWatch.ts): which events make a node
// suspect, waiting while Holdfast itself changes pins, reporting each loss once and again only
// after it was fixed and lost anew. The node side is given as plain functions here; the real
// thing end to end (lab node, service, hub) is in test/integration/lostPins.test.ts.
import { describe, expect, it, vi } from 'vitest';
import type { EventEnvelope } from '../../../../src/core/containerd/client';
import { PinWatch } from '../../../../src/core/live/pinWatch';
import type { LostPin } from '../../../../src/shared/domain/lostPins';
import type { PinRecord } from '../../../../src/shared/lostPins';

const pin = (ref: string): PinRecord => ({ ref, imageId: 'sha256:1', pinnedAt: '2026-03-01T00:00:00.000Z', pinnedBy: 'tech' });
const lostOf = (ref: string, pinnedAt = '2026-03-01T00:00:00.000Z'): LostPin => ({
  node: 'n1',
  kind: 'label-removed',
  ref,
  imageId: 'sha256:1',
  pinnedAt,
  pinnedBy: 'tech',
  summary: '',
  causes: [],
  remedy: { kind: 'repin', text: '' },
  stillPinnedVia: null,
});
const update = (name: string, labels: Record<string, string>): EventEnvelope => ({ timestamp: null, namespace: 'k8s.io', topic: '/images/update', typeUrl: 'containerd.services.images.v1.ImageUpdate', image: { name, labels } });

function setup() {
  let lost: LostPin[] = [];
  const reported: LostPin[][] = [];
  const lostPins = vi.fn(async () => lost);
  const watch = new PinWatch({
    durablePins: async () => [pin('a:1'), pin('b:1')],
    lostPins,
    settleMs: 0,
    onLost: (_node, l) => reported.push(l),
  });
  return {
    watch,
    reported,
    lostPins,
    setLost: (l: LostPin[]) => (lost = l),
  };
}

describe('PinWatch', () => {
  it('ignores events that show the pin still durable and references Holdfast does not hold', async () => {
    const t = setup();
    t.setLost([lostOf('a:1'), lostOf('b:1'), { ...lostOf('other:1') }]);
    t.watch.onEvent('n1', update('a:1', { 'io.cri-containerd.pinned': 'pinned' }));
    t.watch.onEvent('n1', update('other:1', {}));
    t.watch.onEvent('n1', update('b:1', {}));
    await vi.waitFor(() => expect(t.reported).toHaveLength(1));
    // Only b:1 was a suspect: a:1's event showed it durable, other:1 is not Holdfast's pin.
    expect(t.reported[0]!.map((l) => l.ref)).toEqual(['b:1']);
  });

  it('reports a loss of a suspect once, not other losses, and again after it was fixed and lost anew', async () => {
    const t = setup();
    t.setLost([lostOf('a:1'), lostOf('b:1')]);
    t.watch.onEvent('n1', update('a:1', {}));
    await vi.waitFor(() => expect(t.reported).toHaveLength(1));
    expect(t.reported[0]!.map((l) => l.ref)).toEqual(['a:1']); // b:1 was lost before: the listing shows it

    t.watch.onEvent('n1', update('a:1', { 'io.cri-containerd.image': 'managed' }));
    await vi.waitFor(() => expect(t.lostPins).toHaveBeenCalledTimes(2));
    expect(t.reported).toHaveLength(1);

    t.setLost([lostOf('b:1')]); // re-pinned
    t.watch.onEvent('n1', { ...update('a:1', {}), topic: '/images/delete' });
    await vi.waitFor(() => expect(t.lostPins).toHaveBeenCalledTimes(3));
    t.setLost([lostOf('a:1', '2026-03-02T00:00:00.000Z'), lostOf('b:1')]);
    t.watch.onEvent('n1', update('a:1', {}));
    await vi.waitFor(() => expect(t.reported).toHaveLength(2));
    expect(t.reported[1]![0]!.pinnedAt).toBe('2026-03-02T00:00:00.000Z');
  });

  it('waits while Holdfast changes pins on the node, then checks', async () => {
    const t = setup();
    let asked = 0;
    let busy = true;
    const watch = new PinWatch({
      durablePins: async () => [pin('a:1')],
      lostPins: t.lostPins,
      busy: () => (asked++, busy),
      settleMs: 0,
      onLost: (_n, l) => t.reported.push(l),
    });
    t.setLost([lostOf('a:1')]); // what the labels alone would say mid-unpin
    watch.onEvent('n1', update('a:1', {}));
    await vi.waitFor(() => expect(asked).toBeGreaterThanOrEqual(2)); // checked, deferred, checked again
    expect(t.lostPins).not.toHaveBeenCalled();
    t.setLost([]); // Holdfast's own unpin is logged by the time it is done
    busy = false;
    await vi.waitFor(() => expect(t.lostPins).toHaveBeenCalledTimes(1));
    expect(t.reported).toEqual([]);
    watch.close();
  });
});
