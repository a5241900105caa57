import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveEvent } from '../../../../src/shared/contract';
import type { EventEnvelope, EventSubscription } from '../../../../src/core/containerd/client';
import { HoldfastError } from '../../../../src/core/errors';
import { backoffDelay, LiveHub, type LiveConnection } from '../../../../src/core/live/hub';
import type { Job } from '../../../../src/shared/domain/jobs';
import { job as jobOf } from '../../../doubles/api';

/** A fake node connection whose event stream the test drives. */
function fakeNode() {
  const subs: { filters: string[]; handlers: Record<string, ((x?: unknown) => void)[]>; cancelled: boolean }[] = [];
  let down: HoldfastError | null = null;
  const conn: LiveConnection = {
    namespace: 'k8s.io',
    ping: async () => {
      if (down) throw down;
      return { version: 'v2' };
    },
    subscribe(filters) {
      const s = { filters, handlers: { event: [], error: [], end: [] } as Record<string, ((x?: unknown) => void)[]>, cancelled: false };
      subs.push(s);
      const sub: EventSubscription = {
        on: ((ev: string, cb: (x?: unknown) => void) => {
          s.handlers[ev]!.push(cb);
          return sub;
        }) as EventSubscription['on'],
        cancel: () => {
          s.cancelled = true;
        },
      };
      return sub;
    },
  };
  return {
    conn,
    subs,
    last: () => subs[subs.length - 1]!,
    event(e: Partial<EventEnvelope>) {
      for (const h of this.last().handlers['event']!) h({ timestamp: null, namespace: 'k8s.io', topic: '/images/update', typeUrl: '', ...e });
    },
    drop() {
      for (const h of this.last().handlers['error']!) h(new HoldfastError('CONTAINERD_UNAVAILABLE', 'code 14: connection dropped'));
    },
    setDown(err: HoldfastError | null) {
      down = err;
    },
  };
}

/** A hub watching edge-01 over `n`; returns every event it sends its listener. */
function watching(n: ReturnType<typeof fakeNode>, random?: () => number): LiveEvent[] {
  const hub = new LiveHub({ open: async () => n.conn, ...(random ? { random } : {}) });
  const got: LiveEvent[] = [];
  hub.subscribe((e) => got.push(e));
  hub.watch('edge-01');
  return got;
}

const statuses = (events: LiveEvent[]) => events.filter((e) => e.type === 'node.status').map((e) => (e.payload as { state: string }).state);

describe('backoffDelay', () => {
  it('doubles from 1 s and caps at 30 s, with bounded jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 10].map((a) => backoffDelay(a, undefined, mid))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(backoffDelay(1, undefined, () => 0)).toBe(800);
    expect(backoffDelay(1, undefined, () => 0.9999)).toBe(1200);
    expect(backoffDelay(9, undefined, () => 0.9999)).toBe(30000);
  });
});

describe('LiveHub', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('subscribes with a namespace and image-topic filter and turns image events into node.changed', async () => {
    const n = fakeNode();
    const got = watching(n, () => 0.5);
    await vi.advanceTimersByTimeAsync(0);
    expect(n.last().filters).toEqual(['namespace=="k8s.io",topic~="^/images/"']);
    expect(statuses(got)).toEqual(['connecting', 'connected']);
    n.event({ topic: '/images/create', image: { name: 'docker.io/library/app:1.0', labels: {} } });
    n.event({ namespace: 'moby', topic: '/images/create' }); // defence in depth: other namespaces are ignored
    expect(got.filter((e) => e.type === 'node.changed').map((e) => e.payload)).toEqual([
      { node: 'edge-01', topic: '/images/create', name: 'docker.io/library/app:1.0' },
    ]);
  });

  it('reconnects after a drop with growing delays, then resyncs', async () => {
    const n = fakeNode();
    const got = watching(n, () => 0.5);
    await vi.advanceTimersByTimeAsync(0);
    n.setDown(new HoldfastError('UNREACHABLE', 'connection refused'));
    n.drop();
    const retries = () =>
      got.flatMap((e) => (e.type === 'node.status' && e.payload.state === 'reconnecting' ? [e.payload] : []));
    expect(retries()).toMatchObject([{ attempt: 1, retryInMs: 1000 }]);
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(2000);
    await vi.advanceTimersByTimeAsync(4000);
    expect(retries().map((r) => r.retryInMs)).toEqual([1000, 2000, 4000, 8000]);
    n.setDown(null);
    await vi.advanceTimersByTimeAsync(8000);
    expect(statuses(got).at(-1)).toBe('connected');
    expect(got.at(-1)).toEqual({ type: 'node.changed', payload: { node: 'edge-01', topic: 'resync', name: '' } });
    expect(n.subs.filter((s) => !s.cancelled)).toHaveLength(1);
  });

  it('gives up on errors only the user can fix', async () => {
    const n = fakeNode();
    n.setDown(new HoldfastError('HOST_KEY_CHANGED', 'the host key changed'));
    const got = watching(n);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(statuses(got)).toEqual(['connecting', 'error']);
  });

  it('stops every watcher when the last listener leaves and restarts for the next', async () => {
    const n = fakeNode();
    const open = vi.fn(async () => n.conn);
    const hub = new LiveHub({ open });
    hub.watch('edge-01'); // nobody listens yet: nothing opens
    await vi.advanceTimersByTimeAsync(0);
    expect(open).not.toHaveBeenCalled();
    const off1 = hub.subscribe(() => undefined);
    const off2 = hub.subscribe(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(hub.watching()).toEqual(['edge-01']);
    off1();
    expect(hub.watching()).toEqual(['edge-01']);
    off2();
    expect(hub.watching()).toEqual([]);
    expect(n.last().cancelled).toBe(true);
    // A drop after stopping schedules nothing.
    n.drop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(open).toHaveBeenCalledTimes(1);
    hub.subscribe(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(open).toHaveBeenCalledTimes(2);
    hub.unwatch('edge-01');
    expect(hub.watching()).toEqual([]);
  });

  it('throttles running job updates and sends finished ones at once', async () => {
    const hub = new LiveHub({ open: async () => fakeNode().conn, jobThrottleMs: 200 });
    const got: LiveEvent[] = [];
    hub.subscribe((e) => got.push(e));
    const job = (progress: number, state: Job['state'] = 'running') => jobOf({ id: 'j1', state, progress, nodes: [] });
    for (let i = 0; i < 10; i++) hub.jobChanged(job(i / 10));
    expect(got).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(got).toHaveLength(2);
    expect((got[1]!.payload as Job).progress).toBe(0.9);
    hub.jobChanged(job(1, 'succeeded'));
    expect(got).toHaveLength(3);
    expect((got[2]!.payload as Job).state).toBe('succeeded');
  });
});
