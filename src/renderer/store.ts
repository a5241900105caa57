// Application state (zustand, vanilla store so it is testable without React). All node
// access goes through the HoldfastApi passed in; every failure is kept as an ErrorInfo.
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { Envelope, HoldfastApi } from '../shared/contract';
import type { ErrorInfo, ImageRef, NodeDef, NodeInput, NodeStatus } from '../shared/domain';

export interface ImagesState {
  state: 'idle' | 'loading' | 'ready' | 'error';
  items: ImageRef[];
  error?: ErrorInfo;
  loadedAt?: number;
}

export interface AppState {
  nodes: NodeDef[];
  nodesState: 'loading' | 'ready' | 'error';
  nodesError?: ErrorInfo;
  statuses: Record<string, NodeStatus>;
  images: Record<string, ImagesState>;
  selected: string | null;

  init(): Promise<void>;
  select(name: string): void;
  connect(name: string): Promise<void>;
  /** Forget the connection outcome (e.g. the user declined a host key): back to "not connected". */
  resetStatus(name: string): void;
  trustAndConnect(name: string, fingerprint: string): Promise<ErrorInfo | null>;
  loadImages(name: string): Promise<void>;
  addNode(input: NodeInput): Promise<ErrorInfo | null>;
  updateNode(name: string, input: NodeInput): Promise<ErrorInfo | null>;
  removeNode(name: string): Promise<ErrorInfo | null>;
}

export type AppStore = StoreApi<AppState>;

const EMPTY_IMAGES: ImagesState = { state: 'idle', items: [] };

export function imagesOf(state: AppState, name: string): ImagesState {
  return state.images[name] ?? EMPTY_IMAGES;
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
  const next = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 0) + 1;
    m.set(k, n);
    return n;
  };

  return createStore<AppState>()((set, get) => {
    const setStatus = (status: NodeStatus) => set((s) => ({ statuses: { ...s.statuses, [status.name]: status } }));
    const setImages = (name: string, images: ImagesState) => set((s) => ({ images: { ...s.images, [name]: images } }));

    const afterMutation = async (env: Envelope<unknown>): Promise<ErrorInfo | null> => (env.ok ? null : env.error);

    return {
      nodes: [],
      nodesState: 'loading',
      statuses: {},
      images: {},
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
        next(connectSeq, name);
        next(imagesSeq, name);
        set((s) => ({
          nodes: s.nodes.map((n) => (n.name === name ? node : n)),
          statuses: without(s.statuses, name),
          images: without(s.images, name),
          selected: s.selected === name ? node.name : s.selected,
        }));
        // Connection settings may have changed: connect afresh.
        void get().connect(node.name);
        return null;
      },

      async removeNode(name) {
        const env = await api.removeNode({ name });
        if (!env.ok) return afterMutation(env);
        next(connectSeq, name);
        next(imagesSeq, name);
        set((s) => {
          const nodes = s.nodes.filter((n) => n.name !== name);
          const selected = s.selected === name ? (nodes[0]?.name ?? null) : s.selected;
          return { nodes, selected, statuses: without(s.statuses, name), images: without(s.images, name) };
        });
        const sel = get().selected;
        if (sel) get().select(sel);
        return null;
      },
    };
  });
}
