// What a lab server node's `k3s kubectl get pods,deployments,replicasets,statefulsets,daemonsets,
// jobs,cronjobs,replicationcontrollers,nodes --all-namespaces -o json` answers: a v1 List built
// from a small description, shaped as the API server returns these objects (field names, owner
// references, the controllers' labels and annotations), so Holdfast reads the lab as it reads a
// real cluster. Deterministic (uids, hashes and times derive from names) so fixtures can be compared.
import { createHash } from 'node:crypto';
import { normalizeDockerRef } from './importPlan.ts';

/** Where a workload's pods run: a node name, or null for pods the scheduler has not placed (Pending). */
export type Placement = string | null;

export interface PodTemplateDesc {
  /** Default 'default'. */
  namespace?: string;
  name: string;
  /** One container per image, as written in the pod spec (`nginx` stays `nginx`). */
  image: string | string[];
  initImages?: string[];
  /**
   * Image volumes (KEP-4639): `spec.volumes[].image`, each mounted into the first container at
   * `/<name>`. `pullPolicy` is defaulted as the API server does (Always for :latest or no tag,
   * else IfNotPresent). An emptyDir volume `scratch` is listed first, so that a volume of another
   * type sits beside them as in a real pod spec.
   */
  imageVolumes?: { name: string; reference: string; pullPolicy?: 'Always' | 'IfNotPresent' | 'Never' }[];
}

export interface NodeDesc {
  name: string;
  /** InternalIP addresses (default ['127.0.0.1']); a Hostname address (the name) follows. */
  addresses?: string[];
  /** 'server' adds the control-plane labels (default 'agent'). */
  role?: 'server' | 'agent';
  /** Default 'v1.33.7+k3s1'. */
  kubeletVersion?: string;
  /** Default 'containerd://2.1.5-k3s1' (illustrative). */
  containerRuntimeVersion?: string;
  /** status.images, as kubelet reports them (only when given). */
  images?: { names: string[]; sizeBytes: number }[];
}

export interface DeploymentDesc extends PodTemplateDesc {
  /** Default 1; 0 = scaled to zero (a ReplicaSet, no pods). */
  replicas?: number;
  /** Default: the first node (null if there is none). */
  node?: Placement;
  /** Images of earlier revisions, oldest first: one ReplicaSet each, scaled to 0, kept for rollback. */
  previousImages?: string[];
}

export interface ReplicaSetDesc extends PodTemplateDesc {
  replicas?: number;
  node?: Placement;
  /** Owning Deployment's name (same namespace). */
  deployment?: string;
  /** deployment.kubernetes.io/revision (default 1; only with `deployment`). */
  revision?: number;
}

export interface StatefulSetDesc extends PodTemplateDesc {
  replicas?: number;
  node?: Placement;
}

export interface DaemonSetDesc extends PodTemplateDesc {
  /** Nodes it runs a pod on (default: every node). */
  nodes?: string[];
}

export interface JobDesc extends PodTemplateDesc {
  /** Owning CronJob's name (same namespace). */
  cronJob?: string;
  /** Its one pod's phase (default 'Succeeded': a finished run whose pod is kept). */
  phase?: 'Running' | 'Succeeded' | 'Failed';
  node?: Placement;
}

/** A CronJob between runs: no Job, no pod. */
export interface CronJobDesc extends PodTemplateDesc {
  /** Default '0 2 * * *'. */
  schedule?: string;
  suspend?: boolean;
}

export interface ReplicationControllerDesc extends PodTemplateDesc {
  replicas?: number;
  node?: Placement;
}

/** A pod of its own (or owned by something described elsewhere: `owner`). */
export interface PodDesc extends PodTemplateDesc {
  node?: Placement;
  /** Default 'Running' when placed, 'Pending' when not. */
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** Ephemeral (debug) containers added with `kubectl debug`, running. */
  ephemeralImages?: string[];
  owner?: { kind: string; name: string; apiVersion?: string };
}

export interface WorkloadDescription {
  nodes?: NodeDesc[];
  deployments?: DeploymentDesc[];
  replicaSets?: ReplicaSetDesc[];
  statefulSets?: StatefulSetDesc[];
  daemonSets?: DaemonSetDesc[];
  jobs?: JobDesc[];
  cronJobs?: CronJobDesc[];
  replicationControllers?: ReplicationControllerDesc[];
  pods?: PodDesc[];
  /**
   * Image reference (as normalised, e.g. docker.io/library/app:1.0) → its digest ('sha256:…'):
   * a started container's status.imageID is then `<repository>@<digest>`, as containerd's CRI
   * reports it; otherwise imageID is ''.
   */
  digests?: Record<string, string>;
  /** creationTimestamp of every object (default 2026-01-05T08:00:00Z). */
  createdAt?: string;
}

export type KubeObject = Record<string, unknown> & { apiVersion: string; kind: string; metadata: Record<string, unknown> };

export interface KubeList {
  apiVersion: 'v1';
  kind: 'List';
  items: KubeObject[];
  metadata: { resourceVersion: '' };
}

// -----------------------------------------------------------------------------------------------

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** An RFC 4122 v4-shaped uid that depends only on `key`. */
function uidOf(key: string): string {
  const h = sha(key);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16]!, 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// Kubernetes' rand.SafeEncodeString alphabet (no vowels, no confusable digits): generated names
// and pod-template-hash use it.
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
function safeSuffix(key: string, len: number): string {
  const h = sha(key);
  let out = '';
  for (let i = 0; i < len; i++) out += SAFE[parseInt(h.slice(i * 2, i * 2 + 2), 16) % SAFE.length];
  return out;
}

const imagesOf = (d: PodTemplateDesc): string[] => (Array.isArray(d.image) ? d.image : [d.image]);

function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const base = at >= 0 ? ref.slice(0, at) : ref;
  const colon = base.lastIndexOf(':');
  return colon > base.lastIndexOf('/') ? base.slice(0, colon) : base;
}

function pullPolicy(image: string): string {
  // The API server's default: Always for :latest or no tag, else IfNotPresent.
  if (image.includes('@')) return 'IfNotPresent';
  const n = normalizeDockerRef(image);
  return n.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

function container(name: string, image: string): Record<string, unknown> {
  return {
    image,
    imagePullPolicy: pullPolicy(image),
    name,
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

/** Container names: the workload's own name, then `<name>-2`, … (init: `init`, `init-2`, …). */
function podSpec(d: PodTemplateDesc, restartPolicy: 'Always' | 'OnFailure' | 'Never'): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    containers: imagesOf(d).map((img, i) => container(i === 0 ? d.name : `${d.name}-${i + 1}`, img)),
    dnsPolicy: 'ClusterFirst',
    restartPolicy,
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  };
  if (d.initImages?.length) spec.initContainers = d.initImages.map((img, i) => container(i === 0 ? 'init' : `init-${i + 1}`, img));
  if (d.imageVolumes?.length) {
    const volumes = d.imageVolumes.map((v) => ({ image: { pullPolicy: v.pullPolicy ?? pullPolicy(v.reference), reference: v.reference }, name: v.name }));
    spec.volumes = [{ emptyDir: {}, name: 'scratch' }, ...volumes];
    const first = (spec.containers as Record<string, unknown>[])[0]!;
    first.volumeMounts = [{ mountPath: '/scratch', name: 'scratch' }, ...d.imageVolumes.map((v) => ({ mountPath: `/${v.name}`, name: v.name }))];
  }
  return spec;
}

function ownerRef(apiVersion: string, kind: string, name: string, uid: string): Record<string, unknown> {
  return { apiVersion, blockOwnerDeletion: true, controller: true, kind, name, uid };
}

interface Ctx {
  createdAt: string;
  digests: Record<string, string>;
  rv: number;
  firstNode: string | null;
  nodeIPs: Map<string, string>;
}

function meta(ctx: Ctx, kind: string, namespace: string | undefined, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    creationTimestamp: ctx.createdAt,
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    resourceVersion: String(++ctx.rv),
    uid: uidOf(`${kind}/${namespace ?? ''}/${name}`),
    ...extra,
  };
}

const nsOf = (d: PodTemplateDesc): string => d.namespace ?? 'default';

function podIP(key: string): string {
  const h = sha(key);
  return `10.42.0.${(parseInt(h.slice(0, 2), 16) % 250) + 2}`;
}

interface PodOpts {
  name: string;
  generateName?: string;
  labels: Record<string, string>;
  owner?: Record<string, unknown>;
  node: Placement;
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  restartPolicy: 'Always' | 'OnFailure' | 'Never';
  ephemeralImages?: string[];
}

function pod(ctx: Ctx, d: PodTemplateDesc, o: PodOpts): KubeObject {
  const namespace = nsOf(d);
  const key = `Pod/${namespace}/${o.name}`;
  const spec = podSpec(d, o.restartPolicy);
  Object.assign(spec, {
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
    priority: 0,
    serviceAccount: 'default',
    serviceAccountName: 'default',
    tolerations: [
      { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
      { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
    ],
  });
  if (o.node !== null) spec.nodeName = o.node;
  const t = ctx.createdAt;
  const started = o.node !== null && o.phase !== 'Pending';
  const cid = (c: string): string => `containerd://${sha(`${key}/${c}`)}`;
  const imageID = (img: string): string => {
    const n = normalizeDockerRef(img);
    const dg = ctx.digests[n] ?? ctx.digests[img];
    return dg ? `${repositoryOf(n)}@${dg}` : '';
  };
  const cstatus = (name: string, img: string, state: 'running' | 'completed' | 'failed'): Record<string, unknown> => ({
    containerID: cid(name),
    image: normalizeDockerRef(img),
    imageID: imageID(img),
    lastState: {},
    name,
    ready: state === 'running',
    restartCount: 0,
    started: state === 'running',
    state:
      state === 'running'
        ? { running: { startedAt: t } }
        : { terminated: { containerID: cid(name), exitCode: state === 'completed' ? 0 : 1, finishedAt: t, reason: state === 'completed' ? 'Completed' : 'Error', startedAt: t } },
  });
  const status: Record<string, unknown> = { phase: o.phase, qosClass: 'BestEffort' };
  if (!started) {
    status.conditions = [
      o.node === null
        ? { lastProbeTime: null, lastTransitionTime: t, message: `0/${ctx.nodeIPs.size} nodes are available: ${ctx.nodeIPs.size} node(s) didn't match Pod's node affinity/selector. preemption: 0/${ctx.nodeIPs.size} nodes are available: ${ctx.nodeIPs.size} Preemption is not helpful for scheduling.`, reason: 'Unschedulable', status: 'False', type: 'PodScheduled' }
        : { lastProbeTime: null, lastTransitionTime: t, status: 'True', type: 'PodScheduled' },
    ];
  } else {
    const running = o.phase === 'Running';
    const cond = (type: string, ok: boolean): Record<string, unknown> => ({ lastProbeTime: null, lastTransitionTime: t, status: ok ? 'True' : 'False', type });
    status.conditions = [cond('PodReadyToStartContainers', running), cond('Initialized', true), cond('Ready', running), cond('ContainersReady', running), cond('PodScheduled', true)];
    const main = o.phase === 'Running' ? 'running' : o.phase === 'Succeeded' ? 'completed' : 'failed';
    const containers = spec.containers as { name: string; image: string }[];
    status.containerStatuses = containers.map((c) => cstatus(c.name, c.image, main));
    const inits = (spec.initContainers as { name: string; image: string }[] | undefined) ?? [];
    if (inits.length) status.initContainerStatuses = inits.map((c) => cstatus(c.name, c.image, 'completed'));
    const hostIP = ctx.nodeIPs.get(o.node!) ?? '127.0.0.1';
    Object.assign(status, { hostIP, hostIPs: [{ ip: hostIP }], startTime: t });
    if (running) Object.assign(status, { podIP: podIP(key), podIPs: [{ ip: podIP(key) }] });
  }
  if (o.ephemeralImages?.length) {
    const names = o.ephemeralImages.map((_, i) => `debugger-${safeSuffix(`${key}/eph/${i}`, 5)}`);
    const target = (spec.containers as { name: string }[])[0]!.name;
    spec.ephemeralContainers = o.ephemeralImages.map((img, i) => ({ ...container(names[i]!, img), stdin: true, targetContainerName: target, tty: true }));
    if (started) status.ephemeralContainerStatuses = o.ephemeralImages.map((img, i) => cstatus(names[i]!, img, 'running'));
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(ctx, 'Pod', namespace, o.name, {
      ...(o.generateName ? { generateName: o.generateName } : {}),
      labels: o.labels,
      ...(o.owner ? { ownerReferences: [o.owner] } : {}),
    }),
    spec,
    status,
  };
}

function template(d: PodTemplateDesc, labels: Record<string, string>, restartPolicy: 'Always' | 'OnFailure' | 'Never'): Record<string, unknown> {
  return { metadata: { labels }, spec: podSpec(d, restartPolicy) };
}

const placement = (ctx: Ctx, node: Placement | undefined): Placement => (node === undefined ? ctx.firstNode : node);

/** A ReplicaSet (owned by a Deployment or not) and its pods. */
function replicaSet(
  ctx: Ctx,
  d: PodTemplateDesc,
  o: { name: string; replicas: number; node: Placement; owner?: { name: string; revision: number; deploymentReplicas: number }; hash?: string },
): KubeObject[] {
  const namespace = nsOf(d);
  const labels: Record<string, string> = { app: o.owner?.name ?? d.name, ...(o.hash ? { 'pod-template-hash': o.hash } : {}) };
  const annotations = o.owner
    ? {
        'deployment.kubernetes.io/desired-replicas': String(o.owner.deploymentReplicas),
        'deployment.kubernetes.io/max-replicas': String(o.owner.deploymentReplicas + Math.ceil(o.owner.deploymentReplicas / 4)),
        'deployment.kubernetes.io/revision': String(o.owner.revision),
      }
    : undefined;
  const rsMeta = meta(ctx, 'ReplicaSet', namespace, o.name, {
    ...(annotations ? { annotations } : {}),
    generation: 1,
    labels,
    ...(o.owner ? { ownerReferences: [ownerRef('apps/v1', 'Deployment', o.owner.name, uidOf(`Deployment/${namespace}/${o.owner.name}`))] } : {}),
  });
  const ready = o.node !== null ? o.replicas : 0;
  const rs: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: rsMeta,
    spec: { replicas: o.replicas, selector: { matchLabels: labels }, template: template(d, labels, 'Always') },
    status:
      o.replicas === 0
        ? { observedGeneration: 1, replicas: 0 }
        : { availableReplicas: ready, fullyLabeledReplicas: o.replicas, observedGeneration: 1, readyReplicas: ready, replicas: o.replicas },
  };
  const owner = ownerRef('apps/v1', 'ReplicaSet', o.name, rsMeta.uid as string);
  const pods = Array.from({ length: o.replicas }, (_, i) => {
    const name = `${o.name}-${safeSuffix(`${namespace}/${o.name}/${i}`, 5)}`;
    return pod(ctx, d, { name, generateName: `${o.name}-`, labels, owner, node: o.node, phase: o.node === null ? 'Pending' : 'Running', restartPolicy: 'Always' });
  });
  return [rs, ...pods];
}

/**
 * What a controller of `replicas` pods starts from: its namespace, where its pods run (null: none
 * can be placed, so none is ready), and the `app` label its selector matches.
 */
function replicated(ctx: Ctx, d: PodTemplateDesc & { replicas?: number; node?: Placement }) {
  const replicas = d.replicas ?? 1;
  const node = placement(ctx, d.node);
  return { namespace: nsOf(d), replicas, node, labels: { app: d.name }, ready: node !== null ? replicas : 0 };
}

function deployment(ctx: Ctx, d: DeploymentDesc): KubeObject[] {
  const { namespace, replicas, node, labels, ready } = replicated(ctx, d);
  const revision = (d.previousImages?.length ?? 0) + 1;
  const dep: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(ctx, 'Deployment', namespace, d.name, { annotations: { 'deployment.kubernetes.io/revision': String(revision) }, generation: revision, labels }),
    spec: {
      progressDeadlineSeconds: 600,
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: labels },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
      template: template(d, labels, 'Always'),
    },
    status: {
      ...(ready ? { availableReplicas: ready } : {}),
      conditions: [
        { lastTransitionTime: ctx.createdAt, lastUpdateTime: ctx.createdAt, message: ready === replicas ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.', reason: ready === replicas ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', status: ready === replicas ? 'True' : 'False', type: 'Available' },
        { lastTransitionTime: ctx.createdAt, lastUpdateTime: ctx.createdAt, message: `ReplicaSet "${d.name}-${hashOf(namespace, d.name, imagesOf(d))}" has successfully progressed.`, reason: 'NewReplicaSetAvailable', status: 'True', type: 'Progressing' },
      ],
      observedGeneration: revision,
      ...(ready ? { readyReplicas: ready } : {}),
      ...(replicas ? { replicas, updatedReplicas: replicas } : {}),
      ...(replicas > ready ? { unavailableReplicas: replicas - ready } : {}),
    },
  };
  const out: KubeObject[] = [dep];
  (d.previousImages ?? []).forEach((img, i) => {
    const hash = hashOf(namespace, d.name, [img]);
    out.push(...replicaSet(ctx, { ...d, image: img }, { name: `${d.name}-${hash}`, replicas: 0, node, hash, owner: { name: d.name, revision: i + 1, deploymentReplicas: replicas } }));
  });
  const hash = hashOf(namespace, d.name, imagesOf(d));
  out.push(...replicaSet(ctx, d, { name: `${d.name}-${hash}`, replicas, node, hash, owner: { name: d.name, revision, deploymentReplicas: replicas } }));
  return out;
}

/** pod-template-hash: 9–10 safe characters, as the Deployment controller makes them. */
const hashOf = (namespace: string, name: string, images: string[]): string => safeSuffix(`${namespace}/${name}/${images.join(',')}`, 10);

function statefulSet(ctx: Ctx, d: StatefulSetDesc): KubeObject[] {
  const { namespace, replicas, node, labels, ready } = replicated(ctx, d);
  const rev = `${d.name}-${safeSuffix(`sts/${namespace}/${d.name}`, 10)}`;
  const m = meta(ctx, 'StatefulSet', namespace, d.name, { generation: 1, labels });
  const sts: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: m,
    spec: {
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      podManagementPolicy: 'OrderedReady',
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: labels },
      serviceName: d.name,
      template: template(d, labels, 'Always'),
      updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
    },
    status: { availableReplicas: ready, collisionCount: 0, currentReplicas: replicas, currentRevision: rev, observedGeneration: 1, readyReplicas: ready, replicas, updateRevision: rev, updatedReplicas: replicas },
  };
  const owner = ownerRef('apps/v1', 'StatefulSet', d.name, m.uid as string);
  const pods = Array.from({ length: replicas }, (_, i) =>
    pod(ctx, d, {
      name: `${d.name}-${i}`,
      generateName: `${d.name}-`,
      labels: { ...labels, 'apps.kubernetes.io/pod-index': String(i), 'controller-revision-hash': rev, 'statefulset.kubernetes.io/pod-name': `${d.name}-${i}` },
      owner,
      node,
      phase: node === null ? 'Pending' : 'Running',
      restartPolicy: 'Always',
    }),
  );
  return [sts, ...pods];
}

function daemonSet(ctx: Ctx, d: DaemonSetDesc, allNodes: string[]): KubeObject[] {
  const namespace = nsOf(d);
  const nodes = d.nodes ?? allNodes;
  const labels = { app: d.name };
  const m = meta(ctx, 'DaemonSet', namespace, d.name, { annotations: { 'deprecated.daemonset.template.generation': '1' }, generation: 1, labels });
  const n = nodes.length;
  const ds: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: m,
    spec: {
      revisionHistoryLimit: 10,
      selector: { matchLabels: labels },
      template: template(d, labels, 'Always'),
      updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
    },
    status: { currentNumberScheduled: n, desiredNumberScheduled: n, numberAvailable: n, numberMisscheduled: 0, numberReady: n, observedGeneration: 1, updatedNumberScheduled: n },
  };
  const owner = ownerRef('apps/v1', 'DaemonSet', d.name, m.uid as string);
  const rev = safeSuffix(`ds/${namespace}/${d.name}`, 10);
  const pods = nodes.map((node) =>
    pod(ctx, d, {
      name: `${d.name}-${safeSuffix(`${namespace}/${d.name}/${node}`, 5)}`,
      generateName: `${d.name}-`,
      labels: { ...labels, 'controller-revision-hash': rev, 'pod-template-generation': '1' },
      owner,
      node,
      phase: 'Running',
      restartPolicy: 'Always',
    }),
  );
  return [ds, ...pods];
}

function job(ctx: Ctx, d: JobDesc): KubeObject[] {
  const namespace = nsOf(d);
  const node = placement(ctx, d.node);
  const phase = node === null ? 'Pending' : (d.phase ?? 'Succeeded');
  const uid = uidOf(`Job/${namespace}/${d.name}`);
  const labels = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': d.name, 'controller-uid': uid, 'job-name': d.name };
  const m = meta(ctx, 'Job', namespace, d.name, {
    generation: 1,
    labels,
    ...(d.cronJob ? { ownerReferences: [ownerRef('batch/v1', 'CronJob', d.cronJob, uidOf(`CronJob/${namespace}/${d.cronJob}`))] } : {}),
  });
  const t = ctx.createdAt;
  const jb: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: m,
    spec: {
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      completions: 1,
      manualSelector: false,
      parallelism: 1,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
      suspend: false,
      template: template(d, labels, 'Never'),
    },
    status:
      phase === 'Succeeded'
        ? { completionTime: t, conditions: [{ lastProbeTime: t, lastTransitionTime: t, message: 'Reached expected number of succeeded pods', reason: 'CompletionsReached', status: 'True', type: 'SuccessCriteriaMet' }, { lastProbeTime: t, lastTransitionTime: t, message: 'Reached expected number of succeeded pods', reason: 'CompletionsReached', status: 'True', type: 'Complete' }], ready: 0, startTime: t, succeeded: 1, terminating: 0, uncountedTerminatedPods: {} }
        : phase === 'Failed'
          ? { conditions: [{ lastProbeTime: t, lastTransitionTime: t, message: 'Job has reached the specified backoff limit', reason: 'BackoffLimitExceeded', status: 'True', type: 'Failed' }], failed: 1, ready: 0, startTime: t, terminating: 0, uncountedTerminatedPods: {} }
          : { active: 1, ready: phase === 'Running' ? 1 : 0, startTime: t, terminating: 0, uncountedTerminatedPods: {} },
  };
  const p = pod(ctx, d, {
    name: `${d.name}-${safeSuffix(`${namespace}/${d.name}/pod`, 5)}`,
    generateName: `${d.name}-`,
    labels,
    owner: ownerRef('batch/v1', 'Job', d.name, uid),
    node,
    phase,
    restartPolicy: 'Never',
  });
  return [jb, p];
}

function cronJob(ctx: Ctx, d: CronJobDesc): KubeObject {
  const namespace = nsOf(d);
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: meta(ctx, 'CronJob', namespace, d.name, { generation: 1 }),
    spec: {
      concurrencyPolicy: 'Allow',
      failedJobsHistoryLimit: 1,
      jobTemplate: { metadata: { creationTimestamp: null }, spec: { template: { metadata: { creationTimestamp: null }, spec: podSpec(d, 'OnFailure') } } },
      schedule: d.schedule ?? '0 2 * * *',
      successfulJobsHistoryLimit: 3,
      suspend: d.suspend ?? false,
    },
    status: {},
  };
}

function replicationController(ctx: Ctx, d: ReplicationControllerDesc): KubeObject[] {
  const { namespace, replicas, node, labels, ready } = replicated(ctx, d);
  const m = meta(ctx, 'ReplicationController', namespace, d.name, { generation: 1, labels });
  const rc: KubeObject = {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: m,
    // A ReplicationController's selector is a plain map, not a LabelSelector.
    spec: { replicas, selector: labels, template: template(d, labels, 'Always') },
    status: { availableReplicas: ready, fullyLabeledReplicas: replicas, observedGeneration: 1, readyReplicas: ready, replicas },
  };
  const owner = ownerRef('v1', 'ReplicationController', d.name, m.uid as string);
  const pods = Array.from({ length: replicas }, (_, i) =>
    pod(ctx, d, { name: `${d.name}-${safeSuffix(`${namespace}/${d.name}/${i}`, 5)}`, generateName: `${d.name}-`, labels, owner, node, phase: node === null ? 'Pending' : 'Running', restartPolicy: 'Always' }),
  );
  return [rc, ...pods];
}

function nodeObject(ctx: Ctx, d: NodeDesc, index: number): KubeObject {
  const ips = d.addresses ?? ['127.0.0.1'];
  const server = d.role === 'server';
  const t = ctx.createdAt;
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/instance-type': 'k3s',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': d.name,
    'kubernetes.io/os': 'linux',
    ...(server ? { 'node-role.kubernetes.io/control-plane': 'true', 'node-role.kubernetes.io/master': 'true' } : {}),
    'node.kubernetes.io/instance-type': 'k3s',
  };
  const cond = (type: string, status: string, reason: string, message: string): Record<string, unknown> => ({ lastHeartbeatTime: t, lastTransitionTime: t, message, reason, status, type });
  const cidr = `10.42.${index}.0/24`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta(ctx, 'Node', undefined, d.name, {
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': ips[0] ?? '',
        'k3s.io/hostname': d.name,
        'k3s.io/internal-ip': ips.join(','),
        'k3s.io/node-args': JSON.stringify([server ? 'server' : 'agent']),
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      labels,
    }),
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `k3s://${d.name}` },
    status: {
      addresses: [...ips.map((address) => ({ address, type: 'InternalIP' })), { address: d.name, type: 'Hostname' }],
      allocatable: { cpu: '2', 'ephemeral-storage': '19086016512', memory: '4026532Ki', pods: '110' },
      capacity: { cpu: '2', 'ephemeral-storage': '19619924Ki', memory: '4026532Ki', pods: '110' },
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      ...(d.images ? { images: d.images } : {}),
      nodeInfo: {
        architecture: 'amd64',
        bootID: uidOf(`boot/${d.name}`),
        containerRuntimeVersion: d.containerRuntimeVersion ?? 'containerd://2.1.5-k3s1',
        kernelVersion: '6.1.0-28-amd64',
        kubeProxyVersion: '',
        kubeletVersion: d.kubeletVersion ?? 'v1.33.7+k3s1',
        machineID: sha(`machine/${d.name}`).slice(0, 32),
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        systemUUID: uidOf(`system/${d.name}`),
      },
    },
  };
}

/**
 * The `kubectl get pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,
 * replicationcontrollers,nodes --all-namespaces -o json` answer for a described cluster: items
 * grouped by resource in that order, each group sorted by namespace then name (as the API lists
 * them). Controllers bring their own objects: a Deployment its ReplicaSets (current + one per
 * `previousImages`) and their pods, a StatefulSet/DaemonSet/ReplicationController/ReplicaSet/Job
 * its pods. `pods` adds pods of their own.
 */
export function workloadList(desc: WorkloadDescription): KubeList {
  const nodes = desc.nodes ?? [];
  const ctx: Ctx = {
    createdAt: desc.createdAt ?? '2026-01-05T08:00:00Z',
    digests: desc.digests ?? {},
    rv: 1000,
    firstNode: nodes[0]?.name ?? null,
    nodeIPs: new Map(nodes.map((n) => [n.name, n.addresses?.[0] ?? '127.0.0.1'])),
  };
  const all: KubeObject[] = [];
  for (const d of desc.deployments ?? []) all.push(...deployment(ctx, d));
  for (const d of desc.replicaSets ?? []) {
    const owner = d.deployment ? { name: d.deployment, revision: d.revision ?? 1, deploymentReplicas: d.replicas ?? 1 } : undefined;
    const hash = d.deployment ? hashOf(nsOf(d), d.deployment, imagesOf(d)) : undefined;
    all.push(...replicaSet(ctx, d, { name: d.name, replicas: d.replicas ?? 1, node: placement(ctx, d.node), owner, hash }));
  }
  for (const d of desc.statefulSets ?? []) all.push(...statefulSet(ctx, d));
  for (const d of desc.daemonSets ?? []) all.push(...daemonSet(ctx, d, nodes.map((n) => n.name)));
  for (const d of desc.jobs ?? []) all.push(...job(ctx, d));
  for (const d of desc.cronJobs ?? []) all.push(cronJob(ctx, d));
  for (const d of desc.replicationControllers ?? []) all.push(...replicationController(ctx, d));
  for (const d of desc.pods ?? []) {
    const node = placement(ctx, d.node);
    const owner = d.owner ? ownerRef(d.owner.apiVersion ?? 'v1', d.owner.kind, d.owner.name, uidOf(`${d.owner.kind}/${nsOf(d)}/${d.owner.name}`)) : undefined;
    all.push(
      pod(ctx, d, {
        name: d.name,
        labels: { run: d.name },
        owner,
        node,
        phase: d.phase ?? (node === null ? 'Pending' : 'Running'),
        restartPolicy: 'Always',
        ephemeralImages: d.ephemeralImages,
      }),
    );
  }
  const order = ['Pod', 'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController'];
  const key = (o: KubeObject): string => `${String(o.metadata.namespace ?? '')}\u0000${String(o.metadata.name)}`;
  const items = order.flatMap((kind) =>
    all
      .filter((o) => o.kind === kind)
      .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
  );
  const nodeItems = nodes.map((n, i) => nodeObject(ctx, n, i)).sort((a, b) => (String(a.metadata.name) < String(b.metadata.name) ? -1 : 1));
  return { apiVersion: 'v1', items: [...items, ...nodeItems], kind: 'List', metadata: { resourceVersion: '' } };
}

/** JSON as `kubectl -o json` prints it: keys sorted, 4-space indent, a final newline. */
export function kubectlJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sortKeys(value), null, 4) + '\n';
}
