// What a site needs, read from its nodes (core/needs): the fixed script a server node runs and how
// its answer is read (cluster.ts), a node's needs from every source (nodeNeeds.ts), and the
// service's resolver that finds an agent's server among the configured nodes (resolve.ts).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NEEDS_SCRIPT, WORKLOAD_KINDS, needsArgv, parseNeedsAnswer, parseSandboxLines, readClusterAnswer, type ClusterAnswer } from '../../../../src/core/needs/cluster';
import { HoldfastError } from '../../../../src/core/errors';
import type { ExecOptions, ExecResult } from '../../../../src/core/ssh/connect';
import {
  NEEDED_IMAGES_DIR,
  clusterNeedsOn,
  kubeNodeFor,
  listFilesFor,
  nodeNeedsFrom,
  parseOperatorList,
  readOperatorList,
  type ClusterServer,
  type OperatorList,
} from '../../../../src/core/needs/nodeNeeds';
import { CLUSTER_ANSWER_TTL_MS, MAX_SERVER_CANDIDATES, askCluster, createNeedsResolver } from '../../../../src/core/needs/resolve';
import { limit } from '../../../../src/core/limits';
import type { NodeSession } from '../../../../src/core/node/session';
import type { Distro, NodeDef } from '../../../../src/shared/domain/nodes';
import { needsFromKubectl, type ClusterNeeds, type Workload } from '../../../../src/shared/workloads';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const KUBECTL_FIXTURES = path.join(import.meta.dirname, '../../shared/fixtures/kubectl');
const stderrOf = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');
const kubectlText = (name: string) => readFileSync(path.join(KUBECTL_FIXTURES, name), 'utf8');

const PAUSE = 'docker.io/rancher/mirrored-pause:3.6';
const SANDBOX_V2 = '@@sandbox\n    sandbox_image = "rancher/mirrored-pause:3.6"\n';
const AGENT_MESSAGE = 'an agent node: no kubeconfig to ask the cluster with';
const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));

const nodeDef = (name: string, host: string, group?: string): NodeDef => ({
  name,
  host,
  port: 22,
  user: 'root',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  namespace: 'k8s.io',
  ...(group !== undefined ? { group } : {}),
});

// ---------------------------------------------------------------------------------------------
// cluster.ts

describe('needsArgv: one constant script, the node’s values as positional arguments', () => {
  it('puts no input into the script', () => {
    const hostile = `/var/lib/rancher/k3s"; rm -rf / #$(reboot)\`id\``;
    for (const [sudo, distro, dataDir] of [
      [false, 'k3s', '/var/lib/rancher/k3s'],
      [true, 'rke2', '/var/lib/rancher/rke2'],
      [true, 'unknown', hostile],
    ] as [boolean, Distro, string][]) {
      const argv = needsArgv(sudo, distro, dataDir);
      expect(argv.slice(0, 4)).toEqual(['sh', '-c', NEEDS_SCRIPT, 'holdfast-needs']);
      expect(argv.slice(4)).toEqual([sudo ? 'sudo' : '', distro === 'rke2' ? 'rke2' : 'k3s', dataDir, String(limit('remote.workloadsSeconds'))]);
    }
    expect(NEEDS_SCRIPT).not.toContain('rm -rf');
    expect(NEEDS_SCRIPT).toContain(`get ${WORKLOAD_KINDS} --all-namespaces -o json`);
    // the script reads its values from $1..$4 only, and quotes them where they are used
    expect(NEEDS_SCRIPT.startsWith('S=$1; D=$2; DD=$3; T=$4;')).toBe(true);
    expect(NEEDS_SCRIPT).toContain('rd "$DD/agent/etc/containerd/config.toml"');
  });

  it('asks for every kind whose pod template names images, and the Nodes', () => {
    expect(WORKLOAD_KINDS.split(',')).toEqual(['pods', 'deployments', 'replicasets', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs', 'replicationcontrollers', 'nodes']);
  });
});

/**
 * Runs NEEDS_SCRIPT with /bin/sh as a node would (argv straight from needsArgv), with stand-in
 * k3s / kubectl / sudo in a bin dir first on PATH. The stand-ins record their arguments.
 */
function runNeedsScript(opts: { sudo: boolean; distro: Distro; dataDir: string; bin: string; log: string; cwd: string; env?: Record<string, string> }) {
  const [cmd, ...args] = needsArgv(opts.sudo, opts.distro, opts.dataDir);
  const r = spawnSync(cmd!, args, {
    cwd: opts.cwd,
    encoding: 'utf8',
    env: { PATH: `${opts.bin}:/usr/bin:/bin`, HF_LOG: opts.log, ...opts.env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function script(file: string, text: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\n${text}\n`);
  chmodSync(file, 0o755);
}

/** A stand-in kubectl that records its arguments and prints the recorded List (a server). */
const SERVER_KUBECTL = 'printf "%s\\n" "$@" > "$HF_LOG/kubectl.args"\ncat "$HF_LOG/list.json"';
/** A stand-in kubectl on an agent: kubectl's own output without a kubeconfig. */
const AGENT_KUBECTL = 'printf "%s\\n" "$@" > "$HF_LOG/kubectl.args"\ncat "$HF_LOG/agent.stderr" >&2\nexit 1';
/**
 * sudo as RHEL, Rocky and Alma configure it: `Defaults secure_path = /sbin:/bin:/usr/sbin:/usr/bin`,
 * so a command named without a path is searched there only, not in the user's PATH (where k3s's
 * installer puts /usr/local/bin/k3s): `sudo: k3s: command not found` (k3s-io/k3s#7245, #10175).
 */
const RHEL_SUDO = [
  '[ "$1" = -n ] && shift',
  'printf "%s\\n" "$@" > "$HF_LOG/sudo.args"',
  'PATH=/sbin:/bin:/usr/sbin:/usr/bin; export PATH',
  'command -v "$1" >/dev/null 2>&1 || { echo "sudo: $1: command not found" >&2; exit 1; }',
  'exec "$@"',
].join('\n');

function scriptNode() {
  const root = tmp('hf-needs-script-');
  const bin = path.join(root, 'bin');
  const log = path.join(root, 'log');
  mkdirSync(bin);
  mkdirSync(log);
  writeFileSync(path.join(log, 'list.json'), kubectlText('static-and-bare-pods.json'));
  writeFileSync(path.join(log, 'agent.stderr'), stderrOf('k3s-agent.stderr'));
  const dataDir = (dir: string, config: string) => {
    const dd = path.join(root, dir);
    mkdirSync(path.join(dd, 'agent/etc/containerd'), { recursive: true });
    writeFileSync(path.join(dd, 'agent/etc/containerd/config.toml'), config);
    return dd;
  };
  const args = (name: string) => readFileSync(path.join(log, `${name}.args`), 'utf8').split('\n').slice(0, -1);
  return { root, bin, log, dataDir, args };
}

const CONFIG_V2 = [
  'version = 2',
  '[plugins."io.containerd.grpc.v1.cri"]',
  '  stream_server_address = "127.0.0.1"',
  '  # sandbox_image = "commented/out:1"',
  '  sandbox_image = "rancher/mirrored-pause:3.6"',
  '',
].join('\n');

describe('NEEDS_SCRIPT run by /bin/sh', () => {
  const expectedKubectlArgs = ['get', WORKLOAD_KINDS, '--all-namespaces', '-o', 'json', `--request-timeout=${limit('remote.workloadsSeconds')}s`];

  it('k3s server, root: the sandbox line, then kubectl’s List, read as a server answer', () => {
    const n = scriptNode();
    script(path.join(n.bin, 'k3s'), SERVER_KUBECTL);
    const r = runNeedsScript({ sudo: false, distro: 'k3s', dataDir: n.dataDir('k3s', CONFIG_V2), bin: n.bin, log: n.log, cwd: n.root });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`@@sandbox\n  sandbox_image = "rancher/mirrored-pause:3.6"\n@@kubectl\n`)).toBe(true);
    expect(n.args('kubectl')).toEqual(['kubectl', ...expectedKubectlArgs]);
    const a = parseNeedsAnswer(r, false);
    expect(a).toEqual({ kind: 'server', cluster: needsFromKubectl(JSON.parse(kubectlText('static-and-bare-pods.json'))), sandbox: PAUSE });
  });

  it('RKE2: its bundled kubectl under the data-dir, with its kubeconfig', () => {
    const n = scriptNode();
    const dd = n.dataDir('rke2', "version = 3\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'index.docker.io/rancher/mirrored-pause:3.6'\n");
    script(path.join(dd, 'bin/kubectl'), SERVER_KUBECTL);
    const r = runNeedsScript({ sudo: false, distro: 'rke2', dataDir: dd, bin: n.bin, log: n.log, cwd: n.root });
    expect(n.args('kubectl')).toEqual(['--kubeconfig', '/etc/rancher/rke2/rke2.yaml', ...expectedKubectlArgs]);
    expect(parseNeedsAnswer(r, false)).toMatchObject({ kind: 'server', sandbox: PAUSE });
  });

  it('k3s agent: kubectl’s refusal read as an agent, the sandbox image kept', () => {
    const n = scriptNode();
    script(path.join(n.bin, 'k3s'), AGENT_KUBECTL);
    const r = runNeedsScript({ sudo: false, distro: 'k3s', dataDir: n.dataDir('k3s', CONFIG_V2), bin: n.bin, log: n.log, cwd: n.root });
    expect(r.code).toBe(1);
    expect(parseNeedsAnswer(r, false)).toEqual({ kind: 'agent', message: AGENT_MESSAGE, sandbox: PAUSE });
  });

  it('in a pod with no ServiceAccount token: kubectl falls back to localhost, read as the token missing, not as an agent', () => {
    // (With the token, the script leaves out --request-timeout, which makes kubectl drop its
    // in-cluster configuration: test/integration/guardInCluster.test.ts runs that path.)
    const n = scriptNode();
    script(path.join(n.bin, 'k3s'), AGENT_KUBECTL);
    const env = { KUBERNETES_SERVICE_HOST: '10.43.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const r = runNeedsScript({ sudo: false, distro: 'k3s', dataDir: n.dataDir('k3s', CONFIG_V2), bin: n.bin, log: n.log, cwd: n.root, env });
    expect(r.stdout).toContain('@@pod no-token\n@@kubectl\n');
    expect(n.args('kubectl')).toEqual(['kubectl', ...expectedKubectlArgs]);
    expect(parseNeedsAnswer(r, false)).toEqual({
      kind: 'error',
      message: 'kubectl has no in-cluster configuration: the pod has no ServiceAccount token (/var/run/secrets/kubernetes.io/serviceaccount/token)',
      sandbox: PAUSE,
    });
  });

  it('a hostile data-dir is only ever a path: nothing in it runs', () => {
    const n = scriptNode();
    script(path.join(n.bin, 'k3s'), SERVER_KUBECTL);
    const dd = n.dataDir('k3s $(touch pwned1); touch pwned2 `touch pwned3` "; touch pwned4', CONFIG_V2);
    const r = runNeedsScript({ sudo: false, distro: 'k3s', dataDir: dd, bin: n.bin, log: n.log, cwd: n.root });
    // the config under that very path was read: the name went through unchanged
    expect(parseNeedsAnswer(r, false)).toMatchObject({ kind: 'server', sandbox: PAUSE });
    expect(readdirSync(n.root).filter((f) => f.startsWith('pwned'))).toEqual([]);
    expect(existsSync(path.join(n.root, 'pwned1'))).toBe(false);
  });

  // BUG (see the report): the script hands sudo the bare name `k3s` it found on the SSH user's PATH.
  // sudo searches its own secure_path, which on RHEL-family systems lacks /usr/local/bin (where
  // k3s's installer puts k3s), so every non-root node with sudo there answers "sudo -n refused
  // kubectl (sudo: k3s: command not found)" and its cluster is never read.
  it('non-root with sudo: sudo is given the absolute path of the k3s it found (secure_path lacks /usr/local/bin on RHEL)', () => {
    const n = scriptNode();
    script(path.join(n.bin, 'k3s'), SERVER_KUBECTL);
    script(path.join(n.bin, 'sudo'), RHEL_SUDO);
    const r = runNeedsScript({ sudo: true, distro: 'k3s', dataDir: n.dataDir('k3s', CONFIG_V2), bin: n.bin, log: n.log, cwd: n.root });
    expect(n.args('sudo')[0]).toBe(path.join(n.bin, 'k3s'));
    expect(parseNeedsAnswer(r, true)).toMatchObject({ kind: 'server', sandbox: PAUSE });
  });
});

describe('parseSandboxLines', () => {
  it.each([
    ['containerd config version 2', '  sandbox_image = "rancher/mirrored-pause:3.6"', PAUSE],
    ['version 3 (pinned_images.sandbox), single quotes', "  sandbox = 'registry.k8s.io/pause:3.10'", 'registry.k8s.io/pause:3.10'],
    ['version 3, double quotes', 'sandbox = "registry.k8s.io/pause:3.10"', 'registry.k8s.io/pause:3.10'],
    ['no spaces', 'sandbox_image="rancher/mirrored-pause:3.6"', PAUSE],
    ['a private registry (system-default-registry)', '\tsandbox_image = "registry.local:5000/rancher/mirrored-pause:3.6"', 'registry.local:5000/rancher/mirrored-pause:3.6'],
    ['by digest', `sandbox_image = "rancher/mirrored-pause:3.6@sha256:${'ab'.repeat(32)}"`, `docker.io/rancher/mirrored-pause@sha256:${'ab'.repeat(32)}`],
  ])('%s', (_what, line, ref) => {
    expect(parseSandboxLines([line])).toBe(ref);
  });

  it('reads nothing from other keys, comments, empty values or what is not a reference', () => {
    expect(parseSandboxLines([])).toBeNull();
    expect(parseSandboxLines(["  sandboxer = 'podsandbox'", '# sandbox_image = "a/b:1"', 'sandbox_mode = "x"', 'sandbox_image = ""'])).toBeNull();
    expect(parseSandboxLines(['sandbox_image = "Not A Reference"'])).toBeNull();
  });

  it('the first line that names one', () => {
    expect(parseSandboxLines(["sandboxer = 'podsandbox'", "sandbox = 'registry.k8s.io/pause:3.10'", 'sandbox_image = "rancher/mirrored-pause:3.6"'])).toBe('registry.k8s.io/pause:3.10');
  });
});

describe('parseNeedsAnswer', () => {
  const listBody = kubectlText('static-and-bare-pods.json');

  it('a server: the List read by shared/workloads, with the sandbox image', () => {
    const a = parseNeedsAnswer({ code: 0, stdout: `${SANDBOX_V2}@@kubectl\n${listBody}`, stderr: '' }, false);
    expect(a.kind).toBe('server');
    if (a.kind !== 'server') return;
    expect(a.sandbox).toBe(PAUSE);
    expect(a.cluster).toEqual(needsFromKubectl(JSON.parse(listBody)));
    expect(a.cluster.images.map((i) => [i.ref, i.onNodes])).toEqual([
      ['gcr.io/k8s-minikube/storage-provisioner:v5', ['minikube']],
      ['registry.k8s.io/etcd:3.5.9-0', ['minikube']],
    ]);
  });

  it('a server with several kinds in one List (Node, Service, a Deployment scaled to 0), no sandbox line', () => {
    const nodeAndService = JSON.parse(kubectlText('node-and-service.json')) as { items: unknown[] };
    const deployment = JSON.parse(kubectlText('objects/deployment-scaled-to-0.json')) as unknown;
    const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [...nodeAndService.items, deployment] };
    const a = parseNeedsAnswer({ code: 0, stdout: `@@sandbox\n@@kubectl\n${JSON.stringify(list, null, 4)}\n`, stderr: '' }, true);
    expect(a).toEqual({
      kind: 'server',
      sandbox: null,
      cluster: {
        images: [
          {
            ref: 'registry.local:5000/shop/payments:2.3',
            written: ['registry.local:5000/shop/payments:2.3'],
            workloads: [{ kind: 'Deployment', namespace: 'shop', name: 'payments', why: 'scaled to 0' }],
          },
        ],
        nodes: [{ name: 'minikube', addresses: ['192.168.49.2', 'minikube'] }],
        unreadable: [],
      },
    });
  });

  it('a k3s agent: several klog lines, then the refused localhost:8080, exit 1', () => {
    const stderr = stderrOf('k3s-agent.stderr');
    expect(stderr.split('\n').filter((l) => l.startsWith('E1205')).length).toBe(5);
    for (const sudo of [false, true]) {
      expect(parseNeedsAnswer({ code: 1, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr }, sudo)).toEqual({ kind: 'agent', message: AGENT_MESSAGE, sandbox: PAUSE });
    }
    // only the last line, as an older kubectl prints it
    expect(parseNeedsAnswer({ code: 1, stdout: '@@sandbox\n@@kubectl\n', stderr: 'The connection to the server localhost:8080 was refused - did you specify the right host or port?\n' }, false)).toEqual({
      kind: 'agent',
      message: AGENT_MESSAGE,
      sandbox: null,
    });
  });

  it('an RKE2 agent: the kubeconfig named with --kubeconfig does not exist', () => {
    expect(parseNeedsAnswer({ code: 1, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr: stderrOf('rke2-agent.stderr') }, false)).toMatchObject({ kind: 'agent' });
  });

  it('permission denied on /etc/rancher/k3s/k3s.yaml for a non-root user without sudo: how to fix it', () => {
    const a = parseNeedsAnswer({ code: 1, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr: stderrOf('k3s-permission-denied.stderr') }, false);
    expect(a).toEqual({
      kind: 'error',
      message: "the kubeconfig is root-only: connect as root, or let Holdfast use sudo -n (the node's --sudo option)",
      sandbox: PAUSE,
    });
    expect(parseNeedsAnswer({ code: 1, stdout: '', stderr: stderrOf('rke2-permission-denied.stderr') }, false)).toMatchObject({ kind: 'error', message: expect.stringMatching(/^the kubeconfig is root-only/) });
  });

  it('permission denied even through sudo -n: says so, quoting kubectl', () => {
    const a = parseNeedsAnswer({ code: 1, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr: stderrOf('rke2-permission-denied.stderr') }, true);
    expect(a).toEqual({
      kind: 'error',
      message: 'kubectl could not read the kubeconfig even through sudo -n (error: error loading config file "/etc/rancher/rke2/rke2.yaml": open /etc/rancher/rke2/rke2.yaml: permission denied)',
      sandbox: PAUSE,
    });
    const k3s = parseNeedsAnswer({ code: 1, stdout: '', stderr: stderrOf('k3s-permission-denied.stderr') }, true);
    expect(k3s).toMatchObject({ kind: 'error', sandbox: null, message: expect.stringMatching(/^kubectl could not read the kubeconfig even through sudo -n \(.*k3s\.yaml/) });
  });

  it('sudo -n refused (a password is required)', () => {
    expect(parseNeedsAnswer({ code: 1, stdout: '@@sandbox\n@@kubectl\n', stderr: 'sudo: a password is required\n' }, true)).toEqual({
      kind: 'error',
      message: 'sudo -n refused kubectl (sudo: a password is required)',
      sandbox: null,
    });
  });

  it('exit 127: no kubectl on the node (the sandbox image still counts)', () => {
    expect(parseNeedsAnswer({ code: 127, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr: 'no kubectl on the node\n' }, false)).toEqual({
      kind: 'none',
      message: 'no k3s or RKE2 kubectl on the node',
      sandbox: PAUSE,
    });
  });

  it('another failure: the first line kubectl printed, else the exit', () => {
    expect(parseNeedsAnswer({ code: 1, stdout: '', stderr: '\n  Unable to connect to the server: net/http: TLS handshake timeout\n' }, false)).toEqual({
      kind: 'error',
      message: 'kubectl failed: Unable to connect to the server: net/http: TLS handshake timeout',
      sandbox: null,
    });
    expect(parseNeedsAnswer({ code: 2, stdout: '', stderr: '' }, false)).toMatchObject({ kind: 'error', message: 'kubectl failed: exit 2' });
    expect(parseNeedsAnswer({ code: null, stdout: '', stderr: '' }, false)).toMatchObject({ kind: 'error', message: 'kubectl failed: exit by a signal' });
  });

  it('output that is not JSON', () => {
    expect(parseNeedsAnswer({ code: 0, stdout: `${SANDBOX_V2}@@kubectl\nNAME   READY   STATUS\nweb-1  1/1     Running\n`, stderr: '' }, false)).toEqual({
      kind: 'error',
      message: 'kubectl printed something that is not JSON',
      sandbox: PAUSE,
    });
    // no @@kubectl marker at all: nothing to read
    expect(parseNeedsAnswer({ code: 0, stdout: SANDBOX_V2, stderr: '' }, false)).toMatchObject({ kind: 'error', message: 'kubectl printed something that is not JSON', sandbox: PAUSE });
    // cut short (the output limit)
    expect(parseNeedsAnswer({ code: 0, stdout: `@@sandbox\n@@kubectl\n${listBody.slice(0, 200)}`, stderr: '' }, false)).toMatchObject({ kind: 'error' });
  });

  it('JSON that is not a List', () => {
    const pod = JSON.parse(kubectlText('objects/pod-pending.json')) as unknown;
    for (const doc of [pod, { kind: 'List' }, { kind: 'List', items: {} }, [], null, 'List']) {
      expect(parseNeedsAnswer({ code: 0, stdout: `@@sandbox\n@@kubectl\n${JSON.stringify(doc)}`, stderr: '' }, false)).toEqual({
        kind: 'error',
        message: 'not the output of `kubectl get … -o json`: expected a List with an items array',
        sandbox: null,
      });
    }
  });
});

describe('readClusterAnswer (one exec over the node’s SSH connection)', () => {
  const execWith = (answer: (argv: string[], opts: ExecOptions) => Promise<ExecResult>) => {
    const seen: { argv: string[]; opts: ExecOptions }[] = [];
    return {
      seen,
      ssh: {
        exec: (argv: string[], opts: ExecOptions = {}) => {
          seen.push({ argv, opts });
          return answer(argv, opts);
        },
      },
    };
  };

  it('runs needsArgv bounded by the workloads limits, and reads the answer', async () => {
    const { ssh, seen } = execWith(() => Promise.resolve({ code: 1, stdout: `${SANDBOX_V2}@@kubectl\n`, stderr: stderrOf('k3s-agent.stderr') }));
    expect(await readClusterAnswer(ssh, { sudo: true, distro: 'k3s', dataDir: '/data/k3s' })).toEqual({ kind: 'agent', message: AGENT_MESSAGE, sandbox: PAUSE });
    expect(seen).toEqual([{ argv: needsArgv(true, 'k3s', '/data/k3s'), opts: { outputLimit: 'remote.workloadsBytes', timeoutMs: (limit('remote.workloadsSeconds') + 5) * 1000 } }]);
  });

  it('too slow or too much: an error answer, not a throw', async () => {
    for (const code of ['TIMEOUT', 'REFUSED'] as const) {
      const { ssh } = execWith(() => Promise.reject(new HoldfastError(code, `kubectl on edge1: ${code}`)));
      expect(await readClusterAnswer(ssh, { sudo: false, distro: 'k3s', dataDir: '/var/lib/rancher/k3s' })).toEqual({ kind: 'error', message: `kubectl on edge1: ${code}`, sandbox: null });
    }
  });

  it('a dropped connection is thrown', async () => {
    const { ssh } = execWith(() => Promise.reject(new HoldfastError('UNREACHABLE', 'connection lost')));
    await expect(readClusterAnswer(ssh, { sudo: false, distro: 'rke2', dataDir: '/var/lib/rancher/rke2' })).rejects.toThrow('connection lost');
    const { ssh: plain } = execWith(() => Promise.reject(new Error('channel closed')));
    await expect(readClusterAnswer(plain, { sudo: false, distro: 'k3s', dataDir: '/var/lib/rancher/k3s' })).rejects.toThrow('channel closed');
  });
});

// ---------------------------------------------------------------------------------------------
// nodeNeeds.ts

describe('parseOperatorList', () => {
  const LINES = [
    '# images site A needs even when nothing runs them',
    '',
    'nginx',
    '   registry.local:5000/shop/payments:2.3   # the shop',
    'docker.io/library/nginx:latest',
    'Nginx:1',
    `rancher/mirrored-pause:3.6@sha256:${'ab'.repeat(32)}`,
    '\t',
    `sha256:${'c'.repeat(64)}`,
    'nginx # again',
    '',
  ];
  const EXPECTED = {
    images: [
      { ref: 'docker.io/library/nginx:latest', workloads: [], source: 'list' },
      { ref: 'registry.local:5000/shop/payments:2.3', workloads: [], source: 'list' },
      { ref: `docker.io/rancher/mirrored-pause@sha256:${'ab'.repeat(32)}`, workloads: [], source: 'list' },
    ],
    notes: [
      'needed-images/site-a.txt line 6: "Nginx:1" is not an image reference',
      `needed-images/site-a.txt line 9: "sha256:${'c'.repeat(64)}" is not an image reference`,
    ],
  };

  it('one reference a line, normalised as CRI does; comments, blank lines and duplicates dropped; bad lines noted with their number', () => {
    expect(parseOperatorList(LINES.join('\n'), 'needed-images/site-a.txt')).toEqual(EXPECTED);
  });

  // BUG (see the report): with CRLF line ends `#.*$` does not match (`.` stops at the \r and `$`
  // is the end of the input), so a comment line becomes "not an image reference" and a reference
  // followed by a comment is dropped from the site's needs.
  it('reads a list saved with Windows line ends (CRLF) the same way', () => {
    expect(parseOperatorList(LINES.join('\r\n'), 'needed-images/site-a.txt')).toEqual(EXPECTED);
  });

  it('shows at most 80 characters of a bad line', () => {
    const bad = `A${'x'.repeat(200)}`;
    expect(parseOperatorList(bad, 'l').notes).toEqual([`l line 1: "${bad.slice(0, 80)}" is not an image reference`]);
  });

  it('an empty or comment-only list names nothing', () => {
    expect(parseOperatorList('', 'l')).toEqual({ images: [], notes: [] });
    expect(parseOperatorList('# nothing yet\n\n', 'l')).toEqual({ images: [], notes: [] });
  });
});

describe('readOperatorList (files in a temp Holdfast home)', () => {
  const homeWith = (files: Record<string, string | Buffer>) => {
    const home = tmp('hf-needs-home-');
    if (Object.keys(files).length) mkdirSync(path.join(home, NEEDED_IMAGES_DIR));
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(home, NEEDED_IMAGES_DIR, name), text);
    return home;
  };

  it('the group file, then the node file', () => {
    expect(listFilesFor('/h', { name: 'edge1', group: 'site-a' })).toEqual(['/h/needed-images/site-a.txt', '/h/needed-images/edge1.txt']);
    expect(listFilesFor('/h', { name: 'edge1' })).toEqual(['/h/needed-images/edge1.txt']);
  });

  it('reads both, merging their references and notes', async () => {
    const home = homeWith({
      'site-a.txt': '# site A\nnginx\nregistry.local/app:3 # the app\n\nNginx:1\n',
      'edge1.txt': 'docker.io/library/nginx:latest\nbusybox:1.36\n',
      'edge2.txt': 'redis:7\n',
    });
    expect(await readOperatorList(home, { name: 'edge1', group: 'site-a' })).toEqual({
      source: { kind: 'list', label: 'needed-images/site-a.txt, needed-images/edge1.txt' },
      images: [
        { ref: 'docker.io/library/nginx:latest', workloads: [], source: 'list' },
        { ref: 'registry.local/app:3', workloads: [], source: 'list' },
        { ref: 'docker.io/library/busybox:1.36', workloads: [], source: 'list' },
      ],
      notes: ['needed-images/site-a.txt line 5: "Nginx:1" is not an image reference'],
    });
    // another node of the group: the group file and its own
    expect((await readOperatorList(home, { name: 'edge2', group: 'site-a' }))?.images.map((i) => i.ref)).toEqual([
      'docker.io/library/nginx:latest',
      'registry.local/app:3',
      'docker.io/library/redis:7',
    ]);
    // a node with no group and no file of its own
    expect(await readOperatorList(home, { name: 'edge3' })).toBeNull();
  });

  it('none: null (no folder, or no file for the node)', async () => {
    expect(await readOperatorList(homeWith({}), { name: 'edge1', group: 'site-a' })).toBeNull();
    expect(await readOperatorList(homeWith({ 'other.txt': 'nginx\n' }), { name: 'edge1', group: 'site-a' })).toBeNull();
  });

  it('a file over the size limit is not read, and says so', async () => {
    const max = limit('needs.listBytes');
    const big = Buffer.alloc(max + 1, 'a');
    const home = homeWith({ 'site-a.txt': big, 'edge1.txt': 'nginx\n' });
    const bigFile = path.join(home, NEEDED_IMAGES_DIR, 'site-a.txt');
    expect(await readOperatorList(home, { name: 'edge1', group: 'site-a' })).toEqual({
      source: { kind: 'list', label: 'needed-images/edge1.txt' },
      images: [{ ref: 'docker.io/library/nginx:latest', workloads: [], source: 'list' }],
      notes: [`${bigFile} is larger than ${max} bytes and was not read`],
    });
    // only the big one: a list that names nothing, with the note
    expect(await readOperatorList(homeWith({ 'site-a.txt': big }), { name: 'edge1', group: 'site-a' })).toMatchObject({
      source: { kind: 'list', label: 'needed-images' },
      images: [],
      notes: [expect.stringMatching(/site-a\.txt is larger than \d+ bytes and was not read$/)],
    });
    // exactly at the limit is read
    const atLimit = Buffer.alloc(max, ' ');
    atLimit.write('nginx\n');
    expect((await readOperatorList(homeWith({ 'edge1.txt': atLimit }), { name: 'edge1' }))?.images.map((i) => i.ref)).toEqual(['docker.io/library/nginx:latest']);
  });

  it('a file that cannot be read (a folder by that name) is noted, the other still read', async () => {
    const home = homeWith({ 'edge1.txt': 'nginx\n' });
    mkdirSync(path.join(home, NEEDED_IMAGES_DIR, 'site-a.txt'));
    const got = await readOperatorList(home, { name: 'edge1', group: 'site-a' });
    expect(got?.source.label).toBe('needed-images/edge1.txt');
    expect(got?.notes).toEqual([expect.stringMatching(/site-a\.txt could not be read \(.*EISDIR/)]);
  });
});

describe('kubeNodeFor', () => {
  const nodes = [
    { name: 'edge1', addresses: ['10.0.0.1', 'edge1'] },
    { name: 'k3s-agent-7f2', addresses: ['10.0.0.2', 'k3s-agent-7f2'] },
    { name: 'dual-a', addresses: ['10.0.0.9'] },
    { name: 'dual-b', addresses: ['10.0.0.9'] },
  ];

  it('by name', () => {
    expect(kubeNodeFor({ name: 'edge1', host: '192.168.1.1' }, nodes)).toBe('edge1');
    // the name wins over another Node's address
    expect(kubeNodeFor({ name: 'edge1', host: '10.0.0.2' }, nodes)).toBe('edge1');
  });

  it('by the one Node with the host among its addresses', () => {
    expect(kubeNodeFor({ name: 'agent-7', host: '10.0.0.2' }, nodes)).toBe('k3s-agent-7f2');
    expect(kubeNodeFor({ name: 'agent-7', host: 'k3s-agent-7f2' }, nodes)).toBe('k3s-agent-7f2');
  });

  it('an address two Nodes share, or none: null', () => {
    expect(kubeNodeFor({ name: 'x', host: '10.0.0.9' }, nodes)).toBeNull();
    expect(kubeNodeFor({ name: 'x', host: '10.9.9.9' }, nodes)).toBeNull();
    expect(kubeNodeFor({ name: 'x', host: '10.0.0.1' }, [])).toBeNull();
  });
});

const web: Workload = { kind: 'Deployment', namespace: 'default', name: 'web', why: 'running' };
const etcd: Workload = { kind: 'Pod', namespace: 'kube-system', name: 'etcd-edge1', why: 'running' };
const probe: Workload = { kind: 'Pod', namespace: 'default', name: 'probe', why: 'pending' };

/** Made up: a cluster of a server edge1 and an agent k3s-agent-7f2 (10.0.0.2). */
const CLUSTER: ClusterNeeds = {
  images: [
    { ref: 'docker.io/library/nginx:1.25', written: ['nginx:1.25'], workloads: [web] },
    { ref: 'registry.k8s.io/etcd:3.5.9-0', written: ['registry.k8s.io/etcd:3.5.9-0'], workloads: [etcd], onNodes: ['edge1'] },
    { ref: 'docker.io/library/busybox:1.36', written: ['busybox:1.36'], workloads: [probe], onNodes: ['k3s-agent-7f2', 'other'] },
  ],
  nodes: [
    { name: 'edge1', addresses: ['10.0.0.1'] },
    { name: 'k3s-agent-7f2', addresses: ['10.0.0.2'] },
  ],
  unreadable: [],
};

describe('clusterNeedsOn', () => {
  it('a need limited to Nodes applies on those Nodes only', () => {
    expect(clusterNeedsOn(CLUSTER, 'edge1')).toEqual([
      { ref: 'docker.io/library/nginx:1.25', workloads: [web], source: 'cluster' },
      { ref: 'registry.k8s.io/etcd:3.5.9-0', workloads: [etcd], source: 'cluster' },
    ]);
    expect(clusterNeedsOn(CLUSTER, 'k3s-agent-7f2').map((i) => i.ref)).toEqual(['docker.io/library/nginx:1.25', 'docker.io/library/busybox:1.36']);
  });

  it('a node the cluster does not know gets the unrestricted needs only', () => {
    expect(clusterNeedsOn(CLUSTER, null).map((i) => i.ref)).toEqual(['docker.io/library/nginx:1.25']);
    expect(clusterNeedsOn({ images: [], nodes: [], unreadable: [] }, 'edge1')).toEqual([]);
  });
});

describe('nodeNeedsFrom', () => {
  const server: ClusterAnswer = { kind: 'server', cluster: CLUSTER, sandbox: PAUSE };
  const agent: ClusterAnswer = { kind: 'agent', message: AGENT_MESSAGE, sandbox: PAUSE };
  const list: OperatorList = {
    source: { kind: 'list', label: 'needed-images/site-a.txt' },
    images: [{ ref: 'registry.local/app:3', workloads: [], source: 'list' }],
    notes: ['needed-images/site-a.txt line 2: "Nginx:1" is not an image reference'],
  };
  const SANDBOX_SOURCE = { kind: 'sandbox', label: "containerd's CRI config" };

  it('a server: its own cluster (the needs on its Node), the sandbox image', () => {
    expect(nodeNeedsFrom({ name: 'edge1', host: '10.0.0.1' }, server, null, null)).toEqual({
      sources: [{ kind: 'cluster', label: 'kubectl on edge1' }, SANDBOX_SOURCE],
      images: [
        { ref: 'docker.io/library/nginx:1.25', workloads: [web], source: 'cluster' },
        { ref: 'registry.k8s.io/etcd:3.5.9-0', workloads: [etcd], source: 'cluster' },
        { ref: PAUSE, workloads: [], source: 'sandbox' },
      ],
      notes: [],
    });
  });

  it('a server with an operator’s list and unreadable images: every source, the notes', () => {
    const cluster: ClusterNeeds = {
      ...CLUSTER,
      unreadable: [
        { image: 'Nginx:1', workload: web },
        { image: 'app:', workload: probe },
      ],
    };
    const got = nodeNeedsFrom({ name: 'edge1', host: '10.0.0.1' }, { kind: 'server', cluster, sandbox: null }, null, list);
    expect(got.sources).toEqual([{ kind: 'cluster', label: 'kubectl on edge1' }, list.source]);
    expect(got.images.map((i) => [i.ref, i.source])).toEqual([
      ['docker.io/library/nginx:1.25', 'cluster'],
      ['registry.k8s.io/etcd:3.5.9-0', 'cluster'],
      ['registry.local/app:3', 'list'],
    ]);
    expect(got.notes).toEqual([`2 image names in the cluster's workloads could not be read (e.g. "Nginx:1")`, ...list.notes]);
    expect('noSource' in got).toBe(false);
    const one = nodeNeedsFrom({ name: 'edge1', host: '10.0.0.1' }, { kind: 'server', cluster: { ...cluster, unreadable: cluster.unreadable.slice(1) }, sandbox: null }, null, null);
    expect(one.notes).toEqual(['1 image name in the cluster\'s workloads could not be read (e.g. "app:")']);
  });

  it('an agent with its server: the server’s cluster (the needs on the agent’s Node, found by address), its own sandbox image', () => {
    const found: ClusterServer = { node: 'edge1', cluster: CLUSTER };
    expect(nodeNeedsFrom({ name: 'agent-7', host: '10.0.0.2' }, agent, found, null)).toEqual({
      sources: [{ kind: 'cluster', label: 'kubectl on edge1' }, SANDBOX_SOURCE],
      images: [
        { ref: 'docker.io/library/nginx:1.25', workloads: [web], source: 'cluster' },
        { ref: 'docker.io/library/busybox:1.36', workloads: [probe], source: 'cluster' },
        { ref: PAUSE, workloads: [], source: 'sandbox' },
      ],
      notes: [],
    });
  });

  it('an agent without a server: no source of needs, the sandbox image still needed', () => {
    expect(nodeNeedsFrom({ name: 'agent-7', host: '10.0.0.2' }, agent, null, null)).toEqual({
      sources: [SANDBOX_SOURCE],
      images: [{ ref: PAUSE, workloads: [], source: 'sandbox' }],
      noSource: 'an agent node, and no configured server node of its cluster answered',
      notes: [],
    });
    // with an operator's list that names images, the list is the source
    const withList = nodeNeedsFrom({ name: 'agent-7', host: '10.0.0.2' }, agent, null, list);
    expect(withList.sources).toEqual([list.source, SANDBOX_SOURCE]);
    expect('noSource' in withList).toBe(false);
    expect(withList.notes).toEqual(list.notes);
    // a list that names nothing (only notes) is no source
    const empty: OperatorList = { source: { kind: 'list', label: 'needed-images' }, images: [], notes: ['needed-images/site-a.txt is larger than 1048576 bytes and was not read'] };
    expect(nodeNeedsFrom({ name: 'agent-7', host: '10.0.0.2' }, agent, null, empty)).toMatchObject({
      noSource: 'an agent node, and no configured server node of its cluster answered',
      notes: empty.notes,
    });
  });

  it('no kubectl: no source of needs', () => {
    expect(nodeNeedsFrom({ name: 'n', host: 'h' }, { kind: 'none', message: 'no k3s or RKE2 kubectl on the node', sandbox: null }, null, null)).toEqual({
      sources: [],
      images: [],
      noSource: "no k3s or RKE2 kubectl on the node, and no operator's list",
      notes: [],
    });
  });

  it('kubectl failed: why, as the reason (said once), or as a note when a list still answers', () => {
    const message = "the kubeconfig is root-only: connect as root, or let Holdfast use sudo -n (the node's --sudo option)";
    expect(nodeNeedsFrom({ name: 'n', host: 'h' }, { kind: 'error', message, sandbox: PAUSE }, null, null)).toEqual({
      sources: [SANDBOX_SOURCE],
      images: [{ ref: PAUSE, workloads: [], source: 'sandbox' }],
      noSource: message,
      notes: [],
    });
    // a list still answers; the failure stays a note
    const got = nodeNeedsFrom({ name: 'n', host: 'h' }, { kind: 'error', message, sandbox: null }, null, list);
    expect('noSource' in got).toBe(false);
    expect(got.notes).toEqual([...list.notes, message]);
  });

  it('the node was not asked', () => {
    expect(nodeNeedsFrom({ name: 'n', host: 'h' }, null, null, null)).toEqual({ sources: [], images: [], noSource: 'the node was not asked', notes: [] });
  });

  it('a recorded server answer, end to end: the static and bare pods bound to the node apply there only', () => {
    // the recorded pods with the recorded Node of that cluster (kubectl lists Nodes with them)
    const pods = JSON.parse(kubectlText('static-and-bare-pods.json')) as { items: unknown[] };
    const node = (JSON.parse(kubectlText('node-and-service.json')) as { items: { kind: string }[] }).items.filter((i) => i.kind === 'Node');
    const list = { ...pods, items: [...pods.items, ...node] };
    const answer = parseNeedsAnswer({ code: 0, stdout: `${SANDBOX_V2}@@kubectl\n${JSON.stringify(list)}`, stderr: '' }, false);
    expect(nodeNeedsFrom({ name: 'minikube', host: '192.168.49.2' }, answer, null, null).images.map((i) => i.ref)).toEqual([
      'gcr.io/k8s-minikube/storage-provisioner:v5',
      'registry.k8s.io/etcd:3.5.9-0',
      PAUSE,
    ]);
    if (answer.kind !== 'server') throw new Error('expected a server answer');
    // an agent the server does not list would get none of them
    expect(nodeNeedsFrom({ name: 'edge9', host: '10.9.9.9' }, agent, { node: 'minikube', cluster: answer.cluster }, null).images.map((i) => i.ref)).toEqual([PAUSE]);
  });
});

// ---------------------------------------------------------------------------------------------
// resolve.ts

/**
 * The service's `use` (the session pool) with prepared answers per node: a NodeSession needs a
 * live SSH connection, so this `use` never runs fn; it checks that fn is askCluster (the only
 * thing the resolver asks a node) and gives that node's answer. The overload keeps use's generic
 * type; the implementation's type is what askCluster returns, so no cast is needed.
 */
function fakePool(answers: Record<string, ClusterAnswer | Error>) {
  const calls: string[] = [];
  function use<T>(node: string, fn: (s: NodeSession) => Promise<T>): Promise<T>;
  function use(node: string, fn: unknown): Promise<ClusterAnswer> {
    calls.push(node);
    if (fn !== askCluster) return Promise.reject(new Error('the resolver asked a node something other than askCluster'));
    const a = answers[node];
    if (a === undefined) return Promise.reject(new Error(`${node} is not in this test`));
    return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
  }
  return { use, calls };
}

describe('createNeedsResolver', () => {
  const s1 = nodeDef('s1', '10.0.0.1', 'site-a');
  const a1 = nodeDef('a1', '10.0.0.2', 'site-a');
  const a2 = nodeDef('a2', '10.0.0.3', 'site-a');
  const stray = nodeDef('stray', '10.0.0.4', 'site-a');
  const x1 = nodeDef('x1', '10.1.0.1', 'site-b');
  const clusterA: ClusterNeeds = {
    images: [
      { ref: 'docker.io/library/nginx:1.25', written: ['nginx:1.25'], workloads: [web] },
      { ref: 'docker.io/library/busybox:1.36', written: ['busybox:1.36'], workloads: [probe], onNodes: ['k3s-a2'] },
    ],
    // s1 and a1 by name, a2 by address (its Node is named after its hostname); not `stray`
    nodes: [
      { name: 's1', addresses: ['10.0.0.1'] },
      { name: 'a1', addresses: ['10.0.0.2'] },
      { name: 'k3s-a2', addresses: ['10.0.0.3'] },
    ],
    unreadable: [],
  };
  // a server of another cluster that, by its names, would claim a1
  const clusterB: ClusterNeeds = { images: [{ ref: 'registry.local/b:1', written: ['registry.local/b:1'], workloads: [web] }], nodes: [{ name: 'a1', addresses: ['10.0.0.2'] }], unreadable: [] };
  const serverA: ClusterAnswer = { kind: 'server', cluster: clusterA, sandbox: PAUSE };
  const agentAnswer: ClusterAnswer = { kind: 'agent', message: AGENT_MESSAGE, sandbox: PAUSE };
  const answers = { s1: serverA, a1: agentAnswer, a2: agentAnswer, stray: agentAnswer, x1: { kind: 'server', cluster: clusterB, sandbox: null } } satisfies Record<string, ClusterAnswer>;
  const all = [s1, a1, a2, stray, x1];

  const resolver = (opts: { nodes?: NodeDef[]; answers?: Record<string, ClusterAnswer | Error>; home?: string; now?: () => number } = {}) => {
    const pool = fakePool(opts.answers ?? answers);
    const resolve = createNeedsResolver({
      home: opts.home ?? tmp('hf-needs-resolve-'),
      nodes: () => Promise.resolve(opts.nodes ?? all),
      use: pool.use,
      ...(opts.now ? { now: opts.now } : {}),
    });
    return { resolve, calls: pool.calls };
  };

  it('an agent finds its server among the nodes of its group; nodes of another group are not asked', async () => {
    const { resolve, calls } = resolver();
    const needs = await resolve(a1, agentAnswer);
    expect(needs).toEqual({
      sources: [
        { kind: 'cluster', label: 'kubectl on s1' },
        { kind: 'sandbox', label: "containerd's CRI config" },
      ],
      images: [
        { ref: 'docker.io/library/nginx:1.25', workloads: [web], source: 'cluster' },
        { ref: PAUSE, workloads: [], source: 'sandbox' },
      ],
      notes: [],
    });
    expect(calls.sort()).toEqual(['a2', 's1', 'stray']);
  });

  it('an agent listed by address gets the needs bound to its Node', async () => {
    const { resolve } = resolver();
    expect((await resolve(a2, agentAnswer)).images.map((i) => i.ref)).toEqual(['docker.io/library/nginx:1.25', 'docker.io/library/busybox:1.36', PAUSE]);
  });

  it("a server's own answer is kept and serves later agents: it is not asked again", async () => {
    const { resolve, calls } = resolver();
    const own = await resolve(s1, serverA);
    expect(own.sources[0]).toEqual({ kind: 'cluster', label: 'kubectl on s1' });
    expect(calls).toEqual([]); // a server needs no one else
    await resolve(a1, agentAnswer);
    expect(calls.sort()).toEqual(['a2', 'stray']);
    calls.length = 0;
    // every node's own answer is kept too: a1 said "agent" when it was resolved
    await resolve(a2, agentAnswer);
    expect(calls).toEqual([]);
    calls.length = 0;
    await resolve(a1, agentAnswer);
    await resolve(a2, agentAnswer);
    expect(calls).toEqual([]);
  });

  it('answers are asked again once they are older than the TTL (a fake clock)', async () => {
    let t = 1_000_000;
    const { resolve, calls } = resolver({ now: () => t });
    await resolve(a1, agentAnswer);
    expect(calls.filter((c) => c === 's1')).toEqual(['s1']);
    t += CLUSTER_ANSWER_TTL_MS - 1;
    await resolve(a1, agentAnswer);
    expect(calls.filter((c) => c === 's1')).toEqual(['s1']);
    t += 1;
    await resolve(a1, agentAnswer);
    expect(calls.filter((c) => c === 's1')).toEqual(['s1', 's1']);
  });

  it("an agent not listed among the server's Nodes gets no server: the reason says the server answered, and which Nodes it lists", async () => {
    const { resolve, calls } = resolver();
    expect(await resolve(stray, agentAnswer)).toEqual({
      sources: [{ kind: 'sandbox', label: "containerd's CRI config" }],
      images: [{ ref: PAUSE, workloads: [], source: 'sandbox' }],
      noSource: "kubectl on s1 answered, but no Node of its cluster has this node's name (stray) or address (10.0.0.4)",
      unmatched: { server: 's1', nodes: ['a1', 'k3s-a2', 's1'], total: 3 },
      notes: [],
    });
    expect(calls.sort()).toEqual(['a1', 'a2', 's1']);
  });

  it('mapped to its Kubernetes Node (k8sNode), the same agent gets the server’s needs, those bound to that Node included', async () => {
    const { resolve } = resolver();
    expect(await resolve({ ...stray, k8sNode: 'k3s-a2' }, agentAnswer)).toEqual({
      sources: [
        { kind: 'cluster', label: 'kubectl on s1' },
        { kind: 'sandbox', label: "containerd's CRI config" },
      ],
      images: [
        { ref: 'docker.io/library/nginx:1.25', workloads: [web], source: 'cluster' },
        { ref: 'docker.io/library/busybox:1.36', workloads: [probe], source: 'cluster' },
        { ref: PAUSE, workloads: [], source: 'sandbox' },
      ],
      notes: [],
    });
  });

  it('an unreachable candidate is an answer like any other: the others still count', async () => {
    const { resolve, calls } = resolver({ answers: { ...answers, a2: new Error('connect ETIMEDOUT 10.0.0.3:22') } });
    expect((await resolve(a1, agentAnswer)).sources[0]).toEqual({ kind: 'cluster', label: 'kubectl on s1' });
    expect(calls.sort()).toEqual(['a2', 's1', 'stray']);
    // only candidates that cannot answer: no server, no throw
    const { resolve: r2 } = resolver({ nodes: [a1, a2], answers: { a2: new Error('connect ETIMEDOUT 10.0.0.3:22') } });
    expect((await r2(a1, agentAnswer)).noSource).toBe('an agent node, and no configured server node of its cluster answered');
  });

  it('ungrouped nodes ask ungrouped nodes only', async () => {
    const u1 = nodeDef('s1', '10.0.0.1');
    const u2 = nodeDef('a1', '10.0.0.2');
    const { resolve, calls } = resolver({ nodes: [u1, u2, a2, x1] });
    expect((await resolve(u2, agentAnswer)).sources[0]).toEqual({ kind: 'cluster', label: 'kubectl on s1' });
    expect(calls).toEqual(['s1']);
  });

  it('server, none and error answers ask no other node', async () => {
    const { resolve, calls } = resolver();
    await resolve(s1, serverA);
    await resolve(a1, { kind: 'none', message: 'no k3s or RKE2 kubectl on the node', sandbox: null });
    await resolve(a2, { kind: 'error', message: 'sudo -n refused kubectl (sudo: a password is required)', sandbox: null });
    expect(calls).toEqual([]);
  });

  it(`asks at most ${MAX_SERVER_CANDIDATES} candidates`, async () => {
    const many = Array.from({ length: MAX_SERVER_CANDIDATES + 4 }, (_, i) => nodeDef(`n${String(i).padStart(2, '0')}`, `10.2.0.${i + 1}`, 'big'));
    const { resolve, calls } = resolver({ nodes: many, answers: Object.fromEntries(many.map((n) => [n.name, agentAnswer])) });
    await resolve(many[0]!, agentAnswer);
    expect(calls.length).toBe(MAX_SERVER_CANDIDATES);
    expect(calls).not.toContain('n00');
  });

  it("reads the operator's list from Holdfast's home", async () => {
    const home = tmp('hf-needs-resolve-');
    mkdirSync(path.join(home, NEEDED_IMAGES_DIR));
    writeFileSync(path.join(home, NEEDED_IMAGES_DIR, 'site-a.txt'), 'registry.local/app:3\n');
    const { resolve } = resolver({ home });
    const needs = await resolve(stray, agentAnswer);
    expect(needs.sources).toEqual([
      { kind: 'list', label: 'needed-images/site-a.txt' },
      { kind: 'sandbox', label: "containerd's CRI config" },
    ]);
    expect('noSource' in needs).toBe(false);
    expect(needs.images.map((i) => i.ref)).toEqual(['registry.local/app:3', PAUSE]);
  });
});
