// The same machine configured twice (under two names, two addresses, or directly and through a
// jump host): its sshd presents the same host key to both entries. Such entries are one machine
// to every total (nodes, images at risk, pins lost), and every view says so. Host keys, not
// /etc/machine-id: a node's host key is what Holdfast verifies at every connection, and cloned
// machines that share a machine id but were given their own keys stay apart. Pure.

/** What identifies one configured node's machine: the SHA256 fingerprints of its host keys. */
export interface MachineIdentity {
  node: string;
  /** The key the node presented (a fleet run), or the keys known_hosts records for it (`node ls`); empty: unknown. */
  hostKeys: readonly string[];
}

/** Configured nodes that are one machine, in the order given; the first is the one totals count. */
export interface SameMachine {
  nodes: string[];
  /** A host key they share (SHA256:…). */
  hostKey: string;
}

/** Every group of two or more nodes that share a host key (directly or through another node of the group). */
export function sameMachines(list: readonly MachineIdentity[]): SameMachine[] {
  // Union-find over the entries: two entries with a key in common are one machine.
  const parent = list.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const byKey = new Map<string, number>();
  list.forEach((m, i) => {
    for (const k of m.hostKeys) {
      const seen = byKey.get(k);
      if (seen === undefined) byKey.set(k, i);
      else {
        const [a, b] = [root(seen), root(i)];
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const groups = new Map<number, MachineIdentity[]>();
  list.forEach((m, i) => {
    const g = groups.get(root(i));
    if (!g) groups.set(root(i), [m]);
    else if (!g.some((x) => x.node === m.node)) g.push(m);
  });
  const out: SameMachine[] = [];
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    // The first entry shares some key with another one of its group (the group is connected).
    const hostKey = g[0]!.hostKeys.find((k) => g.slice(1).some((x) => x.hostKeys.includes(k)))!;
    out.push({ nodes: g.map((x) => x.node), hostKey });
  }
  return out;
}

/** The nodes that repeat a machine already counted (every node of a group but its first). */
export function repeatedMachines(groups: readonly SameMachine[]): Set<string> {
  return new Set(groups.flatMap((g) => g.nodes.slice(1)));
}

/** "n1 and n1-again are one machine (the same SSH host key SHA256:…)". */
export function sameMachineText(g: SameMachine): string {
  const names = `${g.nodes.slice(0, -1).join(', ')} and ${g.nodes.at(-1)}`;
  return `${names} are one machine (the same SSH host key ${g.hostKey})`;
}
