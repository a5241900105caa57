// The fleet matrix: one inspection of every node (or one group's) at a time, its results as nodes
// answer, the last full report and its export. Live fleet.node/fleet.done events land in live.ts.
import { fleetRunDone, type StoreContext } from './context';
import type { AppState, FleetRunState } from './types';

export const IDLE_FLEET_RUN: FleetRunState = { state: 'idle', runId: null, nodes: [], results: {}, report: null, group: '' };

export function createFleetSlice(ctx: StoreContext): Pick<
  AppState,
  | 'fleetRun'
  | 'showMatrix'
  | 'loadLastFleetReport'
  | 'exportFleetReport'
  | 'savePinSet'
  | 'startFleet'
> {
  const { api, set, get, earlyFleet, earlyDone } = ctx;
  return {
    fleetRun: IDLE_FLEET_RUN,

    showMatrix() {
      set({ view: 'matrix' });
      const f = get().fleetRun;
      if (f.state === 'idle' && !f.report) void get().loadLastFleetReport();
    },
    async loadLastFleetReport() {
      const env = await api.lastFleetReport({});
      if (!env.ok || !env.result) return;
      const report = env.result;
      set((s) =>
        s.fleetRun.state === 'idle'
          ? { fleetRun: fleetRunDone(s.fleetRun, report) }
          : {},
      );
    },
    exportFleetReport: (format) => api.exportFleetReport({ format }),
    savePinSet: (args) => api.savePinSet(args),
    async startFleet(group = '') {
      set((s) => ({ fleetRun: { ...s.fleetRun, state: 'starting', error: undefined, group } }));
      earlyFleet.clear();
      earlyDone.clear();
      const env = await api.startFleetInspection(group ? { group } : {});
      if (!env.ok) {
        set((s) => ({ fleetRun: { ...s.fleetRun, state: 'error', error: env.error } }));
        return env.error;
      }
      const { runId, nodes } = env.result;
      const early = earlyFleet.get(runId) ?? [];
      set((s) => ({
        fleetRun: {
          state: 'running',
          runId,
          nodes,
          group,
          results: Object.fromEntries(early.map((r) => [r.node, r])),
          // The previous report stays until this run's arrives (shown dimmed behind the progress).
          report: s.fleetRun.report,
        },
      }));
      earlyFleet.clear();
      const done = earlyDone.get(runId);
      earlyDone.clear();
      if (done) get().applyEvent({ type: 'fleet.done', payload: { runId, report: done } });
      return null;
    },
  };
}
