// Which nodes a fleet command or the app's fleet run means: named nodes, a group, or every
// node. One rule and one set of messages for the CLI (selectNodes) and the service
// (fleet.start). Pure: the caller turns a problem into its error.
import type { Remedy } from './remedy';

export interface SelectionProblem {
  code: 'NOT_FOUND';
  message: string;
  /** What to do, in plain words; `remedy` is the same as data (the CLI words it as a command). */
  hint: string;
  remedy?: Remedy;
}

export type NodeSelection<T> = { nodes: T[] } | { problem: SelectionProblem };

/**
 * `names` (each must exist; duplicates once, in the order given), narrowed to `group` when both
 * are given; else the nodes of `group`; else every node. An empty result is a problem.
 */
export function selectNodes<T extends { name: string; group?: string | null }>(
  all: readonly T[],
  sel: { names?: readonly string[] | undefined; group?: string | undefined },
): NodeSelection<T> {
  let picked: T[] = [...all];
  if (sel.names?.length) {
    const byName = new Map(all.map((n) => [n.name, n]));
    picked = [];
    for (const n of new Set(sel.names)) {
      const d = byName.get(n);
      if (!d) return { problem: { code: 'NOT_FOUND', message: `no node named "${n}"`, hint: 'Name one of the configured nodes.', remedy: { action: 'node-list' } } };
      picked.push(d);
    }
  }
  if (sel.group) {
    const group = sel.group;
    picked = picked.filter((n) => n.group === group);
    if (!picked.length) {
      const groups = [...new Set(all.map((n) => n.group).filter((g): g is string => Boolean(g)))].sort();
      const message = `no node in group "${group}"`;
      if (groups.length) return { problem: { code: 'NOT_FOUND', message, hint: `Groups: ${groups.join(', ')}.` } };
      return { problem: { code: 'NOT_FOUND', message, hint: "No node has a group yet: set one in a node's settings.", remedy: { action: 'node-edit', node: 'NAME', group: 'G' } } };
    }
  }
  if (!picked.length) return { problem: { code: 'NOT_FOUND', message: 'no nodes yet', hint: 'Add a node first.', remedy: { action: 'node-add', node: 'NAME', host: 'HOST' } } };
  return { nodes: picked };
}
