// The configured nodes and their connections: loading the list, selecting one, the fleet
// overview, connecting (one or all), trusting a host key, and adding, editing, removing nodes.
import type { Envelope } from '../../shared/contract';
import type { ErrorInfo } from '../../shared/domain/errors';
import { withoutNodeData, type StoreContext } from './context';
import { diskOf, imagesOf, statusOf } from './selectors';
import type { AppState, View } from './types';

export function createNodesSlice(ctx: StoreContext): Pick<
  AppState,
  | 'nodes'
  | 'nodesState'
  | 'statuses'
  | 'selected'
  | 'view'
  | 'init'
  | 'select'
  | 'connect'
  | 'showFleet'
  | 'connectAll'
  | 'resetStatus'
  | 'trustAndConnect'
  | 'addNode'
  | 'updateNode'
  | 'removeNode'
> {
  const { api, set, get, next, forget, setStatus } = ctx;
  const connectSeq = ctx.seq.connect;
  const afterMutation = async (env: Envelope<unknown>): Promise<ErrorInfo | null> => (env.ok ? null : env.error);
  return {
    nodes: [],
    nodesState: 'loading',
    statuses: {},
    selected: null,
    view: 'node',

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
        ...withoutNodeData(s, name),
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
          ...withoutNodeData(s, name),
        };
      });
      const sel = get().selected;
      if (sel) get().select(sel);
      return null;
    },
  };
}
