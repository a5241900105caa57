// A small Kubernetes API server on loopback for the guard's in-cluster path (#50): HTTPS with a CA
// made at start (openssl), bearer-token authentication for one ServiceAccount, RBAC from the
// ClusterRoles and ClusterRoleBindings of real manifests (deploy/guard.yaml), discovery for the
// kinds the lab serves, and their lists from the same workloadList() the stand-in `k3s kubectl`
// prints. Every request is recorded. Read-only: any other method is 405. Not a kube-apiserver:
// one user, cluster-wide rules only, no aggregation, no watch stream (a watch is authorised, then 405).
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './exec.ts';
import { workloadList, type KubeObject, type WorkloadDescription } from './workloads.ts';

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1), as a manifest writes it. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface ManifestDoc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  rules?: PolicyRule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** The rules the ClusterRoleBindings in `docs` give a ServiceAccount, through the ClusterRoles there. */
export function clusterRulesFor(docs: readonly unknown[], sa: { namespace: string; name: string }): PolicyRule[] {
  const all = docs as ManifestDoc[];
  const roles = new Map(all.filter((d) => d.kind === 'ClusterRole').map((d) => [d.metadata?.name, d.rules ?? []]));
  const bound = all.filter(
    (d) => d.kind === 'ClusterRoleBinding' && d.roleRef?.kind === 'ClusterRole' && (d.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace),
  );
  return bound.flatMap((b) => roles.get(b.roleRef!.name) ?? []);
}

/** What one request asked, as the API server's request-info resolver reads the path. */
export interface RequestInfo {
  method: string;
  path: string;
  /** Empty for a non-resource URL (discovery). */
  resource: string;
  apiGroup: string;
  namespace: string;
  name: string;
  /** get, list, watch (resource requests), or the lowercase method (non-resource URLs). */
  verb: string;
}

export interface RecordedRequest extends RequestInfo {
  /** The bearer token sent, if any. */
  token: string | null;
  status: number;
}

const RESOURCE_PATH = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/;

export function requestInfo(method: string, url: string): RequestInfo {
  const u = new URL(url, 'https://lab');
  const m = RESOURCE_PATH.exec(u.pathname);
  const base = { method, path: u.pathname + u.search };
  // /api, /apis, /api/v1, /apis/<group>[/<version>], /version: discovery (non-resource URLs).
  if (!m) {
    return { ...base, resource: '', apiGroup: '', namespace: '', name: '', verb: method.toLowerCase() };
  }
  const name = m[4] ?? '';
  const watch = u.searchParams.get('watch') === 'true' || u.searchParams.get('watch') === '1';
  const verb = method !== 'GET' ? method.toLowerCase() : name ? 'get' : watch ? 'watch' : 'list';
  return { ...base, resource: m[3]!, apiGroup: m[1] ?? '', namespace: m[2] ?? '', name, verb };
}

const has = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);

/** RBAC's rule match for a resource request (no subresources served here). */
export function allowedBy(rules: readonly PolicyRule[], r: RequestInfo): boolean {
  return rules.some((p) => has(p.verbs, r.verb) && has(p.apiGroups, r.apiGroup) && has(p.resources, r.resource) && (!p.resourceNames?.length || p.resourceNames.includes(r.name)));
}

// The kinds served: resource → group/version, kind and scope, as discovery lists them.
const SERVED: Record<string, { group: string; version: string; kind: string; namespaced: boolean; shortNames?: string[] }> = {
  pods: { group: '', version: 'v1', kind: 'Pod', namespaced: true, shortNames: ['po'] },
  replicationcontrollers: { group: '', version: 'v1', kind: 'ReplicationController', namespaced: true, shortNames: ['rc'] },
  nodes: { group: '', version: 'v1', kind: 'Node', namespaced: false, shortNames: ['no'] },
  deployments: { group: 'apps', version: 'v1', kind: 'Deployment', namespaced: true, shortNames: ['deploy'] },
  replicasets: { group: 'apps', version: 'v1', kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'] },
  statefulsets: { group: 'apps', version: 'v1', kind: 'StatefulSet', namespaced: true, shortNames: ['sts'] },
  daemonsets: { group: 'apps', version: 'v1', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'] },
  jobs: { group: 'batch', version: 'v1', kind: 'Job', namespaced: true },
  cronjobs: { group: 'batch', version: 'v1', kind: 'CronJob', namespaced: true, shortNames: ['cj'] },
};
const GROUPS = ['apps', 'batch'];

function discovery(path: string): unknown {
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }] };
  if (path === '/apis') {
    const groups = GROUPS.map((name) => ({ name, versions: [{ groupVersion: `${name}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${name}/v1`, version: 'v1' } }));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
  if (path === '/version') return { major: '1', minor: '33', gitVersion: 'v1.33.7+k3s1', platform: 'linux/amd64' };
  const gv = path === '/api/v1' ? '' : /^\/apis\/([^/]+)\/v1$/.exec(path)?.[1];
  if (gv === undefined || (gv !== '' && !GROUPS.includes(gv))) return null;
  const resources = Object.entries(SERVED)
    .filter(([, s]) => s.group === gv)
    .map(([name, s]) => ({ name, singularName: '', namespaced: s.namespaced, kind: s.kind, verbs: ['get', 'list', 'watch'], ...(s.shortNames ? { shortNames: s.shortNames } : {}) }));
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv ? `${gv}/v1` : 'v1', resources };
}

const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

export interface ApiServerOptions {
  /** What the cluster runs: the description the stand-in `k3s kubectl` prints too. */
  workloads: WorkloadDescription;
  /** The ServiceAccount's rules (clusterRulesFor), and its identity for messages. */
  rules: readonly PolicyRule[];
  serviceAccount: { namespace: string; name: string };
}

export interface LabApiServer {
  host: string;
  port: number;
  /** The ServiceAccount's token (random): what a pod's token file holds. */
  token: string;
  /** The cluster CA's certificate (PEM): a pod's ca.crt. */
  caCert: string;
  /** Every request so far, in order. */
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

/** A self-signed cluster CA and a serving certificate for 127.0.0.1, made with openssl. */
async function makeCerts(dir: string): Promise<{ ca: string; key: string; cert: string }> {
  const f = (n: string) => join(dir, n);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(['openssl', 'req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=k3s-server-ca@lab']);
  await run(['openssl', 'req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=kube-apiserver']);
  await writeFile(f('ext'), 'subjectAltName=IP:127.0.0.1,DNS:kubernetes.default.svc\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  await run(['openssl', 'x509', '-req', '-in', f('server.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f('ext'), '-out', f('server.crt')]);
  return { ca: await readFile(f('ca.crt'), 'utf8'), key: await readFile(f('server.key'), 'utf8'), cert: await readFile(f('server.crt'), 'utf8') };
}

/** A resource's list, from the same items the stand-in kubectl prints, in the API's list shape. */
function listOf(items: KubeObject[], resource: string, namespace: string): unknown {
  const s = SERVED[resource]!;
  const own = items.filter((i) => i.kind === s.kind && (!namespace || i.metadata.namespace === namespace));
  return { kind: `${s.kind}List`, apiVersion: s.group ? `${s.group}/v1` : 'v1', metadata: { resourceVersion: '1' }, items: own };
}

type Answer = { code: number; body: unknown };

function answer(o: ApiServerOptions, token: string, items: KubeObject[], r: RequestInfo, sent: string | null): Answer {
  if (sent !== token) return { code: 401, body: status(401, 'Unauthorized', 'Unauthorized') };
  const user = `system:serviceaccount:${o.serviceAccount.namespace}:${o.serviceAccount.name}`;
  if (!r.resource) {
    // Discovery is open to every authenticated user (the system:discovery ClusterRole).
    const doc = r.method === 'GET' ? discovery(r.path.split('?')[0]!) : null;
    return doc ? { code: 200, body: doc } : { code: 404, body: status(404, 'NotFound', 'the server could not find the requested resource') };
  }
  if (!allowedBy(o.rules, r)) {
    const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
    // As the API server words it: the group-qualified resource (pods, cronjobs.batch), then the rule asked for.
    const gr = r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource;
    return { code: 403, body: status(403, 'Forbidden', `${gr}${r.name ? ` "${r.name}"` : ''} is forbidden: User "${user}" cannot ${r.verb} resource "${r.resource}" in API group "${r.apiGroup}" ${scope}`) };
  }
  if (!SERVED[r.resource] || r.verb !== 'list') return { code: 405, body: status(405, 'MethodNotAllowed', `the lab API server serves only lists (${r.verb} ${r.resource})`) };
  return { code: 200, body: listOf(items, r.resource, r.namespace) };
}

/** Starts the server on 127.0.0.1 (a free port). */
export async function startApiServer(o: ApiServerOptions): Promise<LabApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'hf-lab-apiserver-'));
  const certs = await makeCerts(dir).finally(() => rm(dir, { recursive: true, force: true }));
  const token = randomBytes(24).toString('base64url');
  const items = workloadList(o.workloads).items;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req: IncomingMessage, res: ServerResponse) => {
    const info = requestInfo(req.method ?? 'GET', req.url ?? '/');
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const sent = auth ? auth[1]! : null;
    const a = answer(o, token, items, info, sent);
    requests.push({ ...info, token: sent, status: a.code });
    res.writeHead(a.code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.body));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    token,
    caCert: certs.ca,
    requests,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
