// deploy/ (issue #50): every manifest validates against Kubernetes 1.33.0's API schemas, those
// kubernetes-models 4.5.1 ships (ajv validators per kind), strictly: an unknown field fails, as in
// kubectl's strict field validation. The guard DaemonSet, its RBAC and the systemd units keep the
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

/** The kinds deploy/ holds that live outside any namespace (the schemas do not say). */
const CLUSTER_SCOPED = ['Namespace', 'ClusterRole', 'ClusterRoleBinding'];
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

/** A kubernetes-models resource class: its schema's validate() throws ajv's errors. */
type Resource = (new (data: Obj) => { validate(): void }) & { apiVersion: string; kind: string };
const isResource = (v: unknown, doc: Obj): v is Resource =>
  typeof v === 'function' && 'apiVersion' in v && v.apiVersion === doc.apiVersion && 'kind' in v && v.kind === doc.kind;
type SchemaError = { at: string; message: string };
const pointer = (keys: (string | number)[]) => keys.map((k) => `/${String(k).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

function errorsOf(resource: Resource, doc: Obj): SchemaError[] {
  try {
    new resource(doc).validate();
    return [];
  } catch (e) {
    if (!isObj(e) || !Array.isArray(e.errors)) throw e;
    return e.errors.filter(isObj).map((x) => ({ at: String(x.instancePath), message: String(x.message) }));
  }
}

/** Every object key under `value`, as its path from the document's root. */
function keyPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyPaths(v, [...at, i]));
  if (!isObj(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [[...at, k], ...keyPaths(v, [...at, k])]);
}

/**
 * A document's schema errors: none when its kind's schema at its apiVersion accepts it. The
 * schemas ignore unknown fields, so each field is also put to the test: a key whose value the
 * schema does not check when it is made a Symbol (no type allows one) is an unknown field.
 */
async function schemaErrors(doc: Obj): Promise<SchemaError[]> {
  const [apiVersion, kind] = [String(doc.apiVersion), String(doc.kind)];
  // The package merges older releases' schemas too: a removed beta (apps/v1beta2) would pass.
  if (!/^([a-z0-9.-]+\/)?v\d+$/.test(apiVersion)) return [{ at: '/apiVersion', message: `${apiVersion} is not a stable API version` }];
  const specifier = `kubernetes-models/${apiVersion}`;
  const group: unknown = await import(specifier).catch(() => undefined);
  const resource = isObj(group) ? group[kind] : undefined;
  if (!isResource(resource, doc)) return [{ at: '', message: `no ${kind} at ${apiVersion} in Kubernetes 1.33` }];
  const unknown = keyPaths(doc).flatMap((keys) => {
    const probe = structuredClone(doc);
    const parent = keys.slice(0, -1).reduce<unknown>((o, k) => (Array.isArray(o) ? o[Number(k)] : isObj(o) ? o[k] : undefined), probe);
    if (!isObj(parent)) throw new Error(`no object at ${pointer(keys)}`);
    parent[String(keys.at(-1))] = Symbol('probe');
    return errorsOf(resource, probe).some((e) => e.at === pointer(keys)) ? [] : [{ at: pointer(keys), message: 'unknown field' }];
  });
  return [...errorsOf(resource, doc), ...unknown];
}

describe('deploy/*.yaml: Kubernetes API objects', () => {
  it('every document validates against its kind\'s schema at its apiVersion, unknown fields refused', async () => {
    expect(manifests).toEqual(['guard.yaml', 'pinset.yaml']);
    for (const o of objects) expect(await schemaErrors(o), `${String(o.kind)}/${String(at(o, 'metadata').name)}`).toEqual([]);
  });

  it('every document is named, in the holdfast namespace when its kind is namespaced', () => {
    for (const o of objects) {
      const [kind, meta] = [String(o.kind), at(o, 'metadata')];
      expect(String(meta.name)).toMatch(DNS_SUBDOMAIN);
      expect(meta.namespace, `${kind}/${String(meta.name)}`).toBe(CLUSTER_SCOPED.includes(kind) ? undefined : 'holdfast');
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

describe('the schema check refuses what the API server would', () => {
  const containerAt = '/spec/template/spec/containers/0';
  /** The guard DaemonSet with one edit. */
  const edited = (edit: (ds: Obj, container: Obj) => void) => {
    const ds = structuredClone(one('DaemonSet', 'holdfast-guard'));
    edit(ds, list(at(ds, 'spec', 'template', 'spec'), 'containers')[0]!);
    return schemaErrors(ds);
  };

  it('a misspelled field', async () => {
    const errors = await edited((_, c) => {
      const sc = at(c, 'securityContext');
      delete sc.readOnlyRootFilesystem;
      sc.readOnlyRootFilesytem = true;
    });
    expect(errors).toEqual([{ at: `${containerAt}/securityContext/readOnlyRootFilesytem`, message: 'unknown field' }]);
  });

  it('a value of the wrong type, and a required field left out', async () => {
    expect(await edited((_, c) => (at(c, 'securityContext').runAsUser = '0'))).toEqual([{ at: `${containerAt}/securityContext/runAsUser`, message: 'must be integer' }]);
    expect(await edited((_, c) => delete c.name)).toEqual([{ at: containerAt, message: 'must have required property name' }]);
  });

  it('a wrong apiVersion or kind', async () => {
    expect(await edited((ds) => (ds.apiVersion = 'v1'))).toEqual([{ at: '', message: 'no DaemonSet at v1 in Kubernetes 1.33' }]);
    expect(await edited((ds) => (ds.apiVersion = 'apps/v2'))).toEqual([{ at: '', message: 'no DaemonSet at apps/v2 in Kubernetes 1.33' }]);
    expect(await edited((ds) => (ds.apiVersion = 'apps/v1beta2'))).toEqual([{ at: '/apiVersion', message: 'apps/v1beta2 is not a stable API version' }]);
    expect(await edited((ds) => (ds.kind = 'Daemonset'))).toEqual([{ at: '', message: 'no Daemonset at apps/v1 in Kubernetes 1.33' }]);
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
