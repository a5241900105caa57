// The remedy when a cluster answered but none of its Nodes is the node (shared/kubeNode): map the
// node to its Kubernetes Node. Node names come from the cluster: shown terminal-safe.
import type { KubeNodeUnmatched } from '../shared/kubeNode';
import { commandLine } from './commandLine';
import { terminalSafe as safe } from './format';

/** "Map it to its Node: holdfast node edit n4 --k8s-node NODE (kubectl on n1 lists: n1, n2, edge-4)". */
export function kubeNodeHint(node: string, u: KubeNodeUnmatched): string {
  const more = u.total > u.nodes.length ? ` and ${u.total - u.nodes.length} more` : '';
  const lists = u.nodes.length ? ` (kubectl on ${u.server} lists: ${safe(u.nodes.join(', '))}${more})` : '';
  return `Map it to its Node: ${commandLine(['node', 'edit', node, '--k8s-node', 'NODE'])}${lists}`;
}
