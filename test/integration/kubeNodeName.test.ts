// An agent added under another name than its Kubernetes Node (issue #49 item 7): the server's
// kubectl answers, but none of its Nodes has the agent's name or address. Holdfast says so — not
// "no configured server node answered" — names the Nodes it could be, and once the operator maps
// it (`node edit NAME --k8s-node NODE`, or `node add … --k8s-node`), the needs bound to that Node
// count on it. Over lab nodes whose stand-in k3s answers kubectl from a workload fixture.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, startLab, type Lab, type LabNodeHandle } from '../../lab';
import { workloadList } from '../../lab/workloads';
import type { FleetReport } from '../../src/shared/fleet';
import type { NodeDef } from '../../src/shared/domain/nodes';
import { addLabNode, runCli, tempHome } from './support';

const K3S_RELEASE = 'v1.33.7+k3s1';
/** The agent's Node as the cluster names it: not its Holdfast name, and none of its addresses is the lab's. */
const KUBE_NODE = 'ip-10-0-0-7.site.internal';
/** A bare pod bound to that Node: needed there only. */
const PROBE = 'docker.io/library/holdfast-probe:1.0';
/** A Deployment scaled to 0: needed on any Node of the cluster. */
const WEB = 'docker.io/library/holdfast-web:1.0';

describe('an agent whose Kubernetes Node has another name (s1 server, a1 agent = Node ip-10-0-0-7.site.internal)', () => {
  let lab: Lab;
  let home: string;
  let a1: LabNodeHandle;

  const cli = async (args: string[], expectCode = 0) => {
    const r = await runCli(args, { HOLDFAST_HOME: home });
    if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
    return r;
  };
  const needsOfA1 = async () => {
    const report = JSON.parse((await cli(['inspect', 'a1', '--json'])).stdout) as FleetReport;
    const n = report.nodes.find((x) => x.node === 'a1');
    expect(n?.reachable).toBe(true);
    return n!.needs!;
  };

  beforeAll(async () => {
    lab = await startLab({ nodes: ['s1', 'a1'] });
    home = tempHome();
    a1 = lab.node('a1');
    for (const node of lab.nodes) expect((await emulateK3sStart(node)).failed).toEqual([]);
    const fixture = workloadList({
      nodes: [
        { name: 's1', role: 'server', addresses: ['10.0.0.1'] },
        { name: KUBE_NODE, role: 'agent', addresses: ['10.0.0.7'] },
      ],
      deployments: [{ namespace: 'default', name: 'web', image: WEB, replicas: 0 }],
      pods: [{ namespace: 'default', name: 'probe', image: PROBE, node: KUBE_NODE }],
    });
    await lab.node('s1').installDistroBinary('k3s', K3S_RELEASE, { workloads: fixture });
    await a1.installDistroBinary('k3s', K3S_RELEASE);
    await addLabNode(lab, lab.node('s1'), home, { extra: ['--group', 'site-a'] });
    await addLabNode(lab, a1, home, { extra: ['--group', 'site-a'] });
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it('unmapped: the server answered, and the reason says no Node matched the name or address, with the Nodes to map it to', async () => {
    const needs = await needsOfA1();
    expect(needs).toMatchObject({ basis: 'provenance', sources: [], missing: [] });
    expect(needs.noSource).toBe(`kubectl on s1 answered, but no Node of its cluster has this node's name (a1) or address (${a1.host})`);
    expect(needs.unmatched).toEqual({ server: 's1', nodes: [KUBE_NODE, 's1'], total: 2 });

    const text = await cli(['images', 'a1']);
    expect(text.stdout).not.toContain('no configured server node');
    expect(text.stdout).toContain(`No source of site needs (kubectl on s1 answered, but no Node of its cluster has this node's name (a1) or address (${a1.host}))`);
    expect(text.stdout).toContain(`Map it to its Node: holdfast node edit a1 --k8s-node NODE (kubectl on s1 lists: ${KUBE_NODE}, s1)`);
    const fleet = await cli(['inspect']);
    expect(fleet.stdout).toContain('→ Map it to its Node: holdfast node edit a1 --k8s-node NODE');
  });

  it('node edit --k8s-node maps it without connecting; it is stored in the node config, and the Node’s needs count on a1', async () => {
    const r = await cli(['node', 'edit', 'a1', '--k8s-node', KUBE_NODE]);
    expect(r.stdout).toBe(`updated a1:\n  k8sNode: (none) → ${KUBE_NODE}\n`);
    const saved = JSON.parse(readFileSync(path.join(home, 'nodes.json'), 'utf8')) as { nodes: NodeDef[] };
    expect(saved.nodes.find((n) => n.name === 'a1')?.k8sNode).toBe(KUBE_NODE);

    const needs = await needsOfA1();
    expect(needs).toMatchObject({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on s1' }] });
    expect(needs.noSource).toBeUndefined();
    expect(needs.unmatched).toBeUndefined();
    // the pod bound to its Node and the Deployment any Node may run: both missing on a1
    expect(needs.missing.map((m) => m.ref).sort()).toEqual([PROBE, WEB]);
    expect(needs.missing.find((m) => m.ref === PROBE)?.workloads).toEqual([expect.objectContaining({ kind: 'Pod', namespace: 'default', name: 'probe' })]);
    // s1 is not that Node: the bound pod's image is not needed there
    const report = JSON.parse((await cli(['inspect', 's1', '--json'])).stdout) as FleetReport;
    expect(report.nodes[0]!.needs!.missing.map((m) => m.ref)).toEqual([WEB]);
  });

  it('a mapping to a Node the cluster does not list says that, and --no-k8s-node matches by name and address again', async () => {
    await cli(['node', 'edit', 'a1', '--k8s-node', 'gone-node']);
    expect((await needsOfA1()).noSource).toBe("kubectl on s1 answered, but its cluster lists no Node named gone-node (this node's Kubernetes Node name)");
    const r = await cli(['node', 'edit', 'a1', '--no-k8s-node']);
    expect(r.stdout).toBe('updated a1:\n  k8sNode: gone-node → (none)\n');
    expect((await needsOfA1()).unmatched).toEqual({ server: 's1', nodes: [KUBE_NODE, 's1'], total: 2 });
  });

  it('node add --k8s-node maps it from the start; a name that cannot be a Node is refused', async () => {
    await cli(['node', 'rm', 'a1']);
    const bad = await runCli(['node', 'add', 'a1', '--host', a1.host, '--port', String(a1.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--k8s-node', 'Not_A_Node'], { HOLDFAST_HOME: home });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('a Kubernetes Node name');
    await addLabNode(lab, a1, home, { extra: ['--group', 'site-a', '--k8s-node', KUBE_NODE] });
    const needs = await needsOfA1();
    expect(needs).toMatchObject({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on s1' }] });
    expect(needs.missing.map((m) => m.ref).sort()).toEqual([PROBE, WEB]);
  });
});
