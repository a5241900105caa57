// The service's NeedsResolver: a node's own cluster answer, the operator's list from Holdfast's
// config and — for an agent node, which has no kubeconfig — the cluster of a configured server
// node that lists it among its Nodes (same group; ungrouped nodes ask ungrouped ones). Servers'
// answers are kept a short while, so a fleet of agents asks its server once.
import type { NodeDef } from '../../shared/domain/nodes';
import type { NodeNeeds } from '../../shared/needs';
import { mapLimit } from '../../shared/mapLimit';
import { logger } from '../log';
import { clusterOptions, readClusterAnswer, type ClusterAnswer } from './cluster';
import { kubeNodeFor, nodeNeedsFrom, readOperatorList, type ClusterServer } from './nodeNeeds';
import type { NodeSession } from '../node/session';

const log = logger('needs');

/**
 * Turns a node's own cluster answer into its needs: the service adds the operator's list and,
 * for an agent node, the cluster of a configured server node (below).
 */
export type NeedsResolver = (def: NodeDef, own: ClusterAnswer) => Promise<NodeNeeds>;

/** How long a server's answer serves other nodes' questions. */
export const CLUSTER_ANSWER_TTL_MS = 30_000;
/** Configured nodes asked at most for an agent's server (each is an SSH connection). */
export const MAX_SERVER_CANDIDATES = 16;

export interface ResolverDeps {
  home: string;
  /** Every configured node (candidates for an agent's server). */
  nodes: () => Promise<NodeDef[]>;
  /** Runs fn on a session of that node (the service's pool). */
  use: <T>(node: string, fn: (s: NodeSession) => Promise<T>) => Promise<T>;
  now?: () => number;
}

/** The cluster answer of a node, asked over its own session. */
export async function askCluster(s: NodeSession): Promise<ClusterAnswer> {
  return readClusterAnswer(s.ssh, clusterOptions(s.def, await s.info()));
}

export function createNeedsResolver(deps: ResolverDeps): NeedsResolver {
  const now = deps.now ?? Date.now;
  const answers = new Map<string, { at: number; answer: Promise<ClusterAnswer> }>();
  const answerOf = (name: string): Promise<ClusterAnswer> => {
    const got = answers.get(name);
    if (got && now() - got.at < CLUSTER_ANSWER_TTL_MS) return got.answer;
    const answer = deps.use(name, askCluster).catch((err: unknown): ClusterAnswer => {
      log.debug('server candidate not asked', { node: name, err });
      return { kind: 'error', message: err instanceof Error ? err.message : String(err), sandbox: null };
    });
    answers.set(name, { at: now(), answer });
    return answer;
  };

  /**
   * The configured server node whose cluster lists the node, else the first that answered
   * without listing it (nodeNeedsFrom then says that no Node matched), else null.
   */
  const serverFor = async (def: NodeDef): Promise<ClusterServer | null> => {
    const all = await deps.nodes();
    const candidates = all.filter((n) => n.name !== def.name && (n.group ?? null) === (def.group ?? null)).slice(0, MAX_SERVER_CANDIDATES);
    // In parallel, and done as soon as one server lists the node: an unreachable candidate must
    // not hold up the answer (its connection goes on in the pool and is cached when it ends).
    // No new candidate is asked once one answered (a CLI closes its connections as soon as the
    // command is done, and a connection opened after that would keep it running).
    let found = false;
    let unlisted: ClusterServer | null = null;
    return new Promise<ClusterServer | null>((resolve) => {
      void mapLimit(candidates, 4, async (c) => {
        if (found) return;
        const a = await answerOf(c.name);
        if (found || a.kind !== 'server') return;
        if (kubeNodeFor(def, a.cluster.nodes) !== null) {
          found = true;
          resolve({ node: c.name, cluster: a.cluster });
        } else unlisted ??= { node: c.name, cluster: a.cluster };
      }).then(() => resolve(unlisted));
    });
  };

  return async (def, own): Promise<NodeNeeds> => {
    // Its own answer serves the other nodes' questions too (a server's, and an agent's "no").
    answers.set(def.name, { at: now(), answer: Promise.resolve(own) });
    const [list, server] = await Promise.all([
      readOperatorList(deps.home, def),
      own.kind === 'agent' ? serverFor(def) : Promise.resolve(null),
    ]);
    return nodeNeedsFrom(def, own, server, list);
  };
}
