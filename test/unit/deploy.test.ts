// deploy/ (issue #50): every manifest parses with the project's YAML library and has the shape of
// the Kubernetes API objects it names; the guard DaemonSet, its RBAC and the systemd units keep the
// least privilege docs/at-the-site.md states, so a later edit cannot loosen them unnoticed; and
// Debian's systemd-analyze accepts the units. `promtool test rules` covers alerts.yml
// (test/integration/prometheus.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { WORKLOAD_KINDS } from '../../src/core/needs/cluster';
import { parsePinSet } from '../../src/shared/pinSet';

const root = path.resolve(import.meta.dirname, '../..');
const deployDir = path.join(root, 'deploy');
const read = (name: string) => readFileSync(path.join(deployDir, name), 'utf8');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The object at a path of keys; fails the test when it is not one. */
function at(o: unknown, ...keys: string[]): Obj {
  let cur = o;
  for (const k of keys) cur = isObj(cur) ? cur[k] : undefined;
  if (!isObj(cur)) throw new Error(`no object at ${keys.join('.')}`);
  return cur;
}
const list = (o: Obj, key: string): Obj[] => {
  const v = o[key];
  if (!Array.isArray(v)) throw new Error(`${key} is not a list`);
  return v.filter(isObj);
};

/** The API objects deploy/ may hold: kind → apiVersion, and whether it lives in a namespace. */
const KINDS: Record<string, { apiVersion: string; namespaced: boolean }> = {
  Namespace: { apiVersion: 'v1', namespaced: false },
  ServiceAccount: { apiVersion: 'v1', namespaced: true },
  ConfigMap: { apiVersion: 'v1', namespaced: true },
  DaemonSet: { apiVersion: 'apps/v1', namespaced: true },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  ClusterRoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
};
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

const manifests = readdirSync(deployDir).filter((f) => f.endsWith('.yaml')).sort();
const objects: Obj[] = manifests.flatMap((f) =>
  parseAllDocuments(read(f)).map((d) => {
    if (d.errors.length > 0) throw new Error(`${f}: ${d.errors[0]!.message}`);
    const o: unknown = d.toJS();
    if (!isObj(o)) throw new Error(`${f}: a document that is not an object`);
    return o;
  }),
);
const one = (kind: string, name: string): Obj => {
  const found = objects.filter((o) => o.kind === kind && at(o, 'metadata').name === name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0]!;
};

describe('deploy/*.yaml: Kubernetes API objects', () => {
  it('every document is a known kind at its apiVersion, named, in the holdfast namespace when namespaced', () => {
    expect(manifests).toEqual(['guard.yaml', 'pinset.yaml']);
    for (const o of objects) {
      const kind = String(o.kind);
      expect(Object.keys(KINDS), kind).toContain(kind);
      expect(o.apiVersion, kind).toBe(KINDS[kind]!.apiVersion);
      const meta = at(o, 'metadata');
      expect(String(meta.name)).toMatch(DNS_SUBDOMAIN);
      expect(meta.namespace, `${kind}/${String(meta.name)}`).toBe(KINDS[kind]!.namespaced ? 'holdfast' : undefined);
    }
  });

  it('the DaemonSet selects its own pods and runs Holdfast\'s image at this version', () => {
    const ds = one('DaemonSet', 'holdfast-guard');
    const spec = at(ds, 'spec');
    expect(at(spec, 'selector', 'matchLabels')).toEqual(at(spec, 'template', 'metadata', 'labels'));
    const [c, ...more] = list(at(spec, 'template', 'spec'), 'containers');
    expect(more).toEqual([]);
    expect(c!.image).toBe(`localhost/holdfast:${version}`);
    // Imported on each node (air-gapped), never pulled: no registry serves localhost/.
    expect(c!.imagePullPolicy).toBe('Never');
  });
});

describe('the guard DaemonSet keeps least privilege', () => {
  const pod = at(one('DaemonSet', 'holdfast-guard'), 'spec', 'template', 'spec');
  const container = list(pod, 'containers')[0]!;

  it('root only for the socket: no capability, no escalation, read-only root, RuntimeDefault seccomp', () => {
    expect(at(container, 'securityContext')).toEqual({
      privileged: false,
      runAsUser: 0,
      runAsGroup: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(at(pod, 'securityContext')).toEqual({ seccompProfile: { type: 'RuntimeDefault' } });
    // The host's PID namespace for k3s's command line (kubelet's GC flags); not its network or IPC.
    expect([pod.hostPID, pod.hostNetwork, pod.hostIPC]).toEqual([true, undefined, undefined]);
    expect(pod.initContainers).toBeUndefined();
  });

  it('mounts only the host paths it needs, read-only where it only reads; never /etc/rancher or k3s server state', () => {
    const mounts = new Map(list(container, 'volumeMounts').map((m) => [String(m.name), m]));
    const hostPaths = Object.fromEntries(
      list(pod, 'volumes')
        .filter((v) => 'hostPath' in v)
        .map((v) => [String(v.name), `${String(at(v, 'hostPath').path)}${mounts.get(String(v.name))?.readOnly === true ? ' (ro)' : ''}`]),
    );
    expect(hostPaths).toEqual({
      'containerd-socket': '/run/k3s/containerd/containerd.sock (ro)',
      'images-dir': '/var/lib/rancher/k3s/agent/images (ro)',
      'k3s-binary': '/usr/local/bin/k3s (ro)',
      'k3s-data': '/var/lib/rancher/k3s/data (ro)',
      textfile: '/var/lib/prometheus/node-exporter',
      home: '/var/lib/holdfast',
    });
    for (const m of mounts.values()) expect(String(m.mountPath)).not.toMatch(/^\/etc\/rancher|^\/var\/lib\/rancher\/k3s\/server/);
    expect(mounts.get('pin-set')).toEqual({ name: 'pin-set', mountPath: '/etc/holdfast', readOnly: true });
  });

  it('reads the pin set from the ConfigMap it mounts, and that pin set keeps Holdfast\'s own image', async () => {
    const volume = list(pod, 'volumes').find((v) => v.name === 'pin-set')!;
    const cm = one('ConfigMap', String(at(volume, 'configMap').name));
    const loop = String((container.args as unknown[])[0]);
    const file = /--pin-set \/etc\/holdfast\/(\S+)/.exec(loop)![1]!;
    const set = await parsePinSet(String(at(cm, 'data')[file]), `pinset.yaml:${file}`, 1 << 20);
    expect(set.spec.images).toContain(String(container.image));
    expect(set.spec.needed).toBe(true);
    expect(loop).toContain('holdfast guard --local --name "$NODE_NAME"');
    expect(loop).toContain('holdfast metrics --local --name "$NODE_NAME"');
  });

  it('its ServiceAccount may only get, list and watch the kinds the needs rule reads', () => {
    expect(pod.serviceAccountName).toBe('holdfast-guard');
    one('ServiceAccount', 'holdfast-guard');
    const groups: Record<string, string> = { pods: '', replicationcontrollers: '', nodes: '', deployments: 'apps', replicasets: 'apps', statefulsets: 'apps', daemonsets: 'apps', jobs: 'batch', cronjobs: 'batch' };
    const granted = list(one('ClusterRole', 'holdfast-guard'), 'rules').flatMap((r) => {
      expect(r.verbs).toEqual(['get', 'list', 'watch']);
      expect(Object.keys(r).sort()).toEqual(['apiGroups', 'resources', 'verbs']);
      const [group, ...others] = r.apiGroups as string[];
      expect(others).toEqual([]);
      return (r.resources as string[]).map((res) => `${group!}/${res}`);
    });
    expect(granted.sort()).toEqual(WORKLOAD_KINDS.split(',').map((k) => `${groups[k]!}/${k}`).sort());
    const binding = one('ClusterRoleBinding', 'holdfast-guard');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'holdfast-guard' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'holdfast-guard', namespace: 'holdfast' }]);
  });
});

/** A unit file's [Service] settings: key → every value it is given, in order. */
function unitSettings(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
  }
  return out;
}

describe('deploy/holdfast-guard.service keeps least privilege', () => {
  const s = unitSettings(read('holdfast-guard.service'));

  it('no capability, no new privileges, a read-only system and no home, writing only its two dirs', () => {
    expect(s.get('CapabilityBoundingSet')).toEqual(['']);
    expect(s.get('AmbientCapabilities')).toEqual(['']);
    expect(s.get('NoNewPrivileges')).toEqual(['yes']);
    expect(s.get('ProtectSystem')).toEqual(['strict']);
    expect(s.get('ProtectHome')).toEqual(['yes']);
    expect(s.get('ReadWritePaths')).toEqual(['/var/lib/prometheus/node-exporter /var/lib/holdfast']);
    // Loopback only: the API server on a server node (k3s.yaml points at 127.0.0.1:6443).
    expect([s.get('IPAddressDeny'), s.get('IPAddressAllow')]).toEqual([['any'], ['localhost']]);
  });

  it('runs guard, then metrics, into the directory it may write', () => {
    expect(s.get('ExecStart')).toEqual([
      '/usr/local/bin/holdfast guard --local --pin-set /etc/holdfast/pinset.yaml --textfile /var/lib/prometheus/node-exporter/holdfast-guard.prom',
      '/usr/local/bin/holdfast metrics --local --textfile /var/lib/prometheus/node-exporter/holdfast.prom',
    ]);
  });
});

describe('systemd-analyze verify accepts the units', () => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'holdfast-units-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each([['holdfast-guard'], ['holdfast-metrics']])('%s.service and .timer', (unit) => {
    // verify wants ExecStart's program to exist: the repository's own CLI stands in for /usr/local/bin/holdfast.
    for (const ext of ['service', 'timer']) {
      writeFileSync(path.join(work, `${unit}.${ext}`), read(`${unit}.${ext}`).replaceAll('/usr/local/bin/holdfast', path.join(root, 'bin', 'holdfast.mjs')));
    }
    const r = spawnSync('systemd-analyze', ['verify', `./${unit}.service`, `./${unit}.timer`], { cwd: work, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
