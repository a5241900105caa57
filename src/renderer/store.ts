// Application state (zustand, vanilla store so it is testable without React). All node
// access goes through the HoldfastApi passed in; every failure is kept as an ErrorInfo.
import { createStore, type StoreApi } from 'zustand/vanilla';
import { isJobFinished, nodesToRetry } from './model';
import type { ArgsOf, Envelope, LiveEvent, NodeLiveStatus } from '../shared/contract';
import type { ClientApi } from './api';
import type { FleetNodeResult, FleetReport } from '../shared/fleet';
import type { DiskPicture } from '../shared/diskPicture';
import type { PrunePlan, PruneResult } from '../shared/prunePlan';
import type {
  ArchiveInfo,
  AuditEntry,
  CredentialRequest,
  ErrorInfo,
  ImageRef,
  Job,
  LocalArchive,
  LostPin,
  NodeDef,
  NodeInput,
  NodeStatus,
  PinPlan,
  RemovalCheck,
} from '../shared/domain';

/** One per-node list loaded from the node: images, archives or the audit log. */
export interface ListState<T> {
  state: 'idle' | 'loading' | 'ready' | 'error';
  items: T[];
  error?: ErrorInfo;
  loadedAt?: number;
}

export type ImagesState = ListState<ImageRef>;
export type ArchivesState = ListState<ArchiveInfo>;
export type AuditState = ListState<AuditEntry>;
export type LostPinsState = ListState<LostPin>;

/** A node's disk picture; `full` once it includes the image store and the GC forecast. */
export interface DiskState {
  state: 'idle' | 'loading' | 'ready' | 'error';
  picture?: DiskPicture;
  error?: ErrorInfo;
  loadedAt?: number;
  full: boolean;
}

/** Pins found lost while the app was watching (live `pins.lost` events), newest last, until dismissed. */
export interface PinAlert {
  id: number;
  node: string;
  lost: LostPin[];
  /** When the event arrived (ms since epoch). */
  at: number;
}

export type PinAction = 'pin' | 'unpin';
export type PinTarget = ArgsOf<'pins.plan'>['target'];

/** One archive chosen in the import wizard, and what inspecting it on this machine found. */
export interface DraftArchive {
  path: string;
  state: 'inspecting' | 'ok' | 'refused' | 'error';
  archive?: LocalArchive;
  error?: ErrorInfo;
}

export type WizardStep = 'choose' | 'review' | 'nodes' | 'run' | 'summary';

/** The import wizard lives in the store so it keeps its step while the user looks at a node. */
export interface ImportWizardState {
  step: WizardStep;
  archives: DraftArchive[];
  nodes: string[];
  pin: boolean;
  removeArchive: boolean;
  /** The jobs this wizard started, one per archive (a re-run replaces its archive's job). */
  jobIds: string[];
  /** startImport calls refused before any job existed (e.g. the archive changed since review). */
  startErrors: { path: string; error: ErrorInfo }[];
  starting: boolean;
}

/** Optional capabilities of the desktop bridge (absent in the browser UI). */
export interface StoreEnv {
  /** Local path of a dropped File (Electron's webUtils.getPathForFile, through the preload). */
  pathForFile?: ((file: File) => string) | null;
  /** Poll intervals for jobs.list (ms): while something runs, and otherwise. */
  pollRunningMs?: number;
  pollIdleMs?: number;
  /** Quiet time after a node.changed event before the node's views reload (ms). */
  refreshDebounceMs?: number;
}

/** A node's live watcher as last reported, with when its next retry is due (ms since epoch). */
export type LiveView = NodeLiveStatus & { retryAt?: number };

export type View = 'fleet' | 'matrix' | 'node' | 'import';

/**
 * The fleet matrix's inspection: the run in progress (results as nodes answer) and the last
 * full report. Secrets never live here.
 */
export interface FleetRunState {
  state: 'idle' | 'starting' | 'running' | 'done' | 'error';
  runId: string | null;
  /** The nodes the run covers, in report order. */
  nodes: string[];
  /** Results received so far (fleet.node events), by node. */
  results: Record<string, FleetNodeResult>;
  report: FleetReport | null;
  error?: ErrorInfo;
  /** The group the run was limited to ('' = every node). */
  group: string;
}

export const IDLE_FLEET_RUN: FleetRunState = { state: 'idle', runId: null, nodes: [], results: {}, report: null, group: '' };

export function emptyWizard(nodes: string[] = []): ImportWizardState {
  return { step: 'choose', archives: [], nodes, pin: true, removeArchive: true, jobIds: [], startErrors: [], starting: false };
}

export interface AppState {
  nodes: NodeDef[];
  nodesState: 'loading' | 'ready' | 'error';
  nodesError?: ErrorInfo;
  statuses: Record<string, NodeStatus>;
  images: Record<string, ImagesState>;
  archives: Record<string, ArchivesState>;
  audit: Record<string, AuditState>;
  /** Durable pins Holdfast made that are gone, per node (loaded with the node's images). */
  lostPins: Record<string, LostPinsState>;
  /** Disk pictures per node (the Disk tab loads the full one, the fleet overview only file systems). */
  disk: Record<string, DiskState>;
  pinAlerts: PinAlert[];
  selected: string | null;
  /** What the main area shows: the fleet overview, the selected node, or the import wizard. */
  view: View;
  /** Live watcher state per node (from node.status events); absent: no watcher. */
  live: Record<string, LiveView>;
  wizard: ImportWizardState;
  jobs: Job[];
  jobsState: 'idle' | 'loading' | 'ready' | 'error';
  jobsError?: ErrorInfo;
  jobsOpen: boolean;
  /** Desktop only: the local path of a dropped file; null in the browser UI. */
  pathForFile: ((file: File) => string) | null;
  /**
   * Open credential requests, oldest first (what is asked, never what was answered: answers
   * live only in the dialog's inputs until sent).
   */
  credentials: CredentialRequest[];
  fleetRun: FleetRunState;

  init(): Promise<void>;
  /** Requests opened before this window listened (or whose event was missed): merged into the queue. */
  loadPendingCredentials(): Promise<void>;
  /** Send the answers (null = Cancel) for one request and drop it from the queue; nothing is kept. */
  answerCredentials(id: string, answers: string[] | null): Promise<ErrorInfo | null>;
  /** The fleet matrix view; loads the last report when there is none yet. */
  showMatrix(): void;
  loadLastFleetReport(): Promise<void>;
  /** The last report as a file (HTML, CSV or JSON); the content is not kept in the store. */
  exportFleetReport(format: ArgsOf<'fleet.export'>['format']): Promise<Envelope<{ filename: string; mime: string; content: string }>>;
  /** Inspect every node, or one group's. */
  startFleet(group?: string): Promise<ErrorInfo | null>;
  select(name: string): void;
  /** The fleet overview: every node with its counts; loads images of connected nodes. */
  showFleet(): void;
  /** Connect every node that is not connected (or connecting) yet. */
  connectAll(): Promise<void>;
  /** Follow live events (no-op without a transport for them); returns the stop function. */
  startLive(): () => void;
  /** Apply one live event (exposed for tests). */
  applyEvent(e: LiveEvent): void;
  connect(name: string): Promise<void>;
  /** Forget the connection outcome (e.g. the user declined a host key): back to "not connected". */
  resetStatus(name: string): void;
  trustAndConnect(name: string, fingerprint: string): Promise<ErrorInfo | null>;
  loadImages(name: string): Promise<void>;
  loadArchives(name: string): Promise<void>;
  loadAudit(name: string): Promise<void>;
  loadLostPins(name: string): Promise<void>;
  /** The node's disk picture; images: false asks only for file systems and thresholds (never replaces a full one). */
  loadDisk(name: string, opts?: { images?: boolean }): Promise<void>;
  /** What prune would remove (nothing changes). */
  planPrune(node: string, keepVersions: number): Promise<Envelope<PrunePlan>>;
  /** Removes the previewed images (by key) the node still allows; refreshes the node's views. */
  applyPrune(node: string, keepVersions: number, images: string[], confirm: string): Promise<Envelope<PruneResult>>;
  dismissPinAlert(id: number): void;
  /** After a change on the node: reload images, and archives and log if they were shown. */
  refreshNode(name: string): Promise<void>;
  /** Previews (nothing changes on the node). */
  planPins(node: string, action: PinAction, target: PinTarget): Promise<Envelope<PinPlan>>;
  checkArchiveRemoval(node: string, path: string): Promise<Envelope<RemovalCheck>>;
  /** Changes; each refreshes the node's views afterwards, whatever the outcome. */
  applyPins(node: string, action: PinAction, target: PinTarget): Promise<Envelope<PinPlan>>;
  removeArchive(node: string, path: string, force?: { confirm: string }): Promise<Envelope<AuditEntry>>;
  addNode(input: NodeInput): Promise<ErrorInfo | null>;
  updateNode(name: string, input: NodeInput): Promise<ErrorInfo | null>;
  removeNode(name: string): Promise<ErrorInfo | null>;

  openImport(): void;
  closeImport(): void;
  /** Start over with an empty wizard (the jobs it started keep running in the jobs panel). */
  resetImport(): void;
  setWizard(patch: Partial<Pick<ImportWizardState, 'step' | 'nodes' | 'pin' | 'removeArchive'>>): void;
  /** Add archives by path (deduplicated) and inspect each on this machine. */
  addArchivePaths(paths: string[]): void;
  removeArchivePath(path: string): void;
  /** The native file dialog (desktop); resolves to the error when there is none. */
  pickArchives(): Promise<ErrorInfo | null>;
  /** One startImport per archive that passed inspection; moves the wizard to "run". */
  startImports(): Promise<void>;
  /** Start a job's archive again on the nodes that failed (the import is idempotent). */
  retryJob(id: string): Promise<ErrorInfo | null>;
  loadJobs(): Promise<void>;
  cancelJob(id: string): Promise<ErrorInfo | null>;
  setJobsOpen(open: boolean): void;
  /** Poll jobs.list (fast while anything runs, slowly otherwise); returns a stop function. */
  startJobPolling(): () => void;
}

export type AppStore = StoreApi<AppState>;

const EMPTY_IMAGES: ImagesState = { state: 'idle', items: [] };
const EMPTY_ARCHIVES: ArchivesState = { state: 'idle', items: [] };
const EMPTY_AUDIT: AuditState = { state: 'idle', items: [] };
const EMPTY_LOST: LostPinsState = { state: 'idle', items: [] };
const EMPTY_DISK: DiskState = { state: 'idle', full: false };

export function imagesOf(state: AppState, name: string): ImagesState {
  return state.images[name] ?? EMPTY_IMAGES;
}

export function archivesOf(state: AppState, name: string): ArchivesState {
  return state.archives[name] ?? EMPTY_ARCHIVES;
}

export function auditOf(state: AppState, name: string): AuditState {
  return state.audit[name] ?? EMPTY_AUDIT;
}

export function lostPinsOf(state: AppState, name: string): LostPinsState {
  return state.lostPins[name] ?? EMPTY_LOST;
}

export function diskOf(state: AppState, name: string): DiskState {
  return state.disk[name] ?? EMPTY_DISK;
}

export function statusOf(state: AppState, name: string): NodeStatus {
  return state.statuses[name] ?? { name, state: 'unknown' };
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

export function createAppStore(api: ClientApi, env: StoreEnv = {}): AppStore {
  // With live jobs.changed events the poll is only a slow safety net.
  const hasLive = typeof api.onEvent === 'function';
  const pollRunningMs = env.pollRunningMs ?? (hasLive ? 5000 : 500);
  const pollIdleMs = env.pollIdleMs ?? (hasLive ? 20_000 : 4000);
  const refreshDebounceMs = env.refreshDebounceMs ?? 300;
  /** Pending node.changed refreshes: trailing debounce, but never later than 4× the debounce after the first event. */
  const pendingRefresh = new Map<string, { timer: ReturnType<typeof setTimeout>; firstAt: number }>();
  let pollKick: (() => void) | null = null;
  let jobsSeq = 0;
  // Per-node sequence numbers: a late answer from an older request never overwrites a newer one.
  const connectSeq = new Map<string, number>();
  const imagesSeq = new Map<string, number>();
  const archivesSeq = new Map<string, number>();
  const auditSeq = new Map<string, number>();
  const lostSeq = new Map<string, number>();
  const diskSeq = new Map<string, number>();
  let alertSeq = 0;
  const next = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 0) + 1;
    m.set(k, n);
    return n;
  };
  // Late answers for a node that was edited or removed are dropped.
  const forget = (name: string) => {
    for (const m of [connectSeq, imagesSeq, archivesSeq, auditSeq, lostSeq, diskSeq]) next(m, name);
  };
  // Requests this window answered: a late pending list or a repeated event never reopens them.
  const answered = new Set<string>();
  // fleet.node events that arrived before startFleetInspection answered with their runId.
  const earlyFleet = new Map<string, FleetNodeResult[]>();
  const earlyDone = new Map<string, FleetReport>();

  return createStore<AppState>()((set, get) => {
    const setStatus = (status: NodeStatus) => set((s) => ({ statuses: { ...s.statuses, [status.name]: status } }));
    const setImages = (name: string, images: ImagesState) => set((s) => ({ images: { ...s.images, [name]: images } }));

    // Shared loader: sequence-guarded, keeps the previous items while reloading and on error.
    const loadList = async <K extends 'archives' | 'audit' | 'lostPins', T>(
      key: K,
      seqs: Map<string, number>,
      name: string,
      fetchList: () => Promise<Envelope<T[]>>,
    ) => {
      const seq = next(seqs, name);
      const prev = (get()[key][name] ?? { state: 'idle', items: [] }) as ListState<T>;
      const put = (v: ListState<T>) => set((s) => ({ [key]: { ...s[key], [name]: v } }) as Partial<AppState>);
      put({ ...prev, state: 'loading', error: undefined });
      const env = await fetchList();
      if (seqs.get(name) !== seq) return;
      if (!env.ok) put({ ...prev, state: 'error', error: env.error });
      else put({ state: 'ready', items: env.result, loadedAt: Date.now() });
    };

    const afterMutation = async (env: Envelope<unknown>): Promise<ErrorInfo | null> => (env.ok ? null : env.error);

    /** A job answer from startImport/cancel or a jobs.changed event, merged in place. */
    const upsertJob = (job: Job) => {
      const before = new Map(get().jobs.map((j) => [j.id, j]));
      set((s) => ({
        jobs: s.jobs.some((j) => j.id === job.id) ? s.jobs.map((j) => (j.id === job.id ? job : j)) : [job, ...s.jobs],
        ...(s.jobsState !== 'ready' ? { jobsState: 'ready' as const } : {}),
      }));
      afterJobsChanged(before);
    };

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

    /**
     * Jobs seen running before and finished now changed their nodes: refresh the views of those
     * nodes that were loaded. The wizard moves on to its summary once all of its jobs are done.
     */
    const afterJobsChanged = (before: Map<string, Job>) => {
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
    };

    return {
      nodes: [],
      nodesState: 'loading',
      statuses: {},
      images: {},
      archives: {},
      audit: {},
      lostPins: {},
      disk: {},
      pinAlerts: [],
      selected: null,
      view: 'node',
      live: {},
      wizard: emptyWizard(),
      jobs: [],
      jobsState: 'idle',
      jobsOpen: false,
      pathForFile: env.pathForFile ?? null,
      credentials: [],
      fleetRun: IDLE_FLEET_RUN,

      async loadPendingCredentials() {
        // An older bridge without the operation, or a failing transport: nothing to ask.
        if (typeof api.pendingCredentials !== 'function') return;
        const env = await api.pendingCredentials({}).catch(() => null);
        if (!env?.ok) return;
        const open = new Set(env.result.map((r) => r.id));
        set((s) => {
          // Drop what the other side no longer has open (answered elsewhere, timed out), add what is new.
          const kept = s.credentials.filter((r) => open.has(r.id));
          const fresh = env.result.filter((r) => !answered.has(r.id) && !kept.some((k) => k.id === r.id));
          return { credentials: [...kept, ...fresh] };
        });
      },

      async answerCredentials(id, answers) {
        answered.add(id);
        set((s) => ({ credentials: s.credentials.filter((r) => r.id !== id) }));
        const env = await api.answerCredentials({ id, answers });
        return env.ok ? null : env.error;
      },

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
            ? {
                fleetRun: {
                  ...s.fleetRun,
                  state: 'done',
                  report,
                  nodes: report.nodes.map((n) => n.node),
                  results: Object.fromEntries(report.nodes.map((n) => [n.node, n])),
                },
              }
            : {},
        );
      },

      exportFleetReport: (format) => api.exportFleetReport({ format }),

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

      async init() {
        set({ nodesState: 'loading', nodesError: undefined });
        const env = await api.listNodes({});
        if (!env.ok) {
          set({ nodesState: 'error', nodesError: env.error });
          return;
        }
        const nodes = env.result;
        const current = get().selected;
        const selected = current && nodes.some((n) => n.name === current) ? current : (nodes[0]?.name ?? null);
        // Several nodes: land on the fleet overview; one node: straight to it.
        const view: View = get().view === 'import' ? 'import' : nodes.length > 1 ? 'fleet' : 'node';
        set({ nodes, nodesState: 'ready', selected, view });
        // Connect every node so the sidebar shows real status dots; images load for the selected one.
        await Promise.all(nodes.map((n) => get().connect(n.name)));
      },

      select(name) {
        set({ selected: name, view: 'node' });
        const status = statusOf(get(), name);
        if (status.state === 'unknown') void get().connect(name);
        else if (status.state === 'connected' && imagesOf(get(), name).state === 'idle') void get().loadImages(name);
      },

      async connect(name) {
        const seq = next(connectSeq, name);
        setStatus({ name, state: 'connecting' });
        // A connection waiting for a secret: if its credentials.request event was missed (the
        // window subscribed after it), the pending list still brings the question up.
        const ask = setTimeout(() => {
          if (connectSeq.get(name) === seq && statusOf(get(), name).state === 'connecting') void get().loadPendingCredentials();
        }, 1000);
        const env = await api.connectNode({ name });
        clearTimeout(ask);
        if (connectSeq.get(name) !== seq || !get().nodes.some((n) => n.name === name)) return;
        if (!env.ok) {
          setStatus({ name, state: 'error', error: env.error });
          return;
        }
        setStatus(env.result);
        const s = get();
        if (env.result.state === 'connected' && s.view === 'fleet') void s.loadDisk(name, { images: false });
        if (env.result.state === 'connected' && (s.view === 'fleet' || s.selected === name)) await s.loadImages(name);
      },

      showFleet() {
        set({ view: 'fleet' });
        const s = get();
        for (const n of s.nodes) {
          if (statusOf(s, n.name).state === 'connected' && imagesOf(s, n.name).state === 'idle') void s.loadImages(n.name);
          if (statusOf(s, n.name).state === 'connected' && diskOf(s, n.name).state === 'idle') void s.loadDisk(n.name, { images: false });
        }
      },

      async connectAll() {
        const s = get();
        const todo = s.nodes.filter((n) => !['connected', 'connecting'].includes(statusOf(s, n.name).state));
        await Promise.all(todo.map((n) => s.connect(n.name)));
      },

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
                pinAlerts: [...s.pinAlerts, { id: ++alertSeq, node, lost: lostPins, at: Date.now() }].slice(-20),
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
            set((s) => ({
              fleetRun: {
                ...s.fleetRun,
                state: 'done',
                report,
                nodes: report.nodes.map((n) => n.node),
                results: Object.fromEntries(report.nodes.map((n) => [n.node, n])),
              },
            }));
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

      resetStatus(name) {
        next(connectSeq, name);
        setStatus({ name, state: 'unknown' });
      },

      async trustAndConnect(name, fingerprint) {
        const env = await api.trustHostKey({ name, fingerprint });
        if (!env.ok) return env.error;
        await get().connect(name);
        return null;
      },

      async loadImages(name) {
        // Lost pins come along with the images (in parallel: the images do not wait for them).
        void get().loadLostPins(name);
        const seq = next(imagesSeq, name);
        const prev = imagesOf(get(), name);
        setImages(name, { ...prev, state: 'loading', error: undefined });
        const env = await api.listImages({ node: name });
        if (imagesSeq.get(name) !== seq) return;
        if (!env.ok) setImages(name, { ...prev, state: 'error', error: env.error });
        else setImages(name, { state: 'ready', items: env.result, loadedAt: Date.now() });
      },

      loadArchives: (name) => loadList('archives', archivesSeq, name, () => api.listArchives({ node: name })),
      loadAudit: (name) => loadList('audit', auditSeq, name, () => api.listAudit({ node: name })),
      loadLostPins: async (name) => {
        // An older bridge without the operation: nothing to show.
        if (typeof api.listLostPins !== 'function') return;
        await loadList('lostPins', lostSeq, name, () => api.listLostPins({ node: name }));
      },

      async loadDisk(name, opts = {}) {
        // An older bridge without the operation: no disk picture.
        if (typeof api.getDiskPicture !== 'function') return;
        const prev = diskOf(get(), name);
        const full = opts.images !== false;
        if (!full && prev.full && prev.picture) return; // never replace the full picture by a smaller one
        const seq = next(diskSeq, name);
        const put = (v: DiskState) => set((s) => ({ disk: { ...s.disk, [name]: v } }));
        put({ ...prev, state: 'loading', error: undefined });
        const env = await api.getDiskPicture(full ? { node: name } : { node: name, images: false });
        if (diskSeq.get(name) !== seq) return;
        if (!env.ok) put({ ...prev, state: 'error', error: env.error });
        else put({ state: 'ready', picture: env.result, loadedAt: Date.now(), full });
      },

      planPrune: (node, keepVersions) => api.planPrune({ node, keepVersions }),

      async applyPrune(node, keepVersions, images, confirm) {
        const env = await api.applyPrune({ node, keepVersions, images, confirm });
        // Refresh even on failure: some images may be gone already.
        await get().refreshNode(node);
        return env;
      },

      dismissPinAlert(id) {
        set((s) => ({ pinAlerts: s.pinAlerts.filter((a) => a.id !== id) }));
      },

      async refreshNode(name) {
        const s = get();
        await Promise.all([
          s.loadImages(name),
          archivesOf(s, name).state !== 'idle' ? s.loadArchives(name) : undefined,
          auditOf(s, name).state !== 'idle' ? s.loadAudit(name) : undefined,
          diskOf(s, name).state !== 'idle' ? s.loadDisk(name, { images: diskOf(s, name).full }) : undefined,
        ]);
      },

      planPins: (node, action, target) => api.planPins({ node, action, target }),
      checkArchiveRemoval: (node, path) => api.checkArchiveRemoval({ node, path }),

      async applyPins(node, action, target) {
        const env = await api.applyPins({ node, action, target });
        // Refresh even on failure: a partial apply may have changed some labels.
        await get().refreshNode(node);
        return env;
      },

      async removeArchive(node, path, force) {
        const env = await api.removeArchive(force ? { node, path, force: true, confirm: force.confirm } : { node, path });
        await get().refreshNode(node);
        return env;
      },

      async addNode(input) {
        const env = await api.addNode({ node: input });
        if (!env.ok) return afterMutation(env);
        const node = env.result;
        set((s) => ({ nodes: [...s.nodes.filter((n) => n.name !== node.name), node], selected: node.name }));
        void get().connect(node.name);
        return null;
      },

      async updateNode(name, input) {
        const env = await api.updateNode({ name, node: input });
        if (!env.ok) return afterMutation(env);
        const node = env.result;
        forget(name);
        set((s) => ({
          nodes: s.nodes.map((n) => (n.name === name ? node : n)),
          statuses: without(s.statuses, name),
          live: without(s.live, name),
          images: without(s.images, name),
          archives: without(s.archives, name),
          audit: without(s.audit, name),
          lostPins: without(s.lostPins, name),
          disk: without(s.disk, name),
          pinAlerts: s.pinAlerts.filter((a) => a.node !== name),
          selected: s.selected === name ? node.name : s.selected,
        }));
        // Connection settings may have changed: connect afresh.
        void get().connect(node.name);
        return null;
      },

      async removeNode(name) {
        const env = await api.removeNode({ name });
        if (!env.ok) return afterMutation(env);
        forget(name);
        set((s) => {
          const nodes = s.nodes.filter((n) => n.name !== name);
          const selected = s.selected === name ? (nodes[0]?.name ?? null) : s.selected;
          return {
            nodes,
            selected,
            ...(nodes.length === 0 && s.view === 'fleet' ? { view: 'node' as const } : {}),
            live: without(s.live, name),
            statuses: without(s.statuses, name),
            images: without(s.images, name),
            archives: without(s.archives, name),
            audit: without(s.audit, name),
            lostPins: without(s.lostPins, name),
            disk: without(s.disk, name),
            pinAlerts: s.pinAlerts.filter((a) => a.node !== name),
          };
        });
        const sel = get().selected;
        if (sel) get().select(sel);
        return null;
      },

      openImport() {
        const s = get();
        // A fresh wizard starts with the node being looked at already ticked.
        const fresh = s.wizard.step === 'choose' && s.wizard.archives.length === 0;
        set({
          view: 'import',
          ...(fresh && s.selected && s.wizard.nodes.length === 0 ? { wizard: { ...s.wizard, nodes: [s.selected] } } : {}),
        });
      },

      closeImport() {
        set({ view: 'node' });
        const sel = get().selected;
        if (sel) get().select(sel);
      },

      resetImport() {
        const sel = get().selected;
        set({ wizard: emptyWizard(sel ? [sel] : []) });
      },

      setWizard(patch) {
        set((s) => {
          const w = { ...s.wizard, ...patch };
          // Removing the archive is only safe once its pins are durable: never one without the other.
          if (!w.pin) w.removeArchive = false;
          return { wizard: w };
        });
      },

      addArchivePaths(paths) {
        const have = new Set(get().wizard.archives.map((a) => a.path));
        const added = [...new Set(paths)].filter((p) => !have.has(p));
        if (added.length === 0) return;
        const putArchive = (path: string, v: DraftArchive) =>
          set((s) => ({ wizard: { ...s.wizard, archives: s.wizard.archives.map((a) => (a.path === path ? v : a)) } }));
        set((s) => ({
          wizard: { ...s.wizard, archives: [...s.wizard.archives, ...added.map((path) => ({ path, state: 'inspecting' as const }))] },
        }));
        for (const path of added) {
          void api.inspectLocalArchive({ path }).then((env) => {
            if (!get().wizard.archives.some((a) => a.path === path)) return; // removed meanwhile
            if (env.ok) putArchive(path, { path, state: 'ok', archive: env.result });
            else putArchive(path, { path, state: env.error.code === 'REFUSED' ? 'refused' : 'error', error: env.error });
          });
        }
      },

      removeArchivePath(path) {
        set((s) => ({ wizard: { ...s.wizard, archives: s.wizard.archives.filter((a) => a.path !== path) } }));
      },

      async pickArchives() {
        const env = await api.pickArchives({});
        if (!env.ok) return env.error;
        get().addArchivePaths(env.result.paths);
        return null;
      },

      async startImports() {
        const w = get().wizard;
        if (w.starting) return;
        const known = new Set(get().nodes.map((n) => n.name));
        const nodes = w.nodes.filter((n) => known.has(n));
        const ready = w.archives.filter((a) => a.state === 'ok');
        if (nodes.length === 0 || ready.length === 0) return;
        set((s) => ({ wizard: { ...s.wizard, starting: true, startErrors: [] } }));
        const jobIds: string[] = [];
        const startErrors: ImportWizardState['startErrors'] = [];
        for (const a of ready) {
          const env = await api.startImport({ nodes, path: a.path, pin: w.pin, removeArchive: w.pin && w.removeArchive });
          if (env.ok) {
            jobIds.push(env.result.id);
            upsertJob(env.result);
          } else startErrors.push({ path: a.path, error: env.error });
        }
        set((s) => ({ wizard: { ...s.wizard, nodes, starting: false, jobIds, startErrors, step: jobIds.length ? 'run' : 'nodes' } }));
        pollKick?.();
      },

      async retryJob(id) {
        const job = get().jobs.find((j) => j.id === id);
        if (!job) return { code: 'NOT_FOUND', message: 'That job is no longer listed.' };
        const nodes = nodesToRetry(job).filter((n) => get().nodes.some((d) => d.name === n));
        if (nodes.length === 0) return { code: 'INVALID_INPUT', message: 'No failed node of this job is still configured.' };
        const env = await api.startImport({ nodes, path: job.archive.path, pin: job.options.pin, removeArchive: job.options.removeArchive });
        if (!env.ok) return env.error;
        upsertJob(env.result);
        set((s) =>
          s.wizard.jobIds.includes(id)
            ? { wizard: { ...s.wizard, jobIds: s.wizard.jobIds.map((j) => (j === id ? env.result.id : j)), step: 'run' } }
            : {},
        );
        pollKick?.();
        return null;
      },

      async loadJobs() {
        const seq = ++jobsSeq;
        if (get().jobsState === 'idle') set({ jobsState: 'loading' });
        const env = await api.listJobs({});
        if (seq !== jobsSeq) return;
        if (!env.ok) {
          set({ jobsState: 'error', jobsError: env.error });
          return;
        }
        const before = new Map(get().jobs.map((j) => [j.id, j]));
        set({ jobs: env.result, jobsState: 'ready', jobsError: undefined });
        afterJobsChanged(before);
      },

      async cancelJob(id) {
        const env = await api.cancelJob({ id });
        if (!env.ok) return env.error;
        upsertJob(env.result);
        pollKick?.();
        return null;
      },

      setJobsOpen(open) {
        set({ jobsOpen: open });
        if (open) pollKick?.();
      },

      startJobPolling() {
        let stopped = false;
        let timer: ReturnType<typeof setTimeout> | null = null;
        let inFlight = false;
        const tick = async () => {
          if (stopped || inFlight) return;
          inFlight = true;
          if (timer) clearTimeout(timer);
          timer = null;
          try {
            await get().loadJobs();
          } finally {
            inFlight = false;
          }
          if (stopped) return;
          const running = get().jobs.some((j) => !isJobFinished(j.state));
          timer = setTimeout(() => void tick(), running ? pollRunningMs : pollIdleMs);
        };
        const kick = () => void tick();
        pollKick = kick;
        void tick();
        return () => {
          stopped = true;
          if (timer) clearTimeout(timer);
          if (pollKick === kick) pollKick = null;
        };
      },
    };
  });
}

export function liveOf(state: AppState, name: string): LiveView | undefined {
  return state.live[name];
}
