// One node's needs from every source: its own cluster (a server node), the cluster of a
// configured server node it belongs to (an agent node), the operator's own list, and the sandbox
// image of its containerd config. Which nodes have no source of needs is said, never guessed.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { NodeDef } from '../../shared/domain/nodes';
import type { NeedSource, NodeNeededImage, NodeNeeds } from '../../shared/needs';
import { kubeNodeFor, kubeNodeUnmatched, kubeNodeUnmatchedText } from '../../shared/kubeNode';
import { normalizeNeededImage, type ClusterNeeds } from '../../shared/workloads';
import { limit } from '../limits';
import type { ClusterAnswer } from './cluster';

/** The folder of operators' lists in Holdfast's config: `<group>.txt` for a group, `<node>.txt` for one node. */
export const NEEDED_IMAGES_DIR = 'needed-images';

export interface OperatorList {
  source: NeedSource;
  images: NodeNeededImage[];
  notes: string[];
}

/** The list files that apply to a node, in the order they are read. */
export function listFilesFor(home: string, def: Pick<NodeDef, 'name' | 'group'>): string[] {
  const dir = path.join(home, NEEDED_IMAGES_DIR);
  return [...(def.group ? [path.join(dir, `${def.group}.txt`)] : []), path.join(dir, `${def.name}.txt`)];
}

/** One reference a line; `#` starts a comment. Pure. */
export function parseOperatorList(text: string, label: string): { images: NodeNeededImage[]; notes: string[] } {
  const images: NodeNeededImage[] = [];
  const notes: string[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const ref = normalizeNeededImage(line);
    if (ref === null) notes.push(`${label} line ${i + 1}: "${line.slice(0, 80)}" is not an image reference`);
    else if (!images.some((x) => x.ref === ref)) images.push({ ref, workloads: [], source: 'list' });
  }
  return { images, notes };
}

/** The operator's lists for a node (null when there is none). */
export async function readOperatorList(home: string, def: Pick<NodeDef, 'name' | 'group'>): Promise<OperatorList | null> {
  const images: NodeNeededImage[] = [];
  const notes: string[] = [];
  const labels: string[] = [];
  for (const file of listFilesFor(home, def)) {
    let text: string;
    try {
      const buf = await readFile(file);
      if (buf.length > limit('needs.listBytes')) {
        notes.push(`${file} is larger than ${limit('needs.listBytes')} bytes and was not read`);
        continue;
      }
      text = buf.toString('utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      notes.push(`${file} could not be read (${(e as Error).message})`);
      continue;
    }
    const label = `${NEEDED_IMAGES_DIR}/${path.basename(file)}`;
    labels.push(label);
    const got = parseOperatorList(text, label);
    notes.push(...got.notes);
    for (const img of got.images) if (!images.some((x) => x.ref === img.ref)) images.push(img);
  }
  if (labels.length === 0) return notes.length ? { source: { kind: 'list', label: 'needed-images' }, images: [], notes } : null;
  return { source: { kind: 'list', label: labels.join(', ') }, images, notes };
}

/** The cluster Node a configured node is (the rule: shared/kubeNode). */
export { kubeNodeFor };

/** The cluster needs that apply on one of its Nodes (a need limited to other Nodes does not). */
export function clusterNeedsOn(cluster: ClusterNeeds, kubeNode: string | null): NodeNeededImage[] {
  return cluster.images
    .filter((i) => !i.onNodes || (kubeNode !== null && i.onNodes.includes(kubeNode)))
    .map((i) => ({ ref: i.ref, workloads: i.workloads, source: 'cluster' as const }));
}

/** A server node whose cluster this node belongs to. */
export interface ClusterServer {
  node: string;
  cluster: ClusterNeeds;
}

/**
 * Puts a node's sources together. `server`: the configured server node whose cluster lists this
 * (agent) node, else one that answered without listing it (then no Node matched: said so). Pure.
 */
export function nodeNeedsFrom(def: Pick<NodeDef, 'name' | 'host' | 'k8sNode'>, own: ClusterAnswer | null, server: ClusterServer | null, list: OperatorList | null): NodeNeeds {
  const sources: NeedSource[] = [];
  const images: NodeNeededImage[] = [];
  const notes: string[] = [];
  let unmatched: NodeNeeds['unmatched'];
  let unmatchedWhy: string | undefined;
  // An agent's cluster counts only if it lists the agent: a server that answered without it is a
  // cluster this node may not belong to at all.
  const asked: ClusterServer | null = own?.kind === 'server' ? { node: def.name, cluster: own.cluster } : server;
  const kubeNode = asked ? kubeNodeFor(def, asked.cluster.nodes) : null;
  if (asked && kubeNode === null) {
    unmatched = kubeNodeUnmatched(def, asked.node, asked.cluster.nodes);
    unmatchedWhy = kubeNodeUnmatchedText(def, unmatched, asked.cluster.nodes);
  }
  const cluster = own?.kind === 'server' || kubeNode !== null ? asked : null;
  if (cluster) {
    sources.push({ kind: 'cluster', label: `kubectl on ${cluster.node}` });
    images.push(...clusterNeedsOn(cluster.cluster, kubeNode));
    if (unmatchedWhy) notes.push(`${unmatchedWhy}: needs bound to one Node are not counted here`);
    const bad = cluster.cluster.unreadable.length;
    if (bad) notes.push(`${bad} image name${bad === 1 ? '' : 's'} in the cluster's workloads could not be read (e.g. "${cluster.cluster.unreadable[0]!.image.slice(0, 80)}")`);
  }
  if (list) {
    sources.push(list.source);
    notes.push(...list.notes);
    for (const i of list.images) images.push(i);
  }
  if (own?.sandbox) {
    sources.push({ kind: 'sandbox', label: "containerd's CRI config" });
    images.push({ ref: own.sandbox, workloads: [], source: 'sandbox' });
  }
  const known = cluster !== null || (list !== null && list.images.length > 0);
  // A failed kubectl is the reason there is no source when nothing else answered: said once.
  if (own && own.kind === 'error' && known) notes.push(own.message);
  // An operator's list answered for an agent no cluster Node matched: why the cluster did not count.
  if (unmatchedWhy && !cluster && known) notes.push(unmatchedWhy);
  const noSource = known
    ? undefined
    : own === null
      ? 'the node was not asked'
      : own.kind === 'agent'
        ? (unmatchedWhy ?? 'an agent node, and no configured server node of its cluster answered')
        : own.kind === 'none'
          ? 'no k3s or RKE2 kubectl on the node, and no operator\'s list'
          : own.kind === 'error'
            ? own.message
            : 'the cluster did not say which Node this is';
  return { sources, images, ...(noSource !== undefined ? { noSource } : {}), ...(unmatched ? { unmatched } : {}), notes };
}
