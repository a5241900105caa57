// Which images a site needs, read from `kubectl get … --all-namespaces -o json` (shared/workloads).
// The fixtures are real objects recorded on real clusters (fixtures/kubectl/README.md says where
// from); objects written here are made up and say so.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { needsFromKubectl, normalizeNeededImage, type NeededImage } from '../../../src/shared/workloads';

const FIXTURES = path.join(import.meta.dirname, 'fixtures/kubectl');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
const object = (name: string) => fixture(`objects/${name}.json`);
/** What `kubectl get` of several types prints: one List of all their items. */
const kubectlList = (...items: unknown[]) => ({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items });
const itemsOf = (list: Record<string, unknown>) => list['items'] as unknown[];

const DIGEST = `sha256:${'ab'.repeat(32)}`;

describe('normalizeNeededImage (as CRI resolves a pod spec image)', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:alpine', 'docker.io/library/nginx:alpine'],
    ['kennethreitz/httpbin', 'docker.io/kennethreitz/httpbin:latest'],
    ['registry.k8s.io/kube-proxy:v1.35.1', 'registry.k8s.io/kube-proxy:v1.35.1'],
    ['registry.local:5000/shop/payments:2.3', 'registry.local:5000/shop/payments:2.3'],
    [`app:1@${DIGEST}`, `docker.io/library/app@${DIGEST}`],
    [`rancher/mirrored-pause:3.6@${DIGEST}`, `docker.io/rancher/mirrored-pause@${DIGEST}`],
  ])('%s → %s', (image, ref) => {
    expect(normalizeNeededImage(image)).toBe(ref);
  });

  it.each(['', '   ', 'Nginx:1', 'app:', 'a//b', `sha256:${'c'.repeat(64)}`, 'c'.repeat(64), `app:${'1'.repeat(2000)}`])('reads no reference from %j', (image) => {
    expect(normalizeNeededImage(image)).toBeNull();
  });
});

describe('needsFromKubectl: recorded Lists', () => {
  it('a Node and a Service (multi-kind List): the node and its addresses, no images, the Service ignored', () => {
    expect(needsFromKubectl(fixture('node-and-service.json'))).toEqual({
      images: [],
      nodes: [{ name: 'minikube', addresses: ['192.168.49.2', 'minikube'] }],
      unreadable: [],
    });
  });

  it("a static pod and a bare pod: needed on the node they are bound to, not by the Node's image list", () => {
    expect(needsFromKubectl(fixture('static-and-bare-pods.json'))).toEqual({
      images: [
        {
          ref: 'gcr.io/k8s-minikube/storage-provisioner:v5',
          written: ['gcr.io/k8s-minikube/storage-provisioner:v5'],
          workloads: [{ kind: 'Pod', namespace: 'kube-system', name: 'storage-provisioner', why: 'running' }],
          onNodes: ['minikube'],
        },
        {
          ref: 'registry.k8s.io/etcd:3.5.9-0',
          written: ['registry.k8s.io/etcd:3.5.9-0'],
          workloads: [{ kind: 'Pod', namespace: 'kube-system', name: 'etcd-minikube', why: 'running' }],
          onNodes: ['minikube'],
        },
      ],
      nodes: [],
      unreadable: [],
    });
  });
});

describe('needsFromKubectl: a cluster of recorded objects', () => {
  const cluster = kubectlList(
    object('deployment-rollout'),
    object('replicaset-superseded'),
    object('deployment-scaled-to-0'),
    object('statefulset-scaled-to-0'),
    object('daemonset-kube-proxy'),
    object('cronjob'),
    object('job-complete'),
    object('pod-pending'),
    object('pod-ephemeral-container'),
    object('pod-init-container'),
    ...itemsOf(fixture('node-and-service.json')),
    object('node-legacy-host-ip'),
  );

  it('names every image a workload needs, with who and why, as CRI resolves it', () => {
    const expected: NeededImage[] = [
      {
        ref: 'docker.io/kennethreitz/httpbin:latest',
        written: ['kennethreitz/httpbin'],
        workloads: [
          { kind: 'Deployment', namespace: 'test1', name: 'httpbin-deployment', why: 'running' },
          { kind: 'ReplicaSet', namespace: 'test1', name: 'httpbin-deployment-79f6dfbb9', why: 'rollback (revision 1)' },
        ],
      },
      {
        ref: 'docker.io/library/busybox:latest',
        written: ['busybox', 'busybox:latest'],
        workloads: [
          { kind: 'CronJob', namespace: 'default', name: 'hello', why: 'CronJob between runs' },
          { kind: 'Job', namespace: 'default', name: 'hello-1584493380', why: 'completed Job' },
          { kind: 'Pod', namespace: 'default', name: 'hello-1584492840-kqf62', why: 'pending' },
          { kind: 'Pod', namespace: 'default', name: 'pod-ephemeral-base', why: 'ephemeral container' },
          { kind: 'Pod', namespace: 'default', name: 'pod-native-sidecar', why: 'init container' },
        ],
      },
      {
        ref: 'docker.io/library/nginx:alpine',
        written: ['nginx:alpine'],
        workloads: [
          { kind: 'Pod', namespace: 'default', name: 'pod-ephemeral-base', why: 'running' },
          { kind: 'Pod', namespace: 'default', name: 'pod-native-sidecar', why: 'running' },
        ],
        onNodes: ['minikube'],
      },
      {
        ref: 'k8s.gcr.io/nginx-slim:0.8',
        written: ['k8s.gcr.io/nginx-slim:0.8'],
        workloads: [{ kind: 'StatefulSet', namespace: 'test1', name: 'web', why: 'scaled to 0' }],
      },
      {
        ref: 'registry.k8s.io/kube-proxy:v1.35.1',
        written: ['registry.k8s.io/kube-proxy:v1.35.1'],
        workloads: [{ kind: 'DaemonSet', namespace: 'kube-system', name: 'kube-proxy', why: 'running' }],
      },
      {
        ref: 'registry.local:5000/shop/payments:2.3',
        written: ['registry.local:5000/shop/payments:2.3'],
        workloads: [{ kind: 'Deployment', namespace: 'shop', name: 'payments', why: 'scaled to 0' }],
      },
    ];
    expect(needsFromKubectl(cluster)).toEqual({
      images: expected,
      nodes: [
        { name: 'minikube', addresses: ['192.168.49.2', 'minikube'] },
        { name: 'node2', addresses: ['192.168.3.148'] },
      ],
      unreadable: [],
    });
  });

  it('the order of the items does not matter', () => {
    const reversed = kubectlList(...[...cluster.items].reverse());
    expect(needsFromKubectl(reversed)).toEqual(needsFromKubectl(cluster));
  });

  it('a suspended CronJob', () => {
    expect(needsFromKubectl(kubectlList(object('cronjob-suspended'))).images).toEqual([
      {
        ref: 'docker.io/library/busybox:1.36',
        written: ['busybox:1.36'],
        workloads: [{ kind: 'CronJob', namespace: 'default', name: 'hello', why: 'suspended CronJob' }],
      },
    ]);
  });

  it('a ref needed by any unrestricted workload is needed on every node (a pod not yet scheduled may land anywhere)', () => {
    const needs = needsFromKubectl(kubectlList(object('pod-ephemeral-container'), object('pod-pending-unscheduled')));
    const nginx = needs.images.find((i) => i.ref === 'docker.io/library/nginx:alpine');
    expect(nginx).toEqual({
      ref: 'docker.io/library/nginx:alpine',
      written: ['nginx:alpine'],
      workloads: [
        { kind: 'Pod', namespace: 'default', name: 'pod-ephemeral-base', why: 'running' },
        { kind: 'Pod', namespace: 'default', name: 'pod-pending-nodeselector', why: 'pending' },
      ],
    });
    // the ephemeral container's image stays bound to the pod's node
    expect(needs.images.find((i) => i.ref === 'docker.io/library/busybox:latest')?.onNodes).toEqual(['minikube']);
  });

  it("the current ReplicaSet of a Deployment scaled to 0 is scaled to 0, not kept for rollback; without the Deployment listed, a scaled-down ReplicaSet it owns counts as rollback", () => {
    // The recorded Deployment and its revision-1 ReplicaSet, with the Deployment put back at
    // revision 1 and scaled to 0 (made up from the recorded objects).
    const deployment = object('deployment-rollout') as { metadata: { annotations: Record<string, string> }; spec: { replicas: number } };
    deployment.metadata.annotations['deployment.kubernetes.io/revision'] = '1';
    deployment.spec.replicas = 0;
    const rs = object('replicaset-superseded');
    expect(needsFromKubectl(kubectlList(deployment, rs)).images[0]!.workloads).toEqual([
      { kind: 'Deployment', namespace: 'test1', name: 'httpbin-deployment', why: 'scaled to 0' },
      { kind: 'ReplicaSet', namespace: 'test1', name: 'httpbin-deployment-79f6dfbb9', why: 'scaled to 0' },
    ]);
    expect(needsFromKubectl(kubectlList(rs)).images[0]!.workloads).toEqual([{ kind: 'ReplicaSet', namespace: 'test1', name: 'httpbin-deployment-79f6dfbb9', why: 'rollback (revision 1)' }]);
  });
});

describe('needsFromKubectl: rules on made-up objects', () => {
  const template = (image: string, spec: Record<string, unknown> = {}) => ({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image }], ...spec } });

  it('a ReplicationController, and init containers of a template keep its reason', () => {
    const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'legacy', namespace: 'old' }, spec: { replicas: 0, template: template('legacy:1', { initContainers: [{ name: 'i', image: 'migrate:1' }] }) } };
    expect(needsFromKubectl(kubectlList(rc)).images).toEqual([
      { ref: 'docker.io/library/legacy:1', written: ['legacy:1'], workloads: [{ kind: 'ReplicationController', namespace: 'old', name: 'legacy', why: 'scaled to 0' }] },
      { ref: 'docker.io/library/migrate:1', written: ['migrate:1'], workloads: [{ kind: 'ReplicationController', namespace: 'old', name: 'legacy', why: 'scaled to 0, init container' }] },
    ]);
  });

  it('a template bound by kubernetes.io/hostname is needed on that node only: the Node whose label it is, else the name itself', () => {
    const node = { kind: 'Node', metadata: { name: 'agent-1', labels: { 'kubernetes.io/hostname': 'agent-1.site.lan' } }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.11' }] } };
    const onAgent = { kind: 'Deployment', metadata: { name: 'cam', namespace: 'edge' }, spec: { template: template('cam:2', { nodeSelector: { 'kubernetes.io/hostname': 'agent-1.site.lan' } }) } };
    const onGone = { kind: 'DaemonSet', metadata: { name: 'probe', namespace: 'edge' }, spec: { template: template('probe:1', { nodeSelector: { 'kubernetes.io/hostname': 'agent-9' } }) } };
    const needs = needsFromKubectl(kubectlList(node, onAgent, onGone));
    expect(needs.images.map((i) => [i.ref, i.onNodes])).toEqual([
      ['docker.io/library/cam:2', ['agent-1']],
      ['docker.io/library/probe:1', ['agent-9']],
    ]);
    expect(needs.nodes).toEqual([{ name: 'agent-1', addresses: ['10.0.0.11'] }]);
  });

  it('a pod some controller made is not bound to its node (the controller may make it again elsewhere)', () => {
    const pod = object('pod-ephemeral-container') as { metadata: Record<string, unknown> };
    pod.metadata['ownerReferences'] = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4f', uid: 'u', controller: true }];
    const needs = needsFromKubectl(kubectlList(pod));
    expect(needs.images.map((i) => i.onNodes)).toEqual([undefined, undefined]);
  });

  it('the same workload is listed once per ref; unreadable images are listed with who wrote them', () => {
    const pod = {
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'n' },
      spec: { containers: [{ image: 'app:1' }, { image: 'docker.io/library/app:1' }, { image: 'Bad:Image' }], initContainers: [{ image: 'app:1' }] },
      status: { phase: 'Failed' },
    };
    expect(needsFromKubectl(kubectlList(pod))).toEqual({
      images: [{ ref: 'docker.io/library/app:1', written: ['app:1', 'docker.io/library/app:1'], workloads: [{ kind: 'Pod', namespace: 'n', name: 'p', why: 'failed' }] }],
      nodes: [],
      unreadable: [{ image: 'Bad:Image', workload: { kind: 'Pod', namespace: 'n', name: 'p', why: 'failed' } }],
    });
  });

  it('a Job says whether it runs, waits, finished or is suspended', () => {
    const job = (name: string, extra: Record<string, unknown>) => ({ kind: 'Job', metadata: { name, namespace: 'j' }, spec: { template: template(`${name}:1`), ...(extra['spec'] as object) }, status: extra['status'] });
    const needs = needsFromKubectl(
      kubectlList(
        job('active', { status: { active: 1 } }),
        job('failed', { status: { conditions: [{ type: 'Failed', status: 'True' }] } }),
        job('suspended', { spec: { suspend: true } }),
        job('waiting', {}),
      ),
    );
    expect(needs.images.map((i) => i.workloads[0]!.why)).toEqual(['running', 'failed Job', 'suspended Job', 'pending']);
  });
});

describe('needsFromKubectl: image volumes (KEP-4639)', () => {
  // Made up, in the shape of the Kubernetes docs' example ("Use an Image Volume With a Pod"): a
  // volume `image: {reference, pullPolicy}` beside a volume of another type, in the pod template
  // of each kind (or the pod itself).
  const volumes = (reference: string) => [
    { name: 'scratch', emptyDir: {} },
    { name: 'models', image: { reference, pullPolicy: 'IfNotPresent' } },
    { name: 'config', configMap: { name: 'app-config' } },
  ];
  const podSpec = (reference: string) => ({
    containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'models', mountPath: '/models' }, { name: 'scratch', mountPath: '/tmp' }] }],
    volumes: volumes(reference),
  });
  const template = (reference: string) => ({ metadata: { labels: { app: 'app' } }, spec: podSpec(reference) });
  const meta = { name: 'app', namespace: 'default' };
  const KINDS: [kind: string, object: (reference: string) => Record<string, unknown>, containerWhy: string, why: string, onNodes?: string[]][] = [
    ['Deployment', (r) => ({ kind: 'Deployment', metadata: meta, spec: { replicas: 2, template: template(r) } }), 'running', 'image volume models'],
    ['Deployment', (r) => ({ kind: 'Deployment', metadata: meta, spec: { replicas: 0, template: template(r) } }), 'scaled to 0', 'scaled to 0, image volume models'],
    ['StatefulSet', (r) => ({ kind: 'StatefulSet', metadata: meta, spec: { replicas: 1, template: template(r) } }), 'running', 'image volume models'],
    ['DaemonSet', (r) => ({ kind: 'DaemonSet', metadata: meta, spec: { template: template(r) } }), 'running', 'image volume models'],
    ['Job', (r) => ({ kind: 'Job', metadata: meta, spec: { template: template(r) }, status: { conditions: [{ type: 'Complete', status: 'True' }] } }), 'completed Job', 'completed Job, image volume models'],
    ['CronJob', (r) => ({ kind: 'CronJob', metadata: meta, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: template(r) } } } }), 'CronJob between runs', 'CronJob between runs, image volume models'],
    ['ReplicaSet', (r) => ({ kind: 'ReplicaSet', metadata: { ...meta, annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: [{ kind: 'Deployment', name: 'gone' }] }, spec: { replicas: 0, template: template(r) } }), 'rollback (revision 1)', 'rollback (revision 1), image volume models'],
    ['ReplicationController', (r) => ({ kind: 'ReplicationController', metadata: meta, spec: { replicas: 1, template: template(r) } }), 'running', 'image volume models'],
    ['Pod', (r) => ({ kind: 'Pod', metadata: meta, spec: { ...podSpec(r), nodeName: 'edge-1' }, status: { phase: 'Pending' } }), 'pending', 'image volume models', ['edge-1']],
  ];
  const DIGEST_REF = `registry.local:5000/ml/models:v3@${DIGEST}`;

  it.each(KINDS)('%s: the volume\'s image is needed, named with the volume; a volume of another type brings nothing', (kind, make, containerWhy, why, onNodes) => {
    const needs = needsFromKubectl(kubectlList(make('models:v3')));
    expect(needs.images).toEqual([
      { ref: 'docker.io/library/app:1', written: ['app:1'], workloads: [{ kind, namespace: 'default', name: 'app', why: containerWhy }], ...(onNodes ? { onNodes } : {}) },
      { ref: 'docker.io/library/models:v3', written: ['models:v3'], workloads: [{ kind, namespace: 'default', name: 'app', why }], ...(onNodes ? { onNodes } : {}) },
    ]);
    expect(needs.unreadable).toEqual([]);
  });

  it.each(KINDS)('%s: a digest reference is needed by digest, as CRI resolves it', (kind, make, _containerWhy, why) => {
    const needs = needsFromKubectl(kubectlList(make(DIGEST_REF)));
    expect(needs.images.find((i) => i.ref !== 'docker.io/library/app:1')).toMatchObject({
      ref: `registry.local:5000/ml/models@${DIGEST}`,
      written: [DIGEST_REF],
      workloads: [{ kind, namespace: 'default', name: 'app', why }],
    });
  });

  it('a Pod says the volume, not its phase (as for init and ephemeral containers)', () => {
    const pod = { kind: 'Pod', metadata: meta, spec: podSpec('models:v3'), status: { phase: 'Running' } };
    expect(needsFromKubectl(kubectlList(pod)).images.map((i) => i.workloads[0]!.why)).toEqual(['running', 'image volume models']);
  });

  it('an image both a container and an image volume use is listed once per workload, as the container', () => {
    const needs = needsFromKubectl(kubectlList({ kind: 'Deployment', metadata: meta, spec: { template: template('app:1') } }));
    expect(needs.images).toEqual([{ ref: 'docker.io/library/app:1', written: ['app:1'], workloads: [{ kind: 'Deployment', namespace: 'default', name: 'app', why: 'running' }] }]);
  });

  it('a volume with no reference (a controller fills it in later), an unreadable one, odd shapes and names', () => {
    const spec = {
      containers: [{ name: 'app', image: 'app:1' }],
      volumes: [
        { name: 'empty', image: {} },
        { name: 'blank', image: { reference: '' } },
        { name: 'typed', image: { reference: 42 } },
        { name: 'string', image: 'models:v3' },
        { name: 'bad', image: { reference: 'Bad:Ref' } },
        { name: 'Not A Label\u001b[2J', image: { reference: 'odd:1' } },
        { image: { reference: 'nameless:1' } },
        null,
        'models:v3',
      ],
    };
    const needs = needsFromKubectl(kubectlList({ kind: 'Deployment', metadata: meta, spec: { template: { spec } } }, { kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], volumes: { image: { reference: 'x:1' } } } }));
    expect(needs.images.map((i) => [i.ref, i.workloads.map((w) => w.why)])).toEqual([
      ['docker.io/library/app:1', ['running']],
      ['docker.io/library/nameless:1', ['image volume']],
      ['docker.io/library/odd:1', ['image volume']],
    ]);
    expect(needs.unreadable).toEqual([{ image: 'Bad:Ref', workload: { kind: 'Deployment', namespace: 'default', name: 'app', why: 'image volume bad' } }]);
  });
});

describe('needsFromKubectl: hostile input', () => {
  it.each([null, undefined, 42, 'List', [], {}, { kind: 'PodList', items: [] }, { kind: 'List' }, { kind: 'List', items: {} }, { kind: 'List', items: 'x' }])('refuses %j, which is not a kubectl List', (doc) => {
    expect(() => needsFromKubectl(doc)).toThrow(/List with an items array/);
  });

  it('wrong types, prototype keys and huge arrays of junk: no throw, only what can be read', () => {
    const junk: unknown[] = [
      null,
      7,
      'Pod',
      [],
      [{ kind: 'Pod' }],
      { kind: 42 },
      { kind: 'Pod' },
      { kind: 'Pod', metadata: [] },
      { kind: 'Pod', metadata: { name: 42 } },
      { kind: 'Pod', metadata: { name: 'x'.repeat(10_000) }, spec: { containers: [{ image: 'big:1' }] } },
      { kind: 'Pod', metadata: { name: 'p1' }, spec: { containers: { image: 'nginx' } } },
      { kind: 'Pod', metadata: { name: 'p2' }, spec: { containers: [null, 3, 'nginx', [], { image: 42 }, { image: { toString: 'x' } }, { image: '' }, { image: '  ' }] } },
      { kind: 'Pod', metadata: { name: 'p3', ownerReferences: 'Node' }, spec: { nodeName: ['n'], containers: [{ image: 'ok:1' }], initContainers: 'x' }, status: { phase: { toString: null } } },
      { kind: 'Pod', metadata: { name: 'p4', ownerReferences: [null, 5] }, spec: { nodeName: 'n'.repeat(1000), containers: [{ image: 'ok:1' }] }, status: 'Running' },
      { kind: 'Pod', metadata: { name: 'p5' }, spec: { containers: [{ image: `long:${'1'.repeat(100_000)}` }] } },
      { kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: '0', template: [] } },
      { kind: 'Deployment', metadata: { name: 'd2', annotations: { 'deployment.kubernetes.io/revision': 'x'.repeat(1_000_000) } }, spec: { template: { spec: { containers: [{ image: 'd2:1' }] } } } },
      { kind: 'ReplicaSet', metadata: { name: 'r', ownerReferences: [{ kind: 'Deployment', name: { n: 1 } }] }, spec: { replicas: 0, template: { spec: { containers: [{ image: 'rs:1' }] } } } },
      { kind: 'CronJob', metadata: { name: 'c' }, spec: { suspend: 'true', jobTemplate: { spec: null } } },
      { kind: 'CronJob', metadata: { name: 'c2' }, spec: { suspend: 'true', jobTemplate: { spec: { template: { spec: { containers: [{ image: 'cron:1' }] } } } } } },
      JSON.parse('{"kind":"Pod","__proto__":{"polluted":true},"metadata":{"name":"proto","__proto__":{"namespace":"evil"}},"spec":{"containers":[{"image":"proto:1"}]}}'),
      { kind: 'Pod', metadata: { name: 'constructor' }, spec: { constructor: 'x', containers: [{ image: 'ctor:1', constructor: 1 }] } },
      { kind: 'Node' },
      { kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [null, { address: 5 }, { address: '10.0.0.1' }, { address: '10.0.0.1' }, { address: 'a'.repeat(5000) }] } },
      { kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [{ address: '10.9.9.9' }] } },
      { kind: 'Node', metadata: { name: 'n2', labels: { 'kubernetes.io/hostname': 7 } }, status: { addresses: {} } },
      { kind: 'List', items: [{ kind: 'Pod', metadata: { name: 'nested' }, spec: { containers: [{ image: 'nested:1' }] } }] },
    ];
    const many = Array.from({ length: 50_000 }, (_, i) => (i % 5 === 0 ? { kind: 'Pod', metadata: { name: `j${i % 7}` }, spec: { containers: [{ image: 'Bad Image' }, { image: 'junk:1' }] } } : [i, { kind: 'Pod', metadata: {} }][i % 2]));
    const doc = { kind: 'List', items: [...junk, ...many] };

    const t = performance.now();
    const needs = needsFromKubectl(doc);
    expect(performance.now() - t).toBeLessThan(5_000);

    expect(needs.images.map((i) => i.ref)).toEqual([
      'docker.io/library/cron:1',
      'docker.io/library/ctor:1',
      'docker.io/library/d2:1',
      'docker.io/library/junk:1',
      'docker.io/library/ok:1',
      'docker.io/library/proto:1',
      'docker.io/library/rs:1',
    ]);
    const byRef = new Map(needs.images.map((i) => [i.ref, i]));
    expect(byRef.get('docker.io/library/cron:1')!.workloads).toEqual([{ kind: 'CronJob', namespace: '', name: 'c2', why: 'CronJob between runs' }]);
    expect(byRef.get('docker.io/library/d2:1')!.workloads).toEqual([{ kind: 'Deployment', namespace: '', name: 'd2', why: 'running' }]);
    expect(byRef.get('docker.io/library/rs:1')!.workloads).toEqual([{ kind: 'ReplicaSet', namespace: '', name: 'r', why: 'scaled to 0' }]);
    expect(byRef.get('docker.io/library/proto:1')!.workloads).toEqual([{ kind: 'Pod', namespace: '', name: 'proto', why: 'phase unknown' }]);
    // p3: a nodeName that is not a string binds nothing; p4: junk owners count as none, and a
    // 1000-character nodeName is no node name
    expect(byRef.get('docker.io/library/ok:1')).toEqual({
      ref: 'docker.io/library/ok:1',
      written: ['ok:1'],
      workloads: [
        { kind: 'Pod', namespace: '', name: 'p3', why: 'phase unknown' },
        { kind: 'Pod', namespace: '', name: 'p4', why: 'phase unknown' },
      ],
    });
    expect(byRef.get('docker.io/library/junk:1')!.workloads.map((w) => w.name)).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5', 'j6']);
    expect(needs.nodes).toEqual([
      { name: 'n1', addresses: ['10.0.0.1'] },
      { name: 'n2', addresses: [] },
    ]);
    expect(needs.unreadable.map((u) => [u.workload.name, u.image.length <= 257 ? u.image : `${u.image.length}`])).toEqual([
      ['j0', 'Bad Image'],
      ['j1', 'Bad Image'],
      ['j2', 'Bad Image'],
      ['j3', 'Bad Image'],
      ['j4', 'Bad Image'],
      ['j5', 'Bad Image'],
      ['j6', 'Bad Image'],
      ['p5', `long:${'1'.repeat(251)}…`],
    ]);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
