// Live events: following the event stream and applying each event to the state it concerns (jobs,
// node changes and lost pins, credential requests, fleet runs, live watcher status). The one place
// that knows every event type, so the other slices stay unaware of the transport.
import { fleetRunDone, without, type StoreContext } from './context';
import { imagesOf, lostPinsOf, statusOf } from './selectors';
import type { AppState } from './types';

export function createLiveSlice(ctx: StoreContext): Pick<
  AppState,
  | 'live'
  | 'startLive'
  | 'applyEvent'
> {
  const { api, set, get, setStatus, upsertJob, answered, earlyFleet, earlyDone, pendingRefresh, refreshDebounceMs } = ctx;

  /** node.changed: reload the node's loaded views once the burst of events is over. */
  const scheduleRefresh = (name: string) => {
    const now = Date.now();
    const prev = pendingRefresh.get(name);
    if (prev) clearTimeout(prev.timer);
    const firstAt = prev?.firstAt ?? now;
    const wait = Math.max(0, Math.min(refreshDebounceMs, firstAt + 4 * refreshDebounceMs - now));
    const timer = setTimeout(() => {
      pendingRefresh.delete(name);
      const s = get();
      if (!s.nodes.some((n) => n.name === name) || imagesOf(s, name).state === 'idle') return;
      void s.refreshNode(name);
    }, wait);
    pendingRefresh.set(name, { timer, firstAt });
  };
  return {
    live: {},

    startLive() {
      if (!api.onEvent) return () => undefined;
      const off = api.onEvent((e) => get().applyEvent(e));
      void get().loadPendingCredentials();
      return () => {
        off();
        for (const p of pendingRefresh.values()) clearTimeout(p.timer);
        pendingRefresh.clear();
      };
    },
    applyEvent(e) {
      if (e.type === 'jobs.changed') {
        upsertJob(e.payload);
        return;
      }
      if (e.type === 'node.changed') {
        const { node, lostPins } = e.payload;
        if (e.payload.topic === 'pins.lost' && lostPins?.length && get().nodes.some((n) => n.name === node)) {
          // Shown at once (the list reloads with the node's views); one alert per event until dismissed.
          set((s) => {
            const prev = lostPinsOf(s, node);
            const fresh = lostPins.filter((l) => !prev.items.some((p) => p.ref === l.ref && p.kind === l.kind && p.pinnedAt === l.pinnedAt));
            return {
              lostPins: { ...s.lostPins, [node]: { ...prev, state: prev.state === 'idle' ? 'ready' : prev.state, items: [...prev.items, ...fresh] } },
              pinAlerts: [...s.pinAlerts, { id: ++ctx.alertSeq, node, lost: lostPins, at: Date.now() }].slice(-20),
            };
          });
        }
        scheduleRefresh(node);
        return;
      }
      if (e.type === 'credentials.request') {
        const r = e.payload;
        if (answered.has(r.id)) return;
        set((s) => (s.credentials.some((c) => c.id === r.id) ? {} : { credentials: [...s.credentials, r] }));
        return;
      }
      if (e.type === 'fleet.node' || e.type === 'fleet.done') {
        const f = get().fleetRun;
        if (f.state === 'starting') {
          // Not knowing our runId yet: keep it until startFleetInspection answers.
          if (e.type === 'fleet.node') earlyFleet.set(e.payload.runId, [...(earlyFleet.get(e.payload.runId) ?? []), e.payload.result]);
          else earlyDone.set(e.payload.runId, e.payload.report);
          return;
        }
        if (f.runId !== e.payload.runId || f.state !== 'running') return;
        if (e.type === 'fleet.node') {
          const r = e.payload.result;
          set((s) => ({ fleetRun: { ...s.fleetRun, results: { ...s.fleetRun.results, [r.node]: r } } }));
        } else {
          const report = e.payload.report;
          set((s) => ({ fleetRun: fleetRunDone(s.fleetRun, report) }));
        }
        return;
      }
      if (e.type !== 'node.status') return; // events other views handle
      const p = e.payload;
      if (!get().nodes.some((n) => n.name === p.name)) return;
      if (p.state === 'stopped') {
        set((s) => ({ live: without(s.live, p.name) }));
        return;
      }
      set((s) => ({ live: { ...s.live, [p.name]: { ...p, ...(p.retryInMs !== undefined ? { retryAt: Date.now() + p.retryInMs } : {}) } } }));
      const st = statusOf(get(), p.name);
      if (p.state === 'connected' && st.state === 'connected' && p.info) setStatus({ ...st, info: p.info });
      // Given up (a changed host key, refused credentials): the node needs the user, as after a failed connect.
      if (p.state === 'error' && p.error && st.state === 'connected') setStatus({ name: p.name, state: 'error', error: p.error });
    },
  };
}
