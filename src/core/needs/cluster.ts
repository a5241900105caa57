// What a k3s/RKE2 server node's cluster needs, read over the SSH connection Holdfast already has:
// `k3s kubectl get … --all-namespaces -o json` (RKE2: its bundled kubectl with its kubeconfig),
// and the sandbox (pause) image from the containerd config k3s writes for its CRI plugin (docs:
// k3s facts, "Which images a site needs"). One fixed script, one round trip; the answer is
// bounded (limits.ts remote.workloadsBytes / remote.workloadsSeconds) and parsed by the pure
// rule in shared/workloads.ts.
import { distroProfile, type DistroProfile } from '../../shared/distro';
import type { Distro, NodeDef, NodeInfo } from '../../shared/domain/nodes';
import { needsFromKubectl, normalizeNeededImage, type ClusterNeeds } from '../../shared/workloads';
import { HoldfastError } from '../errors';
import { limit } from '../limits';
import { distroCase } from '../node/distroShell';
import type { SshConnection } from '../ssh/connect';

/** Every kind whose pod template (or pod) names images; Nodes map agent nodes to this cluster. */
export const WORKLOAD_KINDS = 'pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,replicationcontrollers,nodes';

/**
 * `$1` "sudo" for a non-root user (the kubeconfig and k3s's containerd config are root-only),
 * `$2` the distro, `$3` its data-dir as the probe found it, `$4` kubectl's request timeout in
 * seconds. Prints `@@sandbox` and the config lines that name the sandbox image, then `@@kubectl`
 * and kubectl's JSON; exits with kubectl's status (127: no kubectl on the node).
 */
function kubectlShell(p: DistroProfile): string {
  const k = p.kubectl;
  if (k.kind === 'bundled') return `k=$DD/${k.dataDirPath}; [ -x "$k" ] || k=${p.dataDirDefault}/${k.dataDirPath}; set -- --kubeconfig ${k.kubeconfig}`;
  return `k=; for p in ${p.id} /usr/local/bin/${p.id}; do if command -v "$p" >/dev/null 2>&1; then k=$(command -v "$p"); break; fi; done; set -- kubectl`;
}

/** Where kubelet puts a pod's ServiceAccount token: kubectl's in-cluster configuration reads it. */
const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export const NEEDS_SCRIPT = [
  'S=$1; D=$2; DD=$3; T=$4; LC_ALL=C; export LC_ALL',
  'rd() { if [ -r "$1" ]; then cat -- "$1"; elif [ "$S" = sudo ]; then sudo -n cat -- "$1" 2>/dev/null; fi; }',
  'echo "@@sandbox"',
  // containerd 1.x/2.x config version 2: sandbox_image = "…"; version 3: pinned_images.sandbox = "…".
  'rd "$DD/agent/etc/containerd/config.toml" | head -c 1048576 | grep -E "^[[:space:]]*(sandbox_image|sandbox)[[:space:]]*=" | head -n 4',
  // In a pod (the guard DaemonSet): whether kubectl has a ServiceAccount token to ask with.
  `if [ -n "$KUBERNETES_SERVICE_HOST" ]; then if [ -f ${SA_TOKEN} ]; then echo "@@pod token"; else echo "@@pod no-token"; fi; fi`,
  'echo "@@kubectl"',
  // The distro's kubectl (profile, shared/distro.ts): a binary under data-dir with its kubeconfig,
  // or the distro's own subcommand found by its absolute path (sudo searches its own secure_path,
  // which often lacks /usr/local/bin).
  distroCase('D', kubectlShell),
  'if [ -z "$k" ] || ! command -v "$k" >/dev/null 2>&1; then echo "no kubectl on the node" >&2; exit 127; fi',
  // kubectl drops its in-cluster configuration (a pod's ServiceAccount) when given
  // --request-timeout (kubernetes/kubernetes#93474, open): in a pod the exec's own timeout bounds it.
  `R=--request-timeout="\${T}s"; if [ -n "$KUBERNETES_SERVICE_HOST" ] && [ -n "$KUBERNETES_SERVICE_PORT" ] && [ -f ${SA_TOKEN} ]; then R=; fi`,
  `if [ "$S" = sudo ]; then sudo -n "$k" "$@" get ${WORKLOAD_KINDS} --all-namespaces -o json \${R:+"$R"}`,
  `else "$k" "$@" get ${WORKLOAD_KINDS} --all-namespaces -o json \${R:+"$R"}; fi`,
].join('\n');

/** The script's $0: how a process listing (and the e2e fake node) tells it apart. */
export const NEEDS_SCRIPT_NAME = 'holdfast-needs';

export function needsArgv(sudo: boolean, distro: Distro, dataDir: string): string[] {
  return ['sh', '-c', NEEDS_SCRIPT, NEEDS_SCRIPT_NAME, sudo ? 'sudo' : '', distroProfile(distro).id, dataDir, String(limit('remote.workloadsSeconds'))];
}

/**
 * server: kubectl answered; agent: the node has kubectl but no cluster to ask (no kubeconfig);
 * none: no k3s/RKE2 kubectl at all; error: kubectl failed (the message says why, in one clause).
 */
export type ClusterAnswer =
  | { kind: 'server'; cluster: ClusterNeeds; sandbox: string | null }
  | { kind: 'agent' | 'none' | 'error'; message: string; sandbox: string | null };

/** The sandbox image a config line names (version 2 `sandbox_image`, version 3 `sandbox`). */
export function parseSandboxLines(lines: readonly string[]): string | null {
  for (const l of lines) {
    const m = /^\s*(?:sandbox_image|sandbox)\s*=\s*["']([^"']+)["']/.exec(l);
    if (m) return normalizeNeededImage(m[1]!);
  }
  return null;
}

/** kubectl's own `error:` line when it printed one (k3s warns first), else the first line. */
const firstLine = (s: string) => {
  const lines = s.split('\n').map((l) => l.trim()).filter((l) => l);
  return lines.findLast((l) => l.startsWith('error:')) ?? lines[0] ?? '';
};

/** Reads the script's answer. Pure: tested against recorded kubectl output. */
export function parseNeedsAnswer(r: { code: number | null; stdout: string; stderr: string }, sudo: boolean): ClusterAnswer {
  const at = r.stdout.indexOf('@@kubectl\n');
  const head = at >= 0 ? r.stdout.slice(0, at) : r.stdout;
  const body = at >= 0 ? r.stdout.slice(at + '@@kubectl\n'.length) : '';
  const sandbox = parseSandboxLines(head.split('\n').filter((l) => !l.startsWith('@@')));
  const err = firstLine(r.stderr);
  const pod = /^@@pod (token|no-token)$/m.exec(head)?.[1];
  if (r.code === 127) return { kind: 'none', message: 'no k3s or RKE2 kubectl on the node', sandbox };
  if (r.code !== 0) {
    // An agent node: k3s kubectl finds no kubeconfig and falls back to localhost:8080.
    if (/localhost:8080|no configuration has been provided|k3s\.yaml: no such file|rke2\.yaml: no such file/i.test(r.stderr)) {
      // In a pod every node may ask the cluster: falling back to localhost is the ServiceAccount's fault.
      if (pod) return { kind: 'error', message: pod === 'no-token' ? `kubectl has no in-cluster configuration: the pod has no ServiceAccount token (${SA_TOKEN})` : 'kubectl did not use the pod\'s ServiceAccount (in-cluster configuration)', sandbox };
      return { kind: 'agent', message: 'an agent node: no kubeconfig to ask the cluster with', sandbox };
    }
    if (/permission denied/i.test(r.stderr)) {
      return {
        kind: 'error',
        message: sudo ? `kubectl could not read the kubeconfig even through sudo -n (${err})` : "the kubeconfig is root-only: connect as root, or let Holdfast use sudo -n (the node's --sudo option)",
        sandbox,
      };
    }
    if (/a password is required|sudo:/i.test(r.stderr)) return { kind: 'error', message: `sudo -n refused kubectl (${err})`, sandbox };
    return { kind: 'error', message: `kubectl failed: ${err || `exit ${r.code ?? 'by a signal'}`}`, sandbox };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { kind: 'error', message: 'kubectl printed something that is not JSON', sandbox };
  }
  try {
    return { kind: 'server', cluster: needsFromKubectl(doc), sandbox };
  } catch (e) {
    return { kind: 'error', message: e instanceof Error ? e.message : String(e), sandbox };
  }
}

/** What the script needs to know of a node: its access and what the probe found it runs. */
export function clusterOptions(def: Pick<NodeDef, 'sudo'>, info: Pick<NodeInfo, 'distro' | 'imagesDir'>): { sudo: boolean; distro: Distro; dataDir: string } {
  return {
    sudo: def.sudo === true,
    distro: info.distro,
    dataDir: info.imagesDir?.dataDir ?? distroProfile(info.distro).dataDirDefault,
  };
}

/** Asks the node (one exec); never throws for what the node answers, only for a dropped connection. */
export async function readClusterAnswer(ssh: Pick<SshConnection, 'exec'>, opts: { sudo: boolean; distro: Distro; dataDir: string }): Promise<ClusterAnswer> {
  try {
    const r = await ssh.exec(needsArgv(opts.sudo, opts.distro, opts.dataDir), {
      outputLimit: 'remote.workloadsBytes',
      timeoutMs: (limit('remote.workloadsSeconds') + 5) * 1000,
    });
    return parseNeedsAnswer(r, opts.sudo);
  } catch (e) {
    // Too slow or too much: the node has no source of needs this time, and the views say why.
    if (e instanceof HoldfastError && (e.code === 'TIMEOUT' || e.code === 'REFUSED')) return { kind: 'error', message: e.message, sandbox: null };
    throw e;
  }
}
