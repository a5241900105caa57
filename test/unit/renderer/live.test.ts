// Live events in the renderer: the SSE reader, the store's reactions (debounced refresh,
// reconnect countdown, jobs without polling), the status shown, and the windowing maths.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEventStream, parseSse } from '../../../src/renderer/api';
import { displayStatus } from '../../../src/renderer/components/LiveStatus';
import { indexAt, rowOffsets, visibleRange, windowAfterScroll } from '../../../src/renderer/components/virtual';
import { countsOfRefs, groupsOfRefs } from '../../../src/renderer/model/images';
import { createAppStore, imagesOf } from '../../../src/renderer/store';
import type { Envelope, LiveEvent } from '../../../src/shared/contract';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { Job } from '../../../src/shared/domain/jobs';
import type { NodeDef } from '../../../src/shared/domain/nodes';
import { fakeApi, job, imagesReport } from '../../doubles/api';

const node = (name: string): NodeDef => ({ name, host: `${name}.lan`, port: 22, user: 'root', socket: '/s', imagesDir: '/i', namespace: 'k8s.io' });
const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });

function liveApi() {
  const listeners = new Set<(e: LiveEvent) => void>();
  const api = fakeApi({
    listNodes: vi.fn(async () => ok([node('a'), node('b')])),
    connectNode: vi.fn(async ({ name }: { name: string }) => ok({ name, state: 'connected' as const })),
    getImagesReport: vi.fn(async () => ok(imagesReport())),
    listArchives: vi.fn(async () => ok([])),
    listAudit: vi.fn(async () => ok([])),
    listJobs: vi.fn(async () => ok([] as Job[])),
    // A server without lost pins or disk pictures: the store leaves them out.
    listLostPins: undefined,
    getDiskPicture: undefined,
    onEvent: vi.fn((cb: (e: LiveEvent) => void) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    }),
  });
  return { api, listeners, emit: (e: LiveEvent) => [...listeners].forEach((l) => l(e)) };
}

describe('parseSse', () => {
  it('splits complete events, joins multi-line data, ignores comments and keeps the rest', () => {
    const { data, rest } = parseSse(': keep-alive\n\ndata: {"a":1}\n\ndata: x\ndata: y\n\ndata: {"b"');
    expect(data).toEqual(['{"a":1}', 'x\ny']);
    expect(rest).toBe('data: {"b"');
  });
});

describe('createEventStream', () => {
  it('reads events from GET /api/events with the token header, drops malformed ones, aborts when the last listener leaves', async () => {
    const enc = new TextEncoder();
    const event: LiveEvent = { type: 'node.changed', payload: { node: 'a', topic: '/images/update', name: 'x:1' } };
    let signal: AbortSignal | undefined;
    const fetch = vi.fn(async (_url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => {
      signal = init.signal;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc.encode(': holdfast events\n\ndata: {"type":"bogus","payload":{}}\n\ndata: ' + JSON.stringify(event).slice(0, 20)));
          c.enqueue(enc.encode(JSON.stringify(event).slice(20) + '\n\n'));
        },
      });
      return { ok: true, body };
    });
    const onEvent = createEventStream({ token: 'tok', fetch });
    const got: LiveEvent[] = [];
    const off = onEvent((e) => got.push(e));
    await vi.waitFor(() => expect(got).toEqual([event]));
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch.mock.calls[0]![0]).toBe('/api/events');
    expect(fetch.mock.calls[0]![1].headers['x-holdfast-token']).toBe('tok');
    off();
    expect(signal?.aborted).toBe(true);
  });
});

describe('store: live events', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('node.changed: a burst of events reloads the node’s images once, ~300 ms after the last', async () => {
    const { api, emit } = liveApi();
    const store = createAppStore(api);
    await store.getState().init();
    const stop = store.getState().startLive();
    (api.getImagesReport as ReturnType<typeof vi.fn>).mockClear();
    for (let i = 0; i < 10; i++) {
      emit({ type: 'node.changed', payload: { node: 'a', topic: '/images/update', name: `r${i}` } });
      await vi.advanceTimersByTimeAsync(50);
    }
    expect(api.getImagesReport).not.toHaveBeenCalled(); // still bursting
    await vi.advanceTimersByTimeAsync(400);
    expect(api.getImagesReport).toHaveBeenCalledTimes(1);
    expect(api.getImagesReport).toHaveBeenCalledWith({ node: 'a' });
    // A steady stream of events still refreshes (never later than 4 × the debounce after the first).
    (api.getImagesReport as ReturnType<typeof vi.fn>).mockClear();
    for (let i = 0; i < 20; i++) {
      emit({ type: 'node.changed', payload: { node: 'a', topic: '/images/update', name: `r${i}` } });
      await vi.advanceTimersByTimeAsync(100);
    }
    expect((api.getImagesReport as ReturnType<typeof vi.fn>).mock.calls.length).toBeGreaterThanOrEqual(1);
    await vi.advanceTimersByTimeAsync(1000);
    // A node whose images were never shown is not loaded because of an event.
    store.setState((s) => ({ images: { a: s.images['a']! } }));
    (api.getImagesReport as ReturnType<typeof vi.fn>).mockClear();
    emit({ type: 'node.changed', payload: { node: 'b', topic: '/images/create', name: 'x' } });
    await vi.advanceTimersByTimeAsync(1000);
    expect(api.getImagesReport).not.toHaveBeenCalled();
    stop();
  });

  it('node.status: reconnecting shows a countdown and the attempt; connected clears it', async () => {
    const { api, emit } = liveApi();
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().startLive();
    emit({ type: 'node.status', payload: { name: 'a', state: 'reconnecting', attempt: 2, retryInMs: 4000 } });
    const s = store.getState();
    const now = Date.now();
    expect(displayStatus(s.statuses['a']!, s.live['a'], now)).toMatchObject({ dot: 'reconnecting', text: 'Reconnecting in 4 s…', attempt: 2 });
    expect(displayStatus(s.statuses['a']!, s.live['a'], now + 2500).text).toBe('Reconnecting in 2 s…');
    expect(displayStatus(s.statuses['a']!, s.live['a'], now + 5000).text).toBe('Reconnecting…');
    emit({ type: 'node.status', payload: { name: 'a', state: 'connected' } });
    const t = store.getState();
    expect(displayStatus(t.statuses['a']!, t.live['a'])).toEqual({ dot: 'connected', text: 'Connected' });
    emit({ type: 'node.status', payload: { name: 'a', state: 'stopped' } });
    expect(store.getState().live['a']).toBeUndefined();
  });

  it('node.status error (a changed host key) turns a connected node into an error to act on', async () => {
    const { api, emit } = liveApi();
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().startLive();
    emit({ type: 'node.status', payload: { name: 'b', state: 'error', error: { code: 'HOST_KEY_CHANGED', message: 'changed' } } });
    expect(store.getState().statuses['b']).toMatchObject({ state: 'error', error: { code: 'HOST_KEY_CHANGED' } });
  });

  it('jobs.changed updates the job in place; the fallback poll is slow once events flow', async () => {
    const { api, emit } = liveApi();
    const store = createAppStore(api);
    await store.getState().init();
    store.getState().startLive();
    const stopPoll = store.getState().startJobPolling();
    await vi.advanceTimersByTimeAsync(0);
    const running = job({ id: 'j1', state: 'running', nodes: [], progress: 0.1 });
    emit({ type: 'jobs.changed', payload: running });
    emit({ type: 'jobs.changed', payload: { ...running, progress: 0.6 } });
    expect(store.getState().jobs).toHaveLength(1);
    expect(store.getState().jobs[0]!.progress).toBe(0.6);
    api.listJobs.mockClear();
    await vi.advanceTimersByTimeAsync(4900);
    expect(api.listJobs).not.toHaveBeenCalled(); // 500 ms polling would have called ~10 times
    stopPoll();
  });
});

describe('windowing', () => {
  it('offsets, index lookup and the visible range with overscan', () => {
    const off = rowOffsets(1000, 50, (i) => (i === 10 ? 300 : 0));
    expect(off[10]).toBe(500);
    expect(off[11]).toBe(850);
    expect(off[1000]).toBe(50 * 1000 + 300);
    expect(indexAt(off, 0)).toBe(0);
    expect(indexAt(off, 849)).toBe(10);
    expect(indexAt(off, 850)).toBe(11);
    expect(visibleRange(off, 5000, 600, 100)).toEqual([indexAt(off, 4900), indexAt(off, 5700) + 1]);
    const [s, e] = visibleRange(off, 1e9, 600, 100);
    expect(e).toBe(1000);
    expect(s).toBeLessThan(1000);
    expect(visibleRange(rowOffsets(0, 50, () => 0), 0, 600, 100)).toEqual([0, 0]);
  });

  it('after a scroll: the rendered rows stay while they cover the viewport; a jump adds only what must show now', () => {
    // Rows of 50 px, a 600 px viewport, 300 px overscan (a third: 100 px = 2 rows).
    const off = rowOffsets(1000, 50, () => 0);
    // The first window: the viewport and 2 rows below (to 700 px), nothing more.
    expect(windowAfterScroll([0, 0], off, 0, 600, 300)).toEqual([0, 15]);
    // Idle time rendered rows 0–39; a step to 1000 px lands on them: the same window, no commit.
    expect(windowAfterScroll([0, 40], off, 1000, 600, 300)).toEqual([0, 40]);
    // Scrolled past what idle time added (viewport rows 30–41, margin to 2200 px): the rows up to
    // 44 come, not the full overscan ahead (to 48); of the rows behind, those within the overscan
    // stay (from 24).
    expect(windowAfterScroll([10, 40], off, 1500, 600, 300)).toEqual([24, 45]);
    expect(visibleRange(off, 1500, 600, 300)).toEqual([24, 49]);
    // The same upward: rows down to 18 come; rows below the overscan (from 39) go.
    expect(windowAfterScroll([24, 60], off, 1000, 600, 300)).toEqual([18, 39]);
    // No row in common (a drag of the scrollbar): just the viewport and its margin.
    expect(windowAfterScroll([0, 40], off, 20_000, 600, 300)).toEqual([398, 415]);
    // The list shrank below the window: measured afresh.
    const short = rowOffsets(20, 50, () => 0);
    expect(windowAfterScroll([0, 40], short, 0, 600, 300)).toEqual([0, 15]);
  });
});

describe('memoised grouping', () => {
  it('groups and counts a reference list once, whoever asks', () => {
    const refs = [] as ImageRef[];
    expect(groupsOfRefs(refs)).toBe(groupsOfRefs(refs));
    expect(countsOfRefs(refs)).toBe(countsOfRefs(refs));
    expect(imagesOf(createAppStore(liveApi().api).getState(), 'x').state).toBe('idle');
  });
});
