// Which images a site needs, read from what its cluster runs (docs/k3s-facts.md, "Which images a
// site needs"): `kubectl get … -o json` on a k3s server node (the kinds are on needsFromKubectl).
// Labels say what is pinned, not what is needed: kubelet's GC spares only images a running
// container uses, so an image wanted by a Deployment scaled to zero, a CronJob between runs, an
// old ReplicaSet, an init or ephemeral container, an image volume or an unscheduled pod is needed
// all the same. Pure, and defensive: the document comes from a node that may be hostile or broken,
// so an odd item, container or address is skipped, never thrown on.
import { compareText } from './compareText';
import { normalizeReference } from './imageReference';

export interface Workload {
  kind: string;
  namespace: string;
  name: string;
  /** one short clause: why it needs the image, e.g. 'running', 'pending', 'scaled to 0', 'rollback (revision 2)', 'CronJob between runs', 'suspended CronJob', 'init container', 'image volume models' */
  why: string;
}

export interface NeededImage {
  /** normalised as CRI resolves a pod's image: nginx → docker.io/library/nginx:latest, app:1@sha256:… → docker.io/library/app@sha256:… */
  ref: string;
  /** the names as the workloads wrote them (deduplicated) */
  written: string[];
  workloads: Workload[];
  /** kube Node names the need is limited to (a bare Pod's spec.nodeName, a template's nodeSelector kubernetes.io/hostname); absent: any node of the cluster. A ref needed by any unrestricted workload is unrestricted. */
  onNodes?: string[];
}

export interface KubeNode {
  name: string;
  addresses: string[];
}

export interface ClusterNeeds {
  images: NeededImage[]; // sorted by ref
  nodes: KubeNode[];
  /** image strings no reference can be read from, with who wrote them */
  unreadable: { image: string; workload: Workload }[];
}

/** Longer than any reference (a 255-character name, a 128-character tag and a sha512 digest). */
const MAX_IMAGE = 1024;
/** How much of an unreadable image string is kept to show. */
const SHOWN_IMAGE = 256;
/** Object names are DNS subdomains (253), node addresses IPs or host names. */
const MAX_NAME = 253;
const MAX_KIND = 63;
const IMAGE_ID = /^sha256:[0-9a-f]{64}$/;
/** A volume's name is a DNS label (RFC 1123); any other string is not shown. */
const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const REVISION = /^[0-9]{1,19}$/;

const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** An own field of an object (never one inherited from Object.prototype), else undefined. */
const field = (o: unknown, key: string): unknown => (isObj(o) && Object.hasOwn(o, key) ? o[key] : undefined);
const objAt = (o: unknown, key: string): Obj | undefined => {
  const v = field(o, key);
  return isObj(v) ? v : undefined;
};
const arrayAt = (o: unknown, key: string): unknown[] => {
  const v = field(o, key);
  return Array.isArray(v) ? v : [];
};
/** A non-empty string field no longer than max, else undefined. */
const stringAt = (o: unknown, key: string, max = MAX_NAME): string | undefined => {
  const v = field(o, key);
  return typeof v === 'string' && v !== '' && v.length <= max ? v : undefined;
};

/**
 * The reference CRI pulls and stores for a pod spec's image, or null when none can be read from
 * it (not a reference, or an image id such as `sha256:<hex>`).
 */
export function normalizeNeededImage(image: string): string | null {
  if (typeof image !== 'string' || image.length > MAX_IMAGE) return null;
  const s = image.trim();
  if (s === '' || IMAGE_ID.test(s)) return null;
  try {
    return normalizeReference(s);
  } catch {
    return null;
  }
}

interface Need {
  written: Set<string>;
  workloads: Map<string, Workload>;
  anyNode: boolean;
  nodes: Set<string>;
}

/** Where a pod (template) may run: null for any node, else the kube Node names. */
type Placement = string[] | null;

class Collector {
  readonly needs = new Map<string, Need>();
  readonly unreadable = new Map<string, { image: string; workload: Workload }>();

  add(image: unknown, workload: Workload, placement: Placement): void {
    if (typeof image !== 'string' || image.trim() === '') return; // no image: nothing is pulled
    const ref = normalizeNeededImage(image);
    if (ref === null) {
      const shown = image.length > SHOWN_IMAGE ? `${image.slice(0, SHOWN_IMAGE)}…` : image;
      const key = `${shown}\n${workloadKey(workload)}`;
      if (!this.unreadable.has(key)) this.unreadable.set(key, { image: shown, workload });
      return;
    }
    let need = this.needs.get(ref);
    if (!need) {
      need = { written: new Set(), workloads: new Map(), anyNode: false, nodes: new Set() };
      this.needs.set(ref, need);
    }
    need.written.add(image);
    // One entry per workload: the first reason met (main containers come before init
    // containers, image volumes and ephemeral containers) stands.
    const key = workloadKey(workload);
    if (!need.workloads.has(key)) need.workloads.set(key, workload);
    if (placement === null) need.anyNode = true;
    else for (const n of placement) need.nodes.add(n);
  }
}

const workloadKey = (w: Workload): string => `${w.kind}\n${w.namespace}\n${w.name}`;

/** What the Node items say: their names and addresses, and the node each hostname label names. */
interface NodeIndex {
  nodes: Map<string, KubeNode>;
  byHostname: Map<string, string[]>;
}

function readNodes(items: readonly unknown[]): NodeIndex {
  const nodes = new Map<string, KubeNode>();
  const byHostname = new Map<string, string[]>();
  for (const item of items) {
    if (field(item, 'kind') !== 'Node') continue;
    const meta = objAt(item, 'metadata');
    const name = stringAt(meta, 'name');
    if (!name || nodes.has(name)) continue;
    const addresses: string[] = [];
    for (const a of arrayAt(objAt(item, 'status'), 'addresses')) {
      const address = stringAt(a, 'address');
      if (address && !addresses.includes(address)) addresses.push(address);
      if (addresses.length >= 32) break;
    }
    nodes.set(name, { name, addresses });
    const hostname = stringAt(objAt(meta, 'labels'), HOSTNAME_LABEL);
    if (hostname) {
      const named = byHostname.get(hostname) ?? [];
      named.push(name);
      byHostname.set(hostname, named);
    }
  }
  return { nodes, byHostname };
}

/**
 * The nodes a pod spec is bound to: its nodeName, or the node(s) its nodeSelector's
 * kubernetes.io/hostname label picks (the label usually is the node name; the Node items say for
 * sure). null when it may run on any node.
 */
function placementOf(spec: Obj | undefined, nodes: NodeIndex, useNodeName: boolean): Placement {
  const nodeName = useNodeName ? stringAt(spec, 'nodeName') : undefined;
  if (nodeName) return [nodeName];
  const hostname = stringAt(objAt(spec, 'nodeSelector'), HOSTNAME_LABEL);
  if (hostname) return nodes.byHostname.get(hostname) ?? [hostname];
  return null;
}

function addContainers(c: Collector, containers: readonly unknown[], workload: Workload, placement: Placement): void {
  for (const container of containers) c.add(field(container, 'image'), workload, placement);
}

/**
 * The images a pod spec's image volumes mount (`volumes[].image.reference`), each named with its
 * volume: kubelet pulls the reference as it pulls a container's image, and CRI stores it under the
 * same name. A volume of another type has no `image` and brings nothing. `why(volume)` words the
 * reason from the volume's clause ('image volume models').
 */
function addImageVolumes(c: Collector, spec: Obj, base: Omit<Workload, 'why'>, why: (volume: string) => string, placement: Placement): void {
  for (const volume of arrayAt(spec, 'volumes')) {
    const image = objAt(volume, 'image');
    if (!image) continue;
    const name = stringAt(volume, 'name', 63);
    const clause = name && VOLUME_NAME.test(name) ? `image volume ${name}` : 'image volume';
    c.add(field(image, 'reference'), { ...base, why: why(clause) }, placement);
  }
}

/** A pod template's containers, init containers and image volumes (templates have no ephemeral containers). */
function addTemplate(c: Collector, template: Obj | undefined, base: Omit<Workload, 'why'>, why: string, nodes: NodeIndex): void {
  const spec = objAt(template, 'spec');
  if (!spec) return;
  const placement = placementOf(spec, nodes, true);
  const also = (clause: string): string => (why === 'running' ? clause : `${why}, ${clause}`);
  addContainers(c, arrayAt(spec, 'containers'), { ...base, why }, placement);
  addContainers(c, arrayAt(spec, 'initContainers'), { ...base, why: also('init container') }, placement);
  addImageVolumes(c, spec, base, also, placement);
}

const PHASES: Record<string, string> = { Running: 'running', Pending: 'pending', Succeeded: 'succeeded', Failed: 'failed' };

function podWhy(item: Obj): string {
  const phase = field(objAt(item, 'status'), 'phase');
  return typeof phase === 'string' && Object.hasOwn(PHASES, phase) ? PHASES[phase]! : 'phase unknown';
}

const ownersOf = (meta: Obj | undefined): Obj[] => arrayAt(meta, 'ownerReferences').filter(isObj);

const replicasOf = (item: Obj): unknown => field(objAt(item, 'spec'), 'replicas');

function revisionOf(meta: Obj | undefined): string | undefined {
  const r = field(objAt(meta, 'annotations'), REVISION_ANNOTATION);
  return typeof r === 'string' && REVISION.test(r) ? r : undefined;
}

function jobWhy(item: Obj): string {
  const spec = objAt(item, 'spec');
  const status = objAt(item, 'status');
  if (field(spec, 'suspend') === true) return 'suspended Job';
  const active = field(status, 'active');
  if (typeof active === 'number' && active > 0) return 'running';
  for (const cond of arrayAt(status, 'conditions')) {
    if (field(cond, 'status') !== 'True') continue;
    if (field(cond, 'type') === 'Complete') return 'completed Job';
    if (field(cond, 'type') === 'Failed') return 'failed Job';
  }
  return 'pending';
}

/**
 * What the workloads of a cluster need, from `kubectl get … -o json` (a List of Pods,
 * Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers and
 * Nodes). Other kinds are ignored. Throws only when doc is not a kubectl List.
 *
 * The command: kubectl get pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,
 *   replicationcontrollers,nodes --all-namespaces -o json
 * An image volume's image (`spec.volumes[].image.reference`, KEP-4639, on by default from
 * Kubernetes 1.35) counts: kubelet pulls it as it pulls a container's (docs/k3s-facts.md, "Which
 * images a site needs"). Every image is named as CRI resolves a pod's image
 * (shared/imageReference: `nginx` → `docker.io/library/nginx:latest`, a digest wins over a tag),
 * with who needs it and why.
 *
 * Any field may be missing or of the wrong type; only a document that is not a kubectl List at
 * all is an error. The work is linear in the document (the caller bounds its size), and every
 * string kept is short.
 *
 * Not covered here: the sandbox (pause) image every pod needs comes from containerd's CRI config;
 * the caller adds it. A node's registries.yaml rewrites (`mirrors.*.rewrite`) change only the name
 * an image is pulled as from a mirror, never the name it is stored under (docs.k3s.io, "Private
 * Registry Configuration", Rewrites): the reference here is what the node must hold either way.
 * Where a mirror would serve it is shared/registryMirrors pullSources.
 */
export function needsFromKubectl(doc: unknown): ClusterNeeds {
  if (!isObj(doc) || field(doc, 'kind') !== 'List' || !Array.isArray(field(doc, 'items'))) {
    throw new Error('not the output of `kubectl get … -o json`: expected a List with an items array');
  }
  const items = (field(doc, 'items') as unknown[]).filter(isObj);
  const nodes = readNodes(items);
  const revisions = deploymentRevisions(items);
  const c = new Collector();
  for (const item of items) addWorkload(c, item, nodes, revisions);

  const images: NeededImage[] = [...c.needs.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([ref, need]) => {
      const out: NeededImage = {
        ref,
        written: [...need.written].sort(compareText),
        workloads: [...need.workloads.values()].sort(compareWorkloads),
      };
      if (!need.anyNode) out.onNodes = [...need.nodes].sort(compareText);
      return out;
    });
  return {
    images,
    nodes: [...nodes.nodes.values()].sort((a, b) => compareText(a.name, b.name)),
    unreadable: [...c.unreadable.values()].sort((a, b) => compareWorkloads(a.workload, b.workload) || compareText(a.image, b.image)),
  };
}

/**
 * The revision each Deployment is at ("namespace\nname" → revision): its ReplicaSet of that
 * revision is the current one, not one kept for rollback (a Deployment scaled to 0 scales its
 * current ReplicaSet to 0 too).
 */
function deploymentRevisions(items: readonly Obj[]): Map<string, string> {
  const deploymentRevision = new Map<string, string>();
  for (const item of items) {
    if (field(item, 'kind') !== 'Deployment') continue;
    const meta = objAt(item, 'metadata');
    const name = stringAt(meta, 'name');
    const revision = revisionOf(meta);
    if (name && revision) deploymentRevision.set(`${stringAt(meta, 'namespace') ?? ''}\n${name}`, revision);
  }
  return deploymentRevision;
}

/** One item of the List: the images its kind runs or may run again (other kinds bring nothing). */
function addWorkload(c: Collector, item: Obj, nodes: NodeIndex, revisions: ReadonlyMap<string, string>): void {
  const kind = stringAt(item, 'kind', MAX_KIND);
  if (!kind || kind === 'Node') return;
  const meta = objAt(item, 'metadata');
  const name = stringAt(meta, 'name');
  if (!name) return;
  const namespace = stringAt(meta, 'namespace') ?? '';
  const base = { kind, namespace, name };
  const spec = objAt(item, 'spec');
  switch (kind) {
    case 'Pod':
      addPod(c, item, base, nodes);
      break;
    case 'Deployment':
    case 'StatefulSet':
    case 'ReplicationController':
      addTemplate(c, objAt(spec, 'template'), base, replicasOf(item) === 0 ? 'scaled to 0' : 'running', nodes);
      break;
    case 'ReplicaSet':
      addTemplate(c, objAt(spec, 'template'), base, replicaSetWhy(item, namespace, revisions), nodes);
      break;
    case 'DaemonSet':
      addTemplate(c, objAt(spec, 'template'), base, 'running', nodes);
      break;
    case 'Job':
      addTemplate(c, objAt(spec, 'template'), base, jobWhy(item), nodes);
      break;
    case 'CronJob': {
      const why = field(spec, 'suspend') === true ? 'suspended CronJob' : 'CronJob between runs';
      addTemplate(c, objAt(objAt(objAt(spec, 'jobTemplate'), 'spec'), 'template'), base, why, nodes);
      break;
    }
    default:
      break;
  }
}

/** A pod's containers, init containers, image volumes and ephemeral containers. */
function addPod(c: Collector, item: Obj, base: Omit<Workload, 'why'>, nodes: NodeIndex): void {
  const meta = objAt(item, 'metadata');
  const spec = objAt(item, 'spec');
  // A bare pod (or a static pod, mirrored under its Node) stays where it is; a pod some
  // controller made may be made again anywhere.
  // (every() of no owners is true: a bare pod)
  const pinned = ownersOf(meta).every((o) => field(o, 'kind') === 'Node');
  const placement = placementOf(spec, nodes, pinned);
  addContainers(c, arrayAt(spec, 'containers'), { ...base, why: podWhy(item) }, placement);
  addContainers(c, arrayAt(spec, 'initContainers'), { ...base, why: 'init container' }, placement);
  if (spec) addImageVolumes(c, spec, base, (clause) => clause, placement);
  addContainers(c, arrayAt(spec, 'ephemeralContainers'), { ...base, why: 'ephemeral container' }, placement);
}

/** Why a ReplicaSet's images are needed: running, scaled to 0, or kept for its Deployment's rollback. */
function replicaSetWhy(item: Obj, namespace: string, revisions: ReadonlyMap<string, string>): string {
  if (replicasOf(item) !== 0) return 'running';
  const meta = objAt(item, 'metadata');
  const deployment = ownersOf(meta).find((o) => field(o, 'kind') === 'Deployment');
  const owner = stringAt(deployment, 'name');
  if (!owner) return 'scaled to 0';
  const revision = revisionOf(meta);
  if (revision === undefined) return 'kept for rollback';
  if (revision !== revisions.get(`${namespace}\n${owner}`)) return `rollback (revision ${revision})`;
  return 'scaled to 0';
}

function compareWorkloads(a: Workload, b: Workload): number {
  return compareText(a.kind, b.kind) || compareText(a.namespace, b.namespace) || compareText(a.name, b.name);
}
