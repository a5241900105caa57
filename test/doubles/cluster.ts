// What each fake node's cluster needs, for UI tests: what the needs script Holdfast runs over SSH
// (src/core/needs/cluster.ts) is answered on each fake node (test/doubles/node.ts). Every edge node
// here is a single-node k3s server, so `k3s kubectl get … -o json` answers on it with its own
// workloads (built by the lab's generator, lab/workloads.ts, shaped as the API server returns
// them), and its containerd config names the sandbox image. edge-03 in the fleet is reached as a
// non-root user whose sudo does not allow kubectl: it has no source of needs, so the images that
// came from air-gap archives count as needed there.
//
// The story on edge-01 (its images: test/doubles/catalog.ts): the web Deployment's nginx is durable
// (kept), coredns and local-path-provisioner are k3s pins the next k3s start removes (needed,
// at risk at restart), the telemetry agent's Deployment runs an unpinned image (needed, at risk),
// node-exporter's DaemonSet runs a durable one, the sandbox image is re-pinned by its archive at
// every start, and the nightly-report CronJob needs an image the node does not have (missing).
import { workloadList, type WorkloadDescription } from '../../lab/workloads';

/** What a fake node answers to the needs script: a server's workloads, or kubectl's failure. */
export type FakeClusterAnswer = { workloads: unknown; sandbox?: string } | { code: number; stderr: string };

const K3S = 'v1.31.9+k3s1';
const RUNTIME = 'containerd://2.0.4-k3s2';
const PAUSE = 'docker.io/rancher/mirrored-pause:3.6';

/** The image the nightly report's CronJob needs (on no node by default; on edge-02 in the fleet). */
export const REPORT_IMAGE = 'registry.site.lan/acme/report:1.0';

function singleNode(name: string, address: string): WorkloadDescription['nodes'] {
  return [{ name, addresses: [address], role: 'server', kubeletVersion: K3S, containerRuntimeVersion: RUNTIME }];
}

/** edge-01's cluster: see the story above. */
export function edge1Workloads(): WorkloadDescription {
  return {
    nodes: singleNode('edge-01', '10.20.0.11'),
    deployments: [
      { namespace: 'default', name: 'web', image: 'nginx:1.27.3', replicas: 1 },
      { namespace: 'kube-system', name: 'coredns', image: 'rancher/mirrored-coredns-coredns:1.12.0', replicas: 1 },
      { namespace: 'kube-system', name: 'local-path-provisioner', image: 'rancher/local-path-provisioner:v0.0.30', replicas: 1 },
      { namespace: 'acme', name: 'telemetry-agent', image: 'registry.site.lan/acme/telemetry-agent:2.4.1', replicas: 1 },
    ],
    daemonSets: [{ namespace: 'monitoring', name: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2' }],
    cronJobs: [{ namespace: 'acme', name: 'nightly-report', image: REPORT_IMAGE, schedule: '0 2 * * *' }],
  };
}

/** edge-02's cluster: its redis; in the fleet it also serves the web app and runs the nightly report. */
export function edge2Workloads(fleet: boolean): WorkloadDescription {
  return {
    nodes: singleNode('edge-02', '10.20.0.12'),
    statefulSets: [{ namespace: 'default', name: 'redis', image: 'redis:7.4', replicas: 1 }],
    ...(fleet
      ? {
          deployments: [
            { namespace: 'default', name: 'web', image: 'nginx:1.27.3', replicas: 1 },
            { namespace: 'kube-system', name: 'coredns', image: 'rancher/mirrored-coredns-coredns:1.12.0', replicas: 1 },
          ],
          cronJobs: [{ namespace: 'acme', name: 'nightly-report', image: REPORT_IMAGE, schedule: '0 2 * * *' }],
        }
      : {}),
  };
}

/** A cluster that runs nothing but its Node (the performance runs' node: nothing is needed). */
export function emptyWorkloads(name: string, address: string): WorkloadDescription {
  return { nodes: singleNode(name, address) };
}

export const serverAnswer = (desc: WorkloadDescription, sandbox: string | null = PAUSE): FakeClusterAnswer => ({
  workloads: workloadList(desc),
  ...(sandbox ? { sandbox } : {}),
});

/** sudo -n with a sudoers entry that does not cover kubectl (edge-03: user ops, sudo). */
export const SUDO_REFUSES_KUBECTL: FakeClusterAnswer = { code: 1, stderr: 'sudo: a password is required\n' };
