import { describe, expect, it } from 'vitest';
import { kubectlJson, workloadList, type KubeObject } from '../../lab/workloads.ts';

// oxlint-disable-next-line typescript/no-explicit-any -- parsed JSON, navigated by path in assertions
type Obj = KubeObject & { spec: Record<string, any>; status: Record<string, any>; metadata: Record<string, any> };
const byKind = (items: KubeObject[], kind: string): Obj[] => items.filter((i) => i.kind === kind) as Obj[];

describe('workloadList', () => {
  const list = workloadList({
    nodes: [
      { name: 'n1', addresses: ['127.0.0.1'], role: 'server' },
      { name: 'n2', addresses: ['127.0.0.2'] },
    ],
    deployments: [{ namespace: 'default', name: 'web', image: 'docker.io/library/web:2.0', replicas: 2, previousImages: ['docker.io/library/web:1.0'] }],
    cronJobs: [{ name: 'nightly', image: 'report:1.0' }],
    jobs: [{ name: 'nightly-29000000', image: 'report:1.0', cronJob: 'nightly' }],
    daemonSets: [{ namespace: 'kube-system', name: 'agent', image: 'agent:1' }],
    statefulSets: [{ name: 'db', image: 'db:1', initImages: ['busybox'] }],
    replicationControllers: [{ name: 'legacy', image: 'legacy:1', replicas: 0 }],
    pods: [
      { name: 'pending', image: 'nginx', node: null },
      { name: 'debugged', image: 'app:1', ephemeralImages: ['busybox:1.36'] },
    ],
    digests: { 'docker.io/library/web:2.0': 'sha256:' + 'a'.repeat(64) },
  });

  it('is a v1 List grouped by resource in kubectl get order, sorted by namespace and name', () => {
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' } });
    const kinds = list.items.map((i) => i.kind);
    const order = ['Pod', 'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController', 'Node'];
    expect([...new Set(kinds)]).toEqual(order);
    expect(kinds).toEqual([...kinds].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
    const uids = list.items.map((i) => i.metadata.uid);
    expect(new Set(uids).size).toBe(uids.length);
    for (const u of uids) expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(workloadList({ deployments: [{ name: 'x', image: 'x:1' }] })).toEqual(workloadList({ deployments: [{ name: 'x', image: 'x:1' }] }));
  });

  it('chains Deployment → ReplicaSets (revision annotations, old one scaled to 0) → running pods', () => {
    const [dep] = byKind(list.items, 'Deployment');
    expect(dep!.metadata.annotations).toEqual({ 'deployment.kubernetes.io/revision': '2' });
    const rss = byKind(list.items, 'ReplicaSet');
    expect(rss).toHaveLength(2);
    for (const rs of rss) {
      expect(rs.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'Deployment', name: 'web', uid: dep!.metadata.uid }]);
      expect(rs.metadata.name).toBe(`web-${rs.metadata.labels['pod-template-hash']}`);
    }
    const current = rss.find((r) => r.spec.replicas === 2)!;
    const old = rss.find((r) => r.spec.replicas === 0)!;
    expect(current.metadata.annotations['deployment.kubernetes.io/revision']).toBe('2');
    expect(old.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');
    expect(old.spec.template.spec.containers[0].image).toBe('docker.io/library/web:1.0');
    const pods = byKind(list.items, 'Pod').filter((p) => p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet');
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.metadata.ownerReferences[0]).toMatchObject({ kind: 'ReplicaSet', name: current.metadata.name, uid: current.metadata.uid });
      expect(p.spec.nodeName).toBe('n1');
      expect(p.status.phase).toBe('Running');
      expect(p.status.containerStatuses[0]).toMatchObject({ image: 'docker.io/library/web:2.0', imageID: `docker.io/library/web@sha256:${'a'.repeat(64)}`, state: { running: {} } });
    }
  });

  it('shapes the other controllers and bare pods as the API does', () => {
    const job = byKind(list.items, 'Job')[0]!;
    expect(job.metadata.ownerReferences[0]).toMatchObject({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly' });
    const cj = byKind(list.items, 'CronJob')[0]!;
    expect(job.metadata.ownerReferences[0].uid).toBe(cj.metadata.uid);
    expect(cj.spec.jobTemplate.spec.template.spec.containers[0].image).toBe('report:1.0');
    const ds = byKind(list.items, 'DaemonSet')[0]!;
    const dsPods = byKind(list.items, 'Pod').filter((p) => p.metadata.ownerReferences?.[0]?.uid === ds.metadata.uid);
    expect(dsPods.map((p) => p.spec.nodeName).sort()).toEqual(['n1', 'n2']);
    expect(byKind(list.items, 'Pod').find((p) => p.metadata.name === 'db-0')!.status.initContainerStatuses[0].state.terminated.reason).toBe('Completed');
    expect(byKind(list.items, 'ReplicationController')[0]!.spec.selector).toEqual({ app: 'legacy' });
    const pending = byKind(list.items, 'Pod').find((p) => p.metadata.name === 'pending')!;
    expect(pending.spec.nodeName).toBeUndefined();
    expect(pending.status.phase).toBe('Pending');
    expect(pending.metadata.ownerReferences).toBeUndefined();
    expect(pending.spec.containers[0]).toMatchObject({ image: 'nginx', imagePullPolicy: 'Always' });
    const debugged = byKind(list.items, 'Pod').find((p) => p.metadata.name === 'debugged')!;
    expect(debugged.spec.ephemeralContainers[0]).toMatchObject({ image: 'busybox:1.36', targetContainerName: 'debugged' });
    expect(debugged.status.ephemeralContainerStatuses[0].image).toBe('docker.io/library/busybox:1.36');
  });

  it('gives a pod template image volumes as the API does: beside a volume of another type, pullPolicy defaulted, mounted in the first container', () => {
    const withVolumes = workloadList({
      nodes: [{ name: 'n1' }],
      deployments: [{ name: 'app', image: 'app:1', imageVolumes: [{ name: 'models', reference: 'models:v3' }, { name: 'latest', reference: 'tools' }] }],
      pods: [{ name: 'bare', image: 'app:1', imageVolumes: [{ name: 'pinned', reference: `models@sha256:${'b'.repeat(64)}`, pullPolicy: 'Never' }] }],
    });
    const spec = byKind(withVolumes.items, 'Deployment')[0]!.spec.template.spec;
    expect(spec.volumes).toEqual([
      { emptyDir: {}, name: 'scratch' },
      { image: { pullPolicy: 'IfNotPresent', reference: 'models:v3' }, name: 'models' },
      { image: { pullPolicy: 'Always', reference: 'tools' }, name: 'latest' },
    ]);
    expect(spec.containers[0].volumeMounts).toEqual([
      { mountPath: '/scratch', name: 'scratch' },
      { mountPath: '/models', name: 'models' },
      { mountPath: '/latest', name: 'latest' },
    ]);
    const pods = byKind(withVolumes.items, 'Pod');
    expect(pods.find((p) => p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet')!.spec.volumes).toEqual(spec.volumes);
    expect(pods.find((p) => p.metadata.name === 'bare')!.spec.volumes[1]).toEqual({ image: { pullPolicy: 'Never', reference: `models@sha256:${'b'.repeat(64)}` }, name: 'pinned' });
    // without image volumes a pod spec has no volumes at all (as before)
    expect(byKind(list.items, 'Deployment')[0]!.spec.template.spec.volumes).toBeUndefined();
  });

  it('gives Nodes their InternalIP and Hostname addresses, servers their control-plane role', () => {
    const nodes = byKind(list.items, 'Node');
    expect(nodes.map((n) => n.metadata.name)).toEqual(['n1', 'n2']);
    expect(nodes[0]!.metadata.namespace).toBeUndefined();
    expect(nodes[0]!.status.addresses).toEqual([
      { address: '127.0.0.1', type: 'InternalIP' },
      { address: 'n1', type: 'Hostname' },
    ]);
    expect(nodes[0]!.metadata.labels['node-role.kubernetes.io/control-plane']).toBe('true');
    expect(nodes[1]!.metadata.labels['node-role.kubernetes.io/control-plane']).toBeUndefined();
  });

  it('prints as kubectl -o json does: sorted keys, 4-space indent', () => {
    const text = kubectlJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } });
    expect(text).toBe('{\n    "a": {\n        "c": null,\n        "d": [\n            {\n                "y": 2,\n                "z": 1\n            }\n        ]\n    },\n    "b": 1\n}\n');
  });
});
