// What the store's slices share: the api, zustand's set/get, the per-node request sequence
// numbers, and the few helpers more than one slice needs (a node's status, the list loader, the
// job merge that also moves the wizard on). Each slice gets this one object instead of importing
// another slice, so slices never depend on each other (no import cycles).
import type { StoreApi } from 'zustand/vanilla';
import { isJobFinished } from '../../shared/jobState';
import type { Envelope } from '../../shared/contract';
import type { FleetNodeResult, FleetReport } from '../../shared/fleet';
import type { NodeStatus } from '../../shared/domain/connection';
import type { Job } from '../../shared/domain/jobs';
import type { ClientApi } from '../api';
import { imagesOf } from './selectors';
import type { AppState, ListState, StoreEnv } from './types';

export interface StoreContext {
  api: ClientApi;
  set: StoreApi<AppState>['setState'];
  get: () => AppState;
  env: StoreEnv;
  pollRunningMs: number;
  pollIdleMs: number;
  refreshDebounceMs: number;
  /** Per-node sequence numbers: a late answer from an older request never overwrites a newer one. */
  seq: {
    connect: Map<string, number>;
    images: Map<string, number>;
    archives: Map<string, number>;
    audit: Map<string, number>;
    lost: Map<string, number>;
    disk: Map<string, number>;
  };
  next(m: Map<string, number>, k: string): number;
  /** Late answers for a node that was edited or removed are dropped. */
  forget(name: string): void;
  /** Pending node.changed refreshes: trailing debounce, but never later than 4× the debounce after the first event. */
  pendingRefresh: Map<string, { timer: ReturnType<typeof setTimeout>; firstAt: number }>;
  /** Runs the job poll now (set while startJobPolling runs). */
  pollKick: (() => void) | null;
  jobsSeq: number;
  alertSeq: number;
  /** Requests this window answered: a late pending list or a repeated event never reopens them. */
  answered: Set<string>;
  /** fleet.node events that arrived before startFleetInspection answered with their runId. */
  earlyFleet: Map<string, FleetNodeResult[]>;
  earlyDone: Map<string, FleetReport>;
  setStatus(status: NodeStatus): void;
  /** Shared loader: sequence-guarded, keeps the previous items while reloading and on error. */
  loadList<K extends 'archives' | 'audit' | 'lostPins', T>(
    key: K,
    seqs: Map<string, number>,
    name: string,
    fetchList: () => Promise<Envelope<T[]>>,
  ): Promise<void>;
  /** A job answer from startImport/cancel or a jobs.changed event, merged in place. */
  upsertJob(job: Job): void;
  /**
   * Jobs seen running before and finished now changed their nodes: refresh the views of those
   * nodes that were loaded. The wizard moves on to its summary once all of its jobs are done.
   */
  afterJobsChanged(before: Map<string, Job>): void;
}

export function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

/** What the store holds per node, cleared: for a node removed, or renamed and reconnected. */
export function withoutNodeData(s: AppState, name: string): Pick<AppState, 'statuses' | 'live' | 'images' | 'archives' | 'audit' | 'lostPins' | 'disk' | 'pinAlerts'> {
  return {
    statuses: without(s.statuses, name),
    live: without(s.live, name),
    images: without(s.images, name),
    archives: without(s.archives, name),
    audit: without(s.audit, name),
    lostPins: without(s.lostPins, name),
    disk: without(s.disk, name),
    pinAlerts: s.pinAlerts.filter((a) => a.node !== name),
  };
}

/** A fleet run that has its report (from the run's answer or from its finished event). */
export function fleetRunDone(run: AppState['fleetRun'], report: FleetReport): AppState['fleetRun'] {
  return {
    ...run,
    state: 'done',
    report,
    nodes: report.nodes.map((n) => n.node),
    results: Object.fromEntries(report.nodes.map((n) => [n.node, n])),
  };
}

export function createStoreContext(api: ClientApi, env: StoreEnv, set: StoreContext['set'], get: () => AppState): StoreContext {
  // With live jobs.changed events the poll is only a slow safety net.
  const hasLive = typeof api.onEvent === 'function';
  const next = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 0) + 1;
    m.set(k, n);
    return n;
  };
  const seq: StoreContext['seq'] = {
    connect: new Map(),
    images: new Map(),
    archives: new Map(),
    audit: new Map(),
    lost: new Map(),
    disk: new Map(),
  };

  const ctx: StoreContext = {
    api,
    set,
    get,
    env,
    pollRunningMs: env.pollRunningMs ?? (hasLive ? 5000 : 500),
    pollIdleMs: env.pollIdleMs ?? (hasLive ? 20_000 : 4000),
    refreshDebounceMs: env.refreshDebounceMs ?? 300,
    seq,
    next,
    forget(name) {
      for (const m of Object.values(seq)) next(m, name);
    },
    pendingRefresh: new Map(),
    pollKick: null,
    jobsSeq: 0,
    alertSeq: 0,
    answered: new Set(),
    earlyFleet: new Map(),
    earlyDone: new Map(),

    setStatus: (status) => set((s) => ({ statuses: { ...s.statuses, [status.name]: status } })),

    async loadList<K extends 'archives' | 'audit' | 'lostPins', T>(
      key: K,
      seqs: Map<string, number>,
      name: string,
      fetchList: () => Promise<Envelope<T[]>>,
    ) {
      const seq = next(seqs, name);
      const prev = (get()[key][name] ?? { state: 'idle', items: [] }) as ListState<T>;
      const put = (v: ListState<T>) => set((s) => ({ [key]: { ...s[key], [name]: v } }) as Partial<AppState>);
      put({ ...prev, state: 'loading', error: undefined });
      const env = await fetchList();
      if (seqs.get(name) !== seq) return;
      if (!env.ok) put({ ...prev, state: 'error', error: env.error });
      else put({ state: 'ready', items: env.result, loadedAt: Date.now() });
    },

    upsertJob(job) {
      const before = new Map(get().jobs.map((j) => [j.id, j]));
      set((s) => ({
        jobs: s.jobs.some((j) => j.id === job.id) ? s.jobs.map((j) => (j.id === job.id ? job : j)) : [job, ...s.jobs],
        ...(s.jobsState !== 'ready' ? { jobsState: 'ready' as const } : {}),
      }));
      ctx.afterJobsChanged(before);
    },

    afterJobsChanged(before) {
      const s = get();
      const touched = new Set<string>();
      for (const j of s.jobs) {
        const prev = before.get(j.id);
        if (prev && !isJobFinished(prev.state) && isJobFinished(j.state)) for (const n of j.nodes) touched.add(n.node);
      }
      for (const n of touched) {
        if (s.nodes.some((d) => d.name === n) && imagesOf(s, n).state !== 'idle') void s.refreshNode(n);
      }
      const w = s.wizard;
      if (w.step === 'run' && w.jobIds.length > 0) {
        const mine = w.jobIds.map((id) => s.jobs.find((j) => j.id === id));
        if (mine.every((j) => j && isJobFinished(j.state))) set({ wizard: { ...w, step: 'summary' } });
      }
    },
  };
  return ctx;
}
