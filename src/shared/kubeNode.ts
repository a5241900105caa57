// Which Kubernetes Node a configured node is, in the cluster a server's kubectl lists: the Node
// the operator mapped it to (`k8sNode` in its config), else the Node of the same name, else the
// only Node with the node's host among its addresses. Needs bound to one Node (a pod scheduled
// there, a DaemonSet's pod) apply on the node only through this match (core/needs). Pure.
import type { NodeDef } from './domain/nodes';
import type { KubeNode } from './workloads';

/** The fields of a configured node the match reads. */
export type KubeNodeSubject = Pick<NodeDef, 'name' | 'host' | 'k8sNode'>;

/** The cluster Node a configured node is; null: none of the cluster's Nodes (as kubectl tells). */
export function kubeNodeFor(def: KubeNodeSubject, nodes: readonly KubeNode[]): string | null {
  // A mapping is the operator's word: only that Node, never a guess by name or address.
  if (def.k8sNode) return nodes.some((n) => n.name === def.k8sNode) ? def.k8sNode : null;
  const byName = nodes.find((n) => n.name === def.name);
  if (byName) return byName.name;
  const byAddress = nodes.filter((n) => n.addresses.includes(def.host));
  return byAddress.length === 1 ? byAddress[0]!.name : null;
}

/**
 * A cluster answered, but none of its Nodes is this node (data: the CLI and the app word the
 * remedy, mapping the node to one of these Nodes).
 */
export interface KubeNodeUnmatched {
  /** The configured node whose kubectl answered. */
  server: string;
  /** The Node it was mapped to, when it was (and the cluster has no such Node). */
  mapped?: string;
  /** The cluster's Node names, sorted (the choices to map it to), at most MAX_NODE_CHOICES. */
  nodes: string[];
  /** How many Nodes the cluster lists in all. */
  total: number;
}

/** Node names carried as choices (a cluster of hundreds lists a few, and says how many). */
export const MAX_NODE_CHOICES = 12;

export function kubeNodeUnmatched(def: KubeNodeSubject, server: string, nodes: readonly KubeNode[]): KubeNodeUnmatched {
  const names = nodes.map((n) => n.name).sort();
  return { server, ...(def.k8sNode ? { mapped: def.k8sNode } : {}), nodes: names.slice(0, MAX_NODE_CHOICES), total: names.length };
}

/**
 * Why no Node matched, in one clause: "kubectl on n1 answered, but no Node of its cluster has
 * this node's name (n4) or address (10.0.0.4)".
 */
export function kubeNodeUnmatchedText(def: KubeNodeSubject, u: KubeNodeUnmatched, nodes?: readonly KubeNode[]): string {
  const head = `kubectl on ${u.server} answered, but`;
  if (u.mapped) return `${head} its cluster lists no Node named ${u.mapped} (this node's Kubernetes Node name)`;
  const shared = nodes ? nodes.filter((n) => n.addresses.includes(def.host)).length : 0;
  if (shared > 1) return `${head} no Node of its cluster has this node's name (${def.name}), and ${shared} Nodes share its address (${def.host})`;
  return `${head} no Node of its cluster has this node's name (${def.name}) or address (${def.host})`;
}
