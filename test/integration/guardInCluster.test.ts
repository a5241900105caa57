// The guard DaemonSet's in-cluster path (#50): the guard image under podman with a lab node's
// socket, k3s binary and data dir mounted as deploy/guard.yaml mounts them, no k3s.yaml, and the
// ServiceAccount's token, ca.crt and namespace where a pod has them. `k3s kubectl` is then Debian's
// real kubectl (scripts/lab-kubectl.sh) in its in-cluster configuration, asking a lab API server
// (lab/apiServer.ts) that wants the token, enforces the manifest's own ClusterRole and serves the
// workloads the stand-in kubectl prints (lab/workloads.ts). The pod joins the host's network to
// reach it on loopback (a pod would use the service address). Not proven: a real kube-apiserver.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { clusterRulesFor, criPinned, startApiServer, startLab, workloadList, type Lab, type LabApiServer, type LabNodeHandle, type PolicyRule } from '../../lab';
import type { WorkloadDescription } from '../../lab/workloads';
import type { GuardRunJson } from '../../src/cli/commands/guard';
import { WORKLOAD_KINDS } from '../../src/core/needs/cluster';
import { criPinsHonoured } from './support';
import { ctrImport, expectDurable } from './guardSite';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `localhost/holdfast:${VERSION}`;
const KUBECTL = path.join(process.env.HOLDFAST_KUBECTL_CACHE ?? '/var/cache/holdfast-lab/kubectl', 'kubectl');
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const NEEDED = 'registry.local/site/web:1'; // the cluster's Deployment runs it; imported by hand
const LISTED = 'registry.local/site/listed:1'; // on the operator's list only; imported by hand

const WORKLOADS: WorkloadDescription = {
  nodes: [{ name: 'ic', role: 'server' }],
  deployments: [{ namespace: 'site', name: 'web', image: NEEDED }],
};

let lab: Lab;
let n: LabNodeHandle;
let honoured: boolean;
let api: LabApiServer;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-guard-incluster-'));
const archive = path.join(work, 'image', 'holdfast-guard.tar');
const home = path.join(work, 'home');
const pinSet = path.join(work, 'pinset.yaml');

interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: PolicyRule[];
  spec?: { template: { spec: { serviceAccountName: string; automountServiceAccountToken?: boolean; containers: { volumeMounts: { name: string; mountPath: string }[] }[] } } };
}
const manifest = (): Doc[] => parseAllDocuments(readFileSync(path.join(repo, 'deploy', 'guard.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
const podSpec = () => manifest().find((d) => d.kind === 'DaemonSet')!.spec!.template.spec;
const serviceAccount = () => ({ namespace: 'holdfast', name: podSpec().serviceAccountName });

/** Podman as root raises nofile and nproc to 1M, which a runner without CAP_SYS_RESOURCE cannot. */
const LIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

function podman(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const storage = ['--root', path.join(work, 'storage'), '--runroot', path.join(work, 'run'), '--storage-driver', 'vfs', '--tmpdir', path.join(work, 'libpod'), '--events-backend', 'none'];
  const env = { ...process.env, TMPDIR: work, CONTAINERS_REGISTRIES_CONF: path.join(work, 'registries.conf') };
  return run('podman', [...storage, ...args], { env, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 });
}

/** The pod's ServiceAccount files, as kubelet projects them; `token: null` leaves the token out. */
function saFiles(server: LabApiServer, token: string | null): string {
  const dir = mkdtempSync(path.join(work, 'sa-'));
  if (token !== null) writeFileSync(path.join(dir, 'token'), token);
  writeFileSync(path.join(dir, 'ca.crt'), server.caCert);
  writeFileSync(path.join(dir, 'namespace'), serviceAccount().namespace);
  return dir;
}

/** One guard run in the image, in-cluster: the DaemonSet's k3s mounts, the SA files, the service env. */
async function guardInPod(server: LabApiServer, token: string | null): Promise<{ run: GuardRunJson; stderr: string }> {
  const at = Object.fromEntries(podSpec().containers[0]!.volumeMounts.map((m) => [m.name, m.mountPath]));
  const mounts = [
    `${n.hostSocket}:${at['containerd-socket']}:ro`,
    `${n.hostImagesDir}:${at['images-dir']}:ro`,
    `${path.join(n.root, 'bin', 'k3s')}:${at['k3s-binary']}:ro`,
    `${path.join(n.root, 'rancher', 'k3s', 'data')}:${at['k3s-data']}:ro`,
    `${pinSet}:/etc/holdfast/pinset.yaml:ro`,
    `${home}:${at.home}`,
    `${saFiles(server, token)}:${SA_DIR}:ro`,
  ].flatMap((m) => ['--volume', m]);
  const env = ['--env', `KUBERNETES_SERVICE_HOST=${server.host}`, '--env', `KUBERNETES_SERVICE_PORT=${server.port}`, '--env', 'HOLDFAST_HOME=/var/lib/holdfast'];
  const r = await podman(['run', '--rm', '--network=host', '--read-only', '--read-only-tmpfs=false', '--cap-drop', 'ALL', ...LIMITS, ...env, ...mounts, IMAGE, 'guard', '--local', '--name', 'ic', '--pin-set', '/etc/holdfast/pinset.yaml', '--json']);
  return { run: JSON.parse(r.stdout) as GuardRunJson, stderr: r.stderr };
}

/** The resource requests the server saw: `verb group/resource status`, each once. */
const resourceRequests = (server: LabApiServer) => [...new Set(server.requests.filter((q) => q.resource).map((q) => `${q.verb} ${q.apiGroup}/${q.resource} ${q.status}`))].sort();

/** guard's only other line on stderr: kubelet ignoring the pin on an old containerd. */
const expectHonourNote = (stderr: string) => expect(stderr).toEqual(honoured ? '' : expect.stringMatching(/^warning: kubelet on ic will not honour this pin/));

const GRANTED_LISTS = ['/pods', 'apps/deployments', 'apps/replicasets', 'apps/statefulsets', 'apps/daemonsets', 'batch/jobs', 'batch/cronjobs', '/replicationcontrollers', '/nodes'];

beforeAll(async () => {
  writeFileSync(path.join(work, 'registries.conf'), '');
  const build = run('bash', [path.join(repo, 'scripts', 'build-guard-image.sh'), '--out', path.dirname(archive)], { cwd: work, maxBuffer: 16 * 1024 * 1024, timeout: 280_000 });
  [lab] = await Promise.all([startLab({ nodes: ['ic'] }), build]);
  n = lab.node('ic');
  honoured = await criPinsHonoured(n);
  await podman(['load', '--quiet', '--input', archive]);
  // A server's k3s, whose data dir holds the kubectl it runs; no k3s.yaml (no lab fixture) anywhere.
  await n.installDistroBinary('k3s', 'v1.33.7+k3s1', { kubectl: KUBECTL });
  api = await startApiServer({ workloads: WORKLOADS, rules: clusterRulesFor(manifest(), serviceAccount()), serviceAccount: serviceAccount() });
  mkdirSync(path.join(home, 'needed-images'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'needed-images', 'ic.txt'), `${LISTED}\n`);
  writeFileSync(pinSet, 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: site}\nspec:\n  needed: true\n');
  await ctrImport(n, work, NEEDED);
  await ctrImport(n, work, LISTED);
}, 300_000);

afterAll(async () => {
  await api?.stop();
  await lab?.stop();
  await podman(['rmi', '--all', '--force']).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

describe('guard in a pod, reading the cluster with its ServiceAccount', () => {
  it('the DaemonSet mounts the token, and its ServiceAccount is bound to read-only rules', () => {
    expect(podSpec().automountServiceAccountToken).toBe(true);
    const rules = clusterRulesFor(manifest(), serviceAccount());
    expect(new Set(rules.flatMap((r) => r.verbs))).toEqual(new Set(['get', 'list', 'watch']));
    expect(rules.flatMap((r) => r.resources ?? []).sort()).toEqual(WORKLOAD_KINDS.split(',').sort());
  });

  it('a wrong token: 401, kubectl fails, and guard falls back to the operator\'s list, saying why', async () => {
    api.requests.length = 0;
    const { run: r, stderr } = await guardInPod(api, 'not-the-token');
    expect(api.requests.length).toBeGreaterThan(0);
    expect(api.requests.every((q) => q.status === 401 && q.token === 'not-the-token')).toBe(true);
    expect(r.warnings).toEqual(['site needs: kubectl failed: error: You must be logged in to the server (Unauthorized)']);
    expectHonourNote(stderr);
    expect(r.fixed.map((f) => f.ref)).toContain(LISTED);
    expect(r.fixed.map((f) => f.ref)).not.toContain(NEEDED);
    await expectDurable(n, LISTED, honoured);
    expect(await criPinned(n, NEEDED)).toBe(false);
  });

  it('no token: kubectl has no in-cluster configuration, and guard falls back, saying why', async () => {
    api.requests.length = 0;
    const { run: r, stderr } = await guardInPod(api, null);
    expect(api.requests).toEqual([]);
    expect(r.warnings).toEqual([`site needs: kubectl has no in-cluster configuration: the pod has no ServiceAccount token (${SA_DIR}/token)`]);
    expectHonourNote(stderr);
    expect(r.durable).toEqual([LISTED]);
    expect(await criPinned(n, NEEDED)).toBe(false);
  });

  it('a rule missing from the ClusterRole: 403 for that list, and guard does not take a partial cluster', async () => {
    const docs = manifest();
    const role = docs.find((d) => d.kind === 'ClusterRole')!;
    role.rules = role.rules!.map((r) => ({ ...r, resources: r.resources!.filter((x) => x !== 'cronjobs') }));
    const narrow = await startApiServer({ workloads: WORKLOADS, rules: clusterRulesFor(docs, serviceAccount()), serviceAccount: serviceAccount() });
    try {
      const { run: r, stderr } = await guardInPod(narrow, narrow.token);
      expect(resourceRequests(narrow)).toContain('list batch/cronjobs 403');
      expect(resourceRequests(narrow).filter((q) => q.endsWith(' 403'))).toEqual(['list batch/cronjobs 403']);
      expect(r.warnings).toEqual([expect.stringMatching(/^site needs: kubectl failed: .*cronjobs\.batch is forbidden: User "system:serviceaccount:holdfast:holdfast-guard" cannot list resource "cronjobs" in API group "batch" at the cluster scope/)]);
      expectHonourNote(stderr);
      expect(r.durable).toEqual([LISTED]);
    } finally {
      await narrow.stop();
    }
  });

  it('the token: kubectl lists the workloads in-cluster, the needed image becomes durable, and only granted lists were asked', async () => {
    api.requests.length = 0;
    const { run: r, stderr } = await guardInPod(api, api.token);
    expect(r.warnings).toBeUndefined();
    expectHonourNote(stderr);
    expect(r.fixed.map((f) => f.ref)).toContain(NEEDED);
    await expectDurable(n, NEEDED, honoured);
    expect(api.requests.every((q) => q.token === api.token && q.method === 'GET' && q.status === 200)).toBe(true);
    expect(resourceRequests(api)).toEqual(GRANTED_LISTS.map((g) => `list ${g} 200`).sort());
    // The stand-in's answer and the API server's are one: the same objects, from workloadList.
    const viaApi = await podman(['run', '--rm', '--network=host', ...LIMITS, '--entrypoint', '/usr/local/bin/k3s', '--env', `KUBERNETES_SERVICE_HOST=${api.host}`, '--env', `KUBERNETES_SERVICE_PORT=${api.port}`,
      '--volume', `${path.join(n.root, 'bin', 'k3s')}:/usr/local/bin/k3s:ro`, '--volume', `${path.join(n.root, 'rancher', 'k3s', 'data')}:/var/lib/rancher/k3s/data:ro`,
      '--volume', `${saFiles(api, api.token)}:${SA_DIR}:ro`, IMAGE, 'kubectl', 'get', WORKLOAD_KINDS, '--all-namespaces', '-o', 'json']);
    const names = (l: { items: { kind: string; metadata: Record<string, unknown> }[] }) => l.items.map((i) => `${i.kind} ${String(i.metadata.namespace ?? '')}/${String(i.metadata.name)}`);
    expect(names(JSON.parse(viaApi.stdout) as { items: { kind: string; metadata: Record<string, unknown> }[] })).toEqual(names(workloadList(WORKLOADS)));
  });
});
