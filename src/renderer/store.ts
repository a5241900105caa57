// Application state (zustand, vanilla store so it is testable without React). All node
// access goes through the HoldfastApi passed in; every failure is kept as an ErrorInfo.
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ArgsOf, Envelope, HoldfastApi } from '../shared/contract';
import type {
  ArchiveInfo,
  AuditEntry,
  ErrorInfo,
  ImageRef,
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

export type PinAction = 'pin' | 'unpin';
export type PinTarget = ArgsOf<'pins.plan'>['target'];

export interface AppState {
  nodes: NodeDef[];
  nodesState: 'loading' | 'ready' | 'error';
  nodesError?: ErrorInfo;
  statuses: Record<string, NodeStatus>;
  images: Record<string, ImagesState>;
  archives: Record<string, ArchivesState>;
  audit: Record<string, AuditState>;
  selected: string | null;

  init(): Promise<void>;
  select(name: string): void;
  connect(name: string): Promise<void>;
  /** Forget the connection outcome (e.g. the user declined a host key): back to "not connected". */
  resetStatus(name: string): void;
  trustAndConnect(name: string, fingerprint: string): Promise<ErrorInfo | null>;
  loadImages(name: string): Promise<void>;
  loadArchives(name: string): Promise<void>;
  loadAudit(name: string): Promise<void>;
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
}

export type AppStore = StoreApi<AppState>;

const EMPTY_IMAGES: ImagesState = { state: 'idle', items: [] };
const EMPTY_ARCHIVES: ArchivesState = { state: 'idle', items: [] };
const EMPTY_AUDIT: AuditState = { state: 'idle', items: [] };

export function imagesOf(state: AppState, name: string): ImagesState {
  return state.images[name] ?? EMPTY_IMAGES;
}

export function archivesOf(state: AppState, name: string): ArchivesState {
  return state.archives[name] ?? EMPTY_ARCHIVES;
}

export function auditOf(state: AppState, name: string): AuditState {
  return state.audit[name] ?? EMPTY_AUDIT;
}

export function statusOf(state: AppState, name: string): NodeStatus {
  return state.statuses[name] ?? { name, state: 'unknown' };
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

export function createAppStore(api: HoldfastApi): AppStore {
  // Per-node sequence numbers: a late answer from an older request never overwrites a newer one.
  const connectSeq = new Map<string, number>();
  const imagesSeq = new Map<string, number>();
  const archivesSeq = new Map<string, number>();
  const auditSeq = new Map<string, number>();
  const next = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 0) + 1;
    m.set(k, n);
    return n;
  };
  // Late answers for a node that was edited or removed are dropped.
  const forget = (name: string) => {
    for (const m of [connectSeq, imagesSeq, archivesSeq, auditSeq]) next(m, name);
  };

  return createStore<AppState>()((set, get) => {
    const setStatus = (status: NodeStatus) => set((s) => ({ statuses: { ...s.statuses, [status.name]: status } }));
    const setImages = (name: string, images: ImagesState) => set((s) => ({ images: { ...s.images, [name]: images } }));

    // Shared loader: sequence-guarded, keeps the previous items while reloading and on error.
    const loadList = async <K extends 'archives' | 'audit', T>(
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

    return {
      nodes: [],
      nodesState: 'loading',
      statuses: {},
      images: {},
      archives: {},
      audit: {},
      selected: null,

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
        set({ nodes, nodesState: 'ready', selected });
        // Connect every node so the sidebar shows real status dots; images load for the selected one.
        await Promise.all(nodes.map((n) => get().connect(n.name)));
      },

      select(name) {
        set({ selected: name });
        const status = statusOf(get(), name);
        if (status.state === 'unknown') void get().connect(name);
        else if (status.state === 'connected' && imagesOf(get(), name).state === 'idle') void get().loadImages(name);
      },

      async connect(name) {
        const seq = next(connectSeq, name);
        setStatus({ name, state: 'connecting' });
        const env = await api.connectNode({ name });
        if (connectSeq.get(name) !== seq || !get().nodes.some((n) => n.name === name)) return;
        if (!env.ok) {
          setStatus({ name, state: 'error', error: env.error });
          return;
        }
        setStatus(env.result);
        if (env.result.state === 'connected' && get().selected === name) await get().loadImages(name);
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

      async refreshNode(name) {
        const s = get();
        await Promise.all([
          s.loadImages(name),
          archivesOf(s, name).state !== 'idle' ? s.loadArchives(name) : undefined,
          auditOf(s, name).state !== 'idle' ? s.loadAudit(name) : undefined,
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
          images: without(s.images, name),
          archives: without(s.archives, name),
          audit: without(s.audit, name),
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
            statuses: without(s.statuses, name),
            images: without(s.images, name),
            archives: without(s.archives, name),
            audit: without(s.audit, name),
          };
        });
        const sel = get().selected;
        if (sel) get().select(sel);
        return null;
      },
    };
  });
}
