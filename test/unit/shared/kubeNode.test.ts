// Which Kubernetes Node a configured node is (shared/kubeNode): the Node it is mapped to, else by
// name, else by its one address; and why none matched, as every view says it.
import { describe, expect, it } from 'vitest';
import { kubeNodeFor, kubeNodeUnmatched, kubeNodeUnmatchedText, MAX_NODE_CHOICES } from '../../../src/shared/kubeNode';

const NODES = [
  { name: 'edge1', addresses: ['10.0.0.1', 'edge1'] },
  { name: 'ip-10-0-0-4.eu-west-1.compute.internal', addresses: ['10.0.0.4'] },
  { name: 'dual-a', addresses: ['10.0.0.9'] },
  { name: 'dual-b', addresses: ['10.0.0.9'] },
];

describe('kubeNodeFor', () => {
  it('an agent added under another name than its Node, at an address the cluster does not list: no match until it is mapped', () => {
    const agent = { name: 'site-a-agent4', host: '192.168.7.4' };
    expect(kubeNodeFor(agent, NODES)).toBeNull();
    expect(kubeNodeFor({ ...agent, k8sNode: 'ip-10-0-0-4.eu-west-1.compute.internal' }, NODES)).toBe('ip-10-0-0-4.eu-west-1.compute.internal');
  });

  it('a mapping is the only match: never the Node of the same name, nor one by address', () => {
    expect(kubeNodeFor({ name: 'edge1', host: '10.0.0.1', k8sNode: 'gone' }, NODES)).toBeNull();
    expect(kubeNodeFor({ name: 'edge1', host: '10.0.0.1', k8sNode: 'dual-a' }, NODES)).toBe('dual-a');
  });

  it('without a mapping: by name, then by the one Node with the host among its addresses', () => {
    expect(kubeNodeFor({ name: 'edge1', host: '10.0.0.4' }, NODES)).toBe('edge1');
    expect(kubeNodeFor({ name: 'x', host: '10.0.0.4' }, NODES)).toBe('ip-10-0-0-4.eu-west-1.compute.internal');
    expect(kubeNodeFor({ name: 'x', host: '10.0.0.9' }, NODES)).toBeNull();
  });
});

describe('why no Node matched', () => {
  it('names the server that answered, the node’s name and address, and carries the Nodes to map it to', () => {
    const def = { name: 'site-a-agent4', host: '192.168.7.4' };
    const u = kubeNodeUnmatched(def, 'edge1', NODES);
    expect(u).toEqual({ server: 'edge1', nodes: ['dual-a', 'dual-b', 'edge1', 'ip-10-0-0-4.eu-west-1.compute.internal'], total: 4 });
    expect(kubeNodeUnmatchedText(def, u, NODES)).toBe("kubectl on edge1 answered, but no Node of its cluster has this node's name (site-a-agent4) or address (192.168.7.4)");
    // never the old, wrong reason
    expect(kubeNodeUnmatchedText(def, u, NODES)).not.toMatch(/no configured server node/);
  });

  it('an address two Nodes share, and a mapping to a Node the cluster does not list', () => {
    const shared = { name: 'x', host: '10.0.0.9' };
    expect(kubeNodeUnmatchedText(shared, kubeNodeUnmatched(shared, 'edge1', NODES), NODES)).toBe(
      "kubectl on edge1 answered, but no Node of its cluster has this node's name (x), and 2 Nodes share its address (10.0.0.9)",
    );
    const mapped = { name: 'x', host: '10.0.0.1', k8sNode: 'gone' };
    const u = kubeNodeUnmatched(mapped, 'edge1', NODES);
    expect(u.mapped).toBe('gone');
    expect(kubeNodeUnmatchedText(mapped, u, NODES)).toBe("kubectl on edge1 answered, but its cluster lists no Node named gone (this node's Kubernetes Node name)");
  });

  it('a large cluster: a few Node names as choices, and how many there are', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `n${String(i).padStart(2, '0')}`, addresses: [] }));
    const u = kubeNodeUnmatched({ name: 'x', host: 'h' }, 's', many);
    expect(u.nodes).toHaveLength(MAX_NODE_CHOICES);
    expect(u.nodes[0]).toBe('n00');
    expect(u.total).toBe(40);
  });
});
