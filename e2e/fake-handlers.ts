// In-memory Handlers for UI tests: two nodes, a handful of images covering every pin state
// (including a digest reference that shares its image id with a tag), and a scripted host-key
// story for the second node. Records every call so tests can assert what the UI asked for.
import type { ImageRef, NodeDef, NodeInput, NodeStatus } from '../src/shared/domain';
import { NODE_DEFAULTS } from '../src/shared/domain';
import type { Handlers } from '../src/shared/handlers';
import { HoldfastError } from '../src/core/errors';

export const FINGERPRINT = 'SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8';
export const OLD_FINGERPRINT = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';

const sha = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

function img(p: Partial<ImageRef> & Pick<ImageRef, 'name' | 'pin'>): ImageRef {
  return {
    digest: sha('d'),
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: sha('0'),
    size: 1024,
    platforms: ['linux/amd64'],
    createdAt: '2025-01-01T00:00:00Z',
    labels: {},
    ...p,
  };
}

const CRI = { 'io.cri-containerd.pinned': 'pinned', 'io.cri-containerd.image': 'managed' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };

export const EDGE1_IMAGES: ImageRef[] = [
  img({
    name: 'docker.io/library/nginx:1.27.3',
    digest: sha('a1'),
    imageId: sha('4e'),
    size: 72_405_113,
    platforms: ['linux/amd64', 'linux/arm64', 'linux/arm/v7'],
    createdAt: '2024-11-26T18:42:08Z',
    labels: CRI,
    pin: 'durable',
  }),
  img({
    name: `docker.io/library/nginx@${sha('a1')}`,
    digest: sha('a1'),
    imageId: sha('4e'),
    size: 72_405_113,
    platforms: ['linux/amd64', 'linux/arm64', 'linux/arm/v7'],
    createdAt: '2024-11-26T18:42:08Z',
    labels: CRI,
    pin: 'durable',
  }),
  img({
    name: 'docker.io/rancher/mirrored-pause:3.6',
    digest: sha('b2'),
    imageId: sha('6f'),
    size: 301_463,
    platforms: ['linux/amd64', 'linux/arm64'],
    createdAt: '2021-08-11T16:06:45Z',
    labels: K3S,
    pin: 'k3s',
  }),
  img({
    name: `docker.io/rancher/mirrored-pause@${sha('b2')}`,
    digest: sha('b2'),
    imageId: sha('6f'),
    size: 301_463,
    platforms: ['linux/amd64', 'linux/arm64'],
    createdAt: '2021-08-11T16:06:45Z',
    labels: K3S,
    pin: 'k3s',
  }),
  img({
    name: 'docker.io/rancher/mirrored-coredns-coredns:1.12.0',
    digest: sha('c3'),
    imageId: sha('1c'),
    size: 20_948_217,
    createdAt: '2024-10-15T11:02:31Z',
    labels: K3S,
    pin: 'k3s',
  }),
  img({
    name: 'registry.site.lan/acme/telemetry-agent:2.4.1',
    digest: sha('e5'),
    imageId: sha('9b'),
    size: 148_211_004,
    createdAt: '2025-02-03T09:15:00Z',
    labels: { 'io.cri-containerd.image': 'managed', 'org.opencontainers.image.vendor': 'Acme Field Systems' },
    pin: 'none',
  }),
  img({
    name: 'docker.io/library/busybox:1.36',
    digest: sha('f6'),
    imageId: sha('3a'),
    size: 2_160_406,
    platforms: ['linux/386', 'linux/amd64', 'linux/arm/v6', 'linux/arm/v7', 'linux/arm64', 'linux/ppc64le'],
    createdAt: null,
    labels: {},
    pin: 'none',
  }),
  img({
    name: 'quay.io/prometheus/node-exporter:v1.8.2',
    digest: sha('a7'),
    imageId: sha('7d'),
    size: 11_627_520,
    createdAt: '2024-07-14T12:00:00Z',
    labels: CRI,
    pin: 'durable',
  }),
];

export const EDGE2_IMAGES: ImageRef[] = [
  img({ name: 'docker.io/library/redis:7.4', digest: sha('b8'), imageId: sha('2b'), size: 41_000_000, labels: K3S, pin: 'k3s' }),
];

export interface FakeOptions {
  /** What edge-02 does on connect until trusted: 'unknown' (trustable) or 'changed' (blocked). */
  edge2HostKey?: 'unknown' | 'changed';
}

function def(input: NodeInput): NodeDef {
  return {
    port: NODE_DEFAULTS.port,
    user: NODE_DEFAULTS.user,
    socket: NODE_DEFAULTS.socket,
    imagesDir: NODE_DEFAULTS.imagesDir,
    namespace: NODE_DEFAULTS.namespace,
    ...input,
  };
}

export function fakeHandlers(opts: FakeOptions = {}) {
  const calls: { channel: string; args: unknown }[] = [];
  const nodes: NodeDef[] = [
    def({ name: 'edge-01', host: '10.20.0.11', knownHosts: '/home/tech/.ssh/known_hosts' }),
    def({ name: 'edge-02', host: '10.20.0.12', user: 'ops', port: 2222 }),
  ];
  let edge2Trusted = false;
  const find = (name: string) => {
    const n = nodes.find((x) => x.name === name);
    if (!n) throw new HoldfastError('NOT_FOUND', `No node named "${name}".`);
    return n;
  };
  const info = {
    containerdVersion: 'v2.0.4-k3s2',
    containerdRevision: '1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20',
    distro: 'k3s' as const,
    distroVersion: 'v1.31.6+k3s1',
  };

  const handlers: Handlers = {
    'nodes.list': async (args) => {
      calls.push({ channel: 'nodes.list', args });
      return nodes.map((n) => ({ ...n }));
    },
    'nodes.add': async (args) => {
      calls.push({ channel: 'nodes.add', args });
      if (nodes.some((n) => n.name === args.node.name)) {
        throw new HoldfastError('CONFLICT', `A node named "${args.node.name}" already exists.`, {
          hint: 'Choose another name or edit the existing node.',
        });
      }
      const n = def(args.node);
      nodes.push(n);
      return n;
    },
    'nodes.update': async (args) => {
      calls.push({ channel: 'nodes.update', args });
      const i = nodes.indexOf(find(args.name));
      nodes[i] = def(args.node);
      return nodes[i]!;
    },
    'nodes.remove': async (args) => {
      calls.push({ channel: 'nodes.remove', args });
      nodes.splice(nodes.indexOf(find(args.name)), 1);
      return { removed: args.name };
    },
    'nodes.connect': async (args): Promise<NodeStatus> => {
      calls.push({ channel: 'nodes.connect', args });
      const n = find(args.name);
      await new Promise((r) => setTimeout(r, 150));
      if (n.name === 'edge-02' && !edge2Trusted) {
        if (opts.edge2HostKey === 'changed') {
          return {
            name: n.name,
            state: 'error',
            error: {
              code: 'HOST_KEY_CHANGED',
              message: `The host key of ${n.host} does not match the one on record.`,
              hint: `If the node was reinstalled, confirm the new key on its console, then remove the old entry with: ssh-keygen -R '[${n.host}]:${n.port}'`,
              fingerprint: FINGERPRINT,
              expectedFingerprint: OLD_FINGERPRINT,
            },
          };
        }
        return {
          name: n.name,
          state: 'error',
          error: {
            code: 'HOST_KEY_UNKNOWN',
            message: `${n.host} presented a host key that is not known yet.`,
            hint: 'Compare the fingerprint with the node before trusting it.',
            fingerprint: FINGERPRINT,
          },
        };
      }
      if (!['edge-01', 'edge-02'].includes(n.name)) {
        return {
          name: n.name,
          state: 'error',
          error: {
            code: 'UNREACHABLE',
            message: `Cannot reach ${n.host}:${n.port}.`,
            hint: 'Check the address and that the node is powered and on the network.',
          },
        };
      }
      return { name: n.name, state: 'connected', info };
    },
    'nodes.trustHostKey': async (args) => {
      calls.push({ channel: 'nodes.trustHostKey', args });
      if (args.fingerprint !== FINGERPRINT) throw new HoldfastError('REFUSED', 'The host presented a different key.');
      edge2Trusted = true;
      return { recorded: '/home/tech/.ssh/known_hosts' };
    },
    'images.list': async (args) => {
      calls.push({ channel: 'images.list', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 100));
      return args.node === 'edge-01' ? EDGE1_IMAGES : args.node === 'edge-02' ? EDGE2_IMAGES : [];
    },
  };
  return { handlers, calls, nodes };
}
