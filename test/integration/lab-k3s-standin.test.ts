// The lab's stand-in k3s over real SSH, as Holdfast meets it: `k3s --version`, a server's
// `k3s kubectl get … -o json` (root only, as k3s.yaml is), an agent's kubectl with no kubeconfig,
// RKE2's kubectl, and `npm run lab -- k3s-start` against this running lab from another process.
import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { kubectlJson, workloadList, type KubeList } from '../../lab/workloads';
import { repoRoot } from './support';

const K3S = 'v1.33.7+k3s1';
const GET = ['kubectl', 'get', 'pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,replicationcontrollers,nodes', '--all-namespaces', '-o', 'json'];
const REFUSED = 'The connection to the server localhost:8080 was refused - did you specify the right host or port?';
const MEMCACHE =
  /^E\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ memcache\.go:265\] "Unhandled Error" err="couldn't get current server API group list: Get \\"http:\/\/localhost:8080\/api\?timeout=32s\\": dial tcp 127\.0\.0\.1:8080: connect: connection refused"$/;

let lab: Lab;
let node: LabNodeHandle;
let user: string;
const fixture: KubeList = workloadList({
  nodes: [{ name: 'ks1', role: 'server' }],
  deployments: [{ name: 'sample', image: 'docker.io/library/holdfast-sample:1.0' }],
  cronJobs: [{ name: 'nightly-report', image: 'docker.io/library/holdfast-report:1.0' }],
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One command over SSH as `login` (strict host key checking against the lab's known_hosts). */
function ssh(login: string, command: string[]): Promise<Result> {
  const argv = ['-i', lab.clientKey, '-p', String(node.port), '-o', `UserKnownHostsFile=${lab.knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'LogLevel=ERROR', `${login}@${node.host}`, '--', ...command];
  return spawnResult('ssh', argv);
}

function spawnResult(cmd: string, args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  user = labUserName('hfks');
  lab = await startLab({ nodes: ['ks1'], users: [{ name: user, sudo: 'nopasswd' }], containerd: '2' });
  node = lab.node('ks1');
});

afterAll(async () => {
  await lab?.stop();
});

describe('a server node', () => {
  beforeAll(async () => {
    await node.installDistroBinary('k3s', K3S, { workloads: fixture });
  });

  it('answers --version', async () => {
    expect(await ssh('root', ['k3s', '--version'])).toEqual({ code: 0, stdout: `k3s version ${K3S} (0123abcd)\ngo version go1.23.6\n`, stderr: '' });
  });

  it('prints the workload fixture as kubectl prints a List, to root, in any argument order', async () => {
    const r = await ssh('root', ['k3s', 'kubectl', 'get', 'pods,nodes', '--all-namespaces', '-o', 'json']);
    expect(r).toEqual({ code: 0, stdout: kubectlJson(fixture), stderr: '' });
    const list = JSON.parse(r.stdout) as KubeList;
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' } });
    expect(list.items.map((i) => `${i.kind}/${String(i.metadata.name)}`)).toEqual(fixture.items.map((i) => `${i.kind}/${String(i.metadata.name)}`));
    expect(list.items.map((i) => i.kind)).toEqual(['Pod', 'Deployment', 'ReplicaSet', 'CronJob', 'Node']);
    for (const args of [GET, ['kubectl', '-o', 'json', 'get', '-A', 'pods'], ['kubectl', 'get', 'pods', '-ojson', '--all-namespaces'], ['kubectl', '--output=json', 'get', 'nodes']]) {
      expect((await ssh('root', ['k3s', ...args])).stdout).toBe(kubectlJson(fixture));
    }
    expect(await node.statInNode(`/var/lib/rancher/k3s/server/lab-kubectl.json`)).toBe('-rw------- root root');
  });

  it('refuses a user who cannot read the kubeconfig as k3s does, and answers through sudo', async () => {
    const r = await ssh(user, ['k3s', ...GET]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)" level=warning msg="Unable to read \/etc\/rancher\/k3s\/k3s\.yaml, please start server with --write-kubeconfig-mode or --write-kubeconfig-group to modify kube config permissions"$/,
    );
    expect(lines.slice(1)).toEqual(['error: error loading config file "/etc/rancher/k3s/k3s.yaml": open /etc/rancher/k3s/k3s.yaml: permission denied', '']);
    // naming the kubeconfig skips k3s's warning; kubectl's own error stays
    const named = await ssh(user, ['k3s', 'kubectl', '--kubeconfig', '/etc/rancher/k3s/k3s.yaml', 'get', 'pods', '-o', 'json']);
    expect(named).toEqual({ code: 1, stdout: '', stderr: 'error: error loading config file "/etc/rancher/k3s/k3s.yaml": open /etc/rancher/k3s/k3s.yaml: permission denied\n' });
    expect(await ssh(user, ['sudo', '-n', 'k3s', ...GET])).toEqual({ code: 0, stdout: kubectlJson(fixture), stderr: '' });
  });

  it('answers only get … -o json', async () => {
    const r = await ssh('root', ['k3s', 'kubectl', 'get', 'pods']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });
});

describe('an agent node (no workloads)', () => {
  beforeAll(async () => {
    await node.installDistroBinary('k3s', K3S);
  });

  it('has no kubeconfig: kubectl falls back to localhost:8080, exit 1', async () => {
    expect((await ssh('root', ['k3s', '--version'])).stdout).toBe(`k3s version ${K3S} (0123abcd)\ngo version go1.23.6\n`);
    for (const login of ['root', user]) {
      const r = await ssh(login, ['k3s', ...GET]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n');
      expect(lines.slice(-2)).toEqual([REFUSED, '']);
      expect(lines.slice(0, -2)).toHaveLength(5);
      for (const l of lines.slice(0, -2)) expect(l).toMatch(MEMCACHE);
    }
    await expect(access(path.join(node.root, 'rancher', 'k3s', 'server'))).rejects.toThrow();
  });
});

describe("RKE2's kubectl", () => {
  const KUBECTL = '/var/lib/rancher/rke2/bin/kubectl';
  afterAll(async () => {
    await node.installDistroBinary('rke2', null);
  });

  it('answers with --kubeconfig /etc/rancher/rke2/rke2.yaml on a server, not without', async () => {
    await node.installDistroBinary('rke2', 'v1.33.7+rke2r1', { workloads: fixture });
    expect((await ssh('root', ['rke2', '--version'])).stdout).toBe('rke2 version v1.33.7+rke2r1 (0123abcd)\ngo version go1.23.6\n');
    expect(await ssh('root', [KUBECTL, '--kubeconfig', '/etc/rancher/rke2/rke2.yaml', 'get', 'pods,nodes', '-A', '-o', 'json'])).toEqual({ code: 0, stdout: kubectlJson(fixture), stderr: '' });
    // plain kubectl: no kubeconfig named, none found
    const bare = await ssh('root', [KUBECTL, 'get', 'pods', '-A', '-o', 'json']);
    expect(bare.code).toBe(1);
    expect(bare.stderr.split('\n').slice(-2)).toEqual([REFUSED, '']);
    const denied = await ssh(user, [KUBECTL, '--kubeconfig=/etc/rancher/rke2/rke2.yaml', 'get', 'pods', '-o', 'json']);
    expect(denied).toEqual({ code: 1, stdout: '', stderr: 'error: error loading config file "/etc/rancher/rke2/rke2.yaml": open /etc/rancher/rke2/rke2.yaml: permission denied\n' });
  });

  it('on an agent names the missing kubeconfig', async () => {
    await node.installDistroBinary('rke2', 'v1.33.7+rke2r1');
    expect(await ssh('root', [KUBECTL, '--kubeconfig', '/etc/rancher/rke2/rke2.yaml', 'get', 'pods', '-A', '-o', 'json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: stat /etc/rancher/rke2/rke2.yaml: no such file or directory\n',
    });
  });
});

describe('npm run lab -- k3s-start', () => {
  const tsx = (): string => path.join(repoRoot, 'node_modules', '.bin', 'tsx');

  it('emulates a k3s start on a node of a lab another process runs', async () => {
    await writeImageArchive(path.join(node.hostImagesDir, 'standin.tar'), { format: 'oci', images: [{ name: 'docker.io/library/standin:1.0' }] });
    const r = await spawnResult(tsx(), ['lab/cli.ts', 'k3s-start', 'ks1', '--dir', lab.dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ks1: k3s start emulated (lab dir ${lab.dir})`);
    expect(r.stdout).toMatch(/^ {2}imported: +1$/m);
    expect(r.stdout).toContain(`${node.hostImagesDir}/standin.tar: docker.io/library/standin:1.0`);
    const ls = await node.ctr(['images', 'ls', 'name==docker.io/library/standin:1.0']);
    expect(ls).toContain('io.cattle.k3s.pinned=pinned');
  });

  it('names the running nodes when asked for another', async () => {
    const r = await spawnResult(tsx(), ['lab/cli.ts', 'k3s-start', 'nope', '--dir', lab.dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no running lab node nope');
    expect(r.stderr).toContain('running there: ks1');
  });
});
