// The fake nodes' data for UI tests, as node state (test/doubles/node.ts holds it; the real service
// derives everything the UI shows from it): two nodes, images in every pin state and with every
// fate at the next k3s start (a digest reference sharing its image with a tag, pins at risk),
// archives (safe and unsafe to remove, cached by k3s, a pre-pull list, an ignored and an
// unreadable file), an audit log and edge-02's host-key story. Scenario flags vary it.
import { gzipSync } from 'node:zlib';
import { NODE_GUARD_STATE } from '../../src/core/node/guardState';
import { guardStateRecord } from '../../src/shared/guardState';
import { HoldfastError } from '../../src/core/errors';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { ImageRef } from '../../src/shared/domain/images';
import type { NodeDef, NodeInfo, NodeInput } from '../../src/shared/domain/nodes';
import { NODE_DEFAULTS } from '../../src/shared/domain/nodes';
import { diskExtraImages, fakeContainers, UPDATED } from './disk';
import { CRI, DELETED_REF, edge3Images, EDGE1_ARCHIVES, EDGE1_AUDIT, EDGE1_IMAGES, EDGE2_IMAGES, FAKE_PASSWORD, FINGERPRINT, generateRefs, img, K3S, OLD_FINGERPRINT, sha } from './catalog';
import { edge1Workloads, edge2Workloads, emptyWorkloads, REPORT_IMAGE, serverAnswer, SUDO_REFUSES_KUBECTL } from './cluster';
import type { OpenNodeOptions } from '../../src/core/node/session';
import { archiveBytes, nodeImageId, type FakeFileSpec, type FakeImageSpec, type FakeNodeSpec } from './node';

export interface Scenario {
  /** What edge-02 does on connect until trusted: 'unknown' (trustable) or 'changed' (blocked). */
  edge2HostKey?: 'unknown' | 'changed';
  /** What the native file dialog returns (a desktop app); absent: no dialog, as in the browser UI. */
  dialogPaths?: string[];
  /** Replace edge-01's images with this many generated references (performance tests). */
  manyRefs?: number;
  /** No live events (an old server): the UI must fall back to polling. */
  noEvents?: boolean;
  /** edge-01 runs this containerd (e.g. Debian's '1.6.20~ds1', which has no CRI pinning). */
  edge1Containerd?: string;
  /** edge-01's k3s/RKE2 binary did not answer the probe (distro 'unknown', no version). */
  edge1DistroUnknown?: boolean;
  /** edge-01 also holds older telemetry-agent versions and an unused redis, its disk at 82 %. */
  disk?: boolean;
  /**
   * A fleet of four in two groups: edge-01/02 in "north" (edge-02's key trusted), edge-03
   * (reachable, sudo, drifts from edge-01, low on disk) and edge-04 (behind edge-03, does not
   * answer) in "south".
   */
  fleet?: boolean;
  /** When edge-04 gives up connecting (ms; default 1500). */
  fleetUnreachableMs?: number;
  /** edge-01 authenticates with a password asked in the UI (FAKE_PASSWORD is the right one). */
  edge1Auth?: 'password' | 'keyboard-interactive';
  /** edge-01 only: the app opens it directly. */
  oneNode?: boolean;
  /** edge-01's image list answers only once releaseImages() is called (a slow node). */
  holdImages?: boolean;
  /** Entries after the nodes' history in the audit log (e.g. a removal with its warnings). */
  moreAudit?: AuditEntry[];
  /** Milliseconds each containerd call of the nodes takes (default 20). */
  latencyMs?: number;
  /**
   * Pins lost behind Holdfast's back on edge-01: the CRI label taken off nginx:1.27.3 (its digest
   * reference keeps the image pinned), and an image Holdfast had pinned (metrics-exporter, by ops)
   * deleted since.
   */
  lostPins?: boolean;
  /** edge-01's containerd answers reads, but every label update fails as an unanswering one does. */
  failApply?: boolean;
  /** Upload bandwidth to every node, bytes per second (default: no limit). */
  uploadBytesPerSec?: number;
  /**
   * The nightly report's archive lies in edge-01's images dir, listed unchanged in k3s's
   * .cache.json (so k3s skips it at start), while its image is gone from the node: the missing
   * image the CronJob needs has a copy right there.
   */
  reportArchive?: boolean;
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

const INFO: NodeInfo = {
  containerdVersion: 'v2.0.4-k3s2',
  containerdRevision: '1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20',
  distro: 'k3s',
  distroVersion: 'v1.31.9+k3s1',
};

function def(input: NodeInput): NodeDef {
  return { port: NODE_DEFAULTS.port, user: NODE_DEFAULTS.user, socket: NODE_DEFAULTS.socket, imagesDir: NODE_DEFAULTS.imagesDir, namespace: NODE_DEFAULTS.namespace, ...input } as NodeDef;
}

const asSpec = (r: ImageRef): FakeImageSpec => ({
  name: r.name,
  digest: r.digest,
  mediaType: r.mediaType,
  imageId: r.imageId,
  size: r.size,
  platforms: r.platforms,
  createdAt: r.createdAt,
  labels: r.labels,
  // When the image's records last changed (an image imported again later): kubelet's GC order.
  ...(r.imageId && UPDATED[r.imageId] ? { updatedAt: UPDATED[r.imageId] } : {}),
});

/** The nightly report's image, durable on edge-02 in the fleet (edge-01 needs it and lacks it). */
const REPORT = img({
  name: REPORT_IMAGE,
  digest: sha('c9'),
  imageId: sha('9c'),
  size: 31_457_280,
  createdAt: '2025-01-20T06:00:00Z',
  labels: CRI,
  pin: 'durable',
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
});

/** The archive that brings the report's image (reportArchive). */
const REPORT_ARCHIVE = 'jobs/nightly-report-1.0.tar';

/** edge-01's images dir: what the archives list says, as files with real bytes. */
function edge1Files(): FakeFileSpec[] {
  return EDGE1_ARCHIVES.map((a): FakeFileSpec => {
    if (a.kind === 'prepull') return { path: a.path, mtime: a.mtime, text: a.images.join('\n') + '\n' };
    if (a.kind === 'ignored') return { path: a.path, mtime: a.mtime, text: '# Images for this site\n\nCopied by the site team; see the runbook.\n' };
    // An unreadable archive: a gzip stream cut short.
    if (a.error) return { path: a.path, mtime: a.mtime, bytes: gzipSync(archiveBytes([], 'none')).subarray(0, 40) };
    // Archives name their images by tag; a digest reference is CRI's record of the same image.
    return { path: a.path, mtime: a.mtime, archive: { compression: a.compression as 'zstd' | 'gzip' | 'none', images: a.images.filter((n) => !n.includes('@')) } };
  });
}

/**
 * An SSH server that asks for a password (or keyboard-interactive answers) through the
 * CredentialsProvider the service hands the connection, and allows one attempt (MaxAuthTries 1).
 */
async function authenticate(d: NodeDef, kind: 'password' | 'keyboard-interactive', opts: OpenNodeOptions): Promise<HoldfastError | null> {
  let answer: string | undefined;
  try {
    answer =
      kind === 'password'
        ? await opts.credentials?.password?.(d.user, d.host)
        : (
            await opts.credentials?.keyboardInteractive?.(
              [
                { prompt: 'Password:', echo: false },
                { prompt: 'Verification code:', echo: true },
              ],
              { user: d.user, host: d.host, port: d.port, name: '', instructions: 'Site policy: password and the code from your token.' },
            )
          )?.[0];
  } catch {
    return new HoldfastError('AUTH_FAILED', `Authentication for ${d.user}@${d.host} was cancelled.`, { hint: 'Connect again and type the password of this user on the node.' });
  }
  if (answer === FAKE_PASSWORD) return null;
  return new HoldfastError('AUTH_FAILED', `${d.user}@${d.host} refused the password.`, { hint: 'Connect again and type the password of this user on the node.' });
}

/** Any other host: it asks for the password its node is configured with, then has no containerd. */
export async function elsewhere(d: NodeDef, opts: OpenNodeOptions): Promise<HoldfastError> {
  if (d.auth === 'password' || d.auth === 'keyboard-interactive') {
    const refused = await authenticate(d, d.auth, opts);
    if (refused) return refused;
  }
  return new HoldfastError('UNREACHABLE', `Cannot reach ${d.host}:${d.port}.`, { hint: 'Check the address and that the node is powered and on the network.' });
}

/**
 * The fleet's guards (#50), as each node's /var/lib/holdfast/guard-state.json: edge-01's ran two
 * minutes ago, re-pinned nginx and lacks the nightly report; edge-02's last run failed; edge-03's
 * stopped on 2025-03-01. edge-04 is never reached.
 */
function guardFiles(node: string, how: 'running' | 'failing' | 'stale'): Record<string, string> {
  const record = guardStateRecord({
    node,
    pinSet: { name: 'north', digest: `sha256:${'4e'.repeat(32)}` },
    time: how === 'stale' ? '2025-03-01T06:00:00Z' : new Date(Date.now() - 120_000).toISOString(),
    intervalSeconds: 300,
    ok: how !== 'failing',
    ...(how === 'failing' ? { error: 'containerd is not answering on /run/k3s/containerd/containerd.sock (connection refused)' } : {}),
    fixed: how === 'running' ? [{ ref: 'docker.io/library/nginx:1.27.3', restored: 'label-removed' }] : [],
    missing: how === 'running' ? [REPORT_IMAGE] : [],
    durable: how === 'failing' ? 0 : 6,
  });
  return { [NODE_GUARD_STATE]: JSON.stringify(record) };
}

export function fakeNodeSpecs(s: Scenario = {}): { specs: FakeNodeSpec[]; audit: AuditEntry[]; inputs: NodeInput[] } {
  const north = s.fleet ? { group: 'north' } : {};
  const edge1 = def({ name: 'edge-01', host: '10.20.0.11', knownHosts: '/home/tech/.ssh/known_hosts', ...north, ...(s.edge1Auth ? { auth: s.edge1Auth } : {}) });
  const edge2 = def({ name: 'edge-02', host: '10.20.0.12', user: 'ops', port: 2222, ...north });
  const images1 = s.manyRefs ? generateRefs(s.manyRefs) : [...EDGE1_IMAGES, ...(s.disk ? diskExtraImages() : [])];
  // Someone ran `ctr images label … io.cri-containerd.pinned=` on the tag Holdfast had pinned.
  const lostLabels = (r: ImageRef): ImageRef => (s.lostPins && r.name === 'docker.io/library/nginx:1.27.3' ? { ...r, labels: { 'io.cri-containerd.image': 'managed', 'io.holdfast.pinned-by': 'tech' } } : r);
  // In the fleet edge-02's key is on record (it answers the fleet run).
  let edge2Trusted = Boolean(s.fleet);
  const specs: FakeNodeSpec[] = [
    {
      def: edge1,
      info: {
        ...INFO,
        ...(s.edge1Containerd ? { containerdVersion: s.edge1Containerd } : {}),
        ...(s.edge1DistroUnknown ? { distro: 'unknown' as const, distroVersion: null } : {}),
      },
      images: images1.map(lostLabels).map(asSpec),
      files: s.manyRefs ? [] : [...edge1Files(), ...(s.reportArchive ? [{ path: REPORT_ARCHIVE, mtime: '2025-01-20T06:30:00Z', archive: { compression: 'none' as const, images: [REPORT_IMAGE] } }] : [])],
      importCache: s.manyRefs ? [] : [...EDGE1_ARCHIVES.filter((a) => a.cachedByK3s).map((a) => a.path), ...(s.reportArchive ? [REPORT_ARCHIVE] : [])],
      // A single-node k3s server: kubectl lists its workloads (test/doubles/cluster.ts).
      // (The performance runs' node runs nothing and names no sandbox image: nothing is needed.)
      cluster: s.manyRefs ? serverAnswer(emptyWorkloads('edge-01', edge1.host), null) : serverAnswer(edge1Workloads()),
      containers: fakeContainers('edge-01'),
      ...(s.edge1Auth ? { refuse: (opts: OpenNodeOptions) => authenticate(edge1, s.edge1Auth!, opts) } : {}),
      sharedLayers: [{ prefix: 'registry.site.lan/acme/telemetry-agent', size: 96 * MIB }],
      disk: s.disk ? { totalBytes: 4 * GIB, freeBytes: Math.round(4 * GIB * 0.18) } : { totalBytes: 64 * GIB, freeBytes: 41 * GIB },
      ...(s.latencyMs !== undefined ? { latencyMs: s.latencyMs } : {}),
      // What the containerd client reports when the socket stops answering (client.ts mapError).
      ...(s.failApply
        ? {
            failLabelUpdates: new HoldfastError('CONTAINERD_UNAVAILABLE', `containerd is not answering on ${edge1.host} (connection refused)`, {
              hint: 'Check that k3s (or containerd) is running on the node and that the socket path is right.',
            }),
          }
        : {}),
    },
    {
      def: edge2,
      info: INFO,
      // In the fleet, edge-02 runs the same workload as edge-01 plus its own redis, and holds the
      // nightly report's image edge-01 lacks.
      images: [...(s.fleet ? [...EDGE1_IMAGES, REPORT] : []), ...EDGE2_IMAGES].map(asSpec),
      cluster: serverAnswer(edge2Workloads(Boolean(s.fleet)), s.fleet ? undefined : null),
      files: [{ path: 'redis.tar', mtime: '2025-02-01T10:00:00Z', archive: { compression: 'none', images: ['docker.io/library/redis:7.4'] } }],
      disk: { totalBytes: 64 * GIB, freeBytes: 41 * GIB },
      ...(s.latencyMs !== undefined ? { latencyMs: s.latencyMs } : {}),
      // The SSH layer's answers for a host key not on record, or one that changed.
      refuse: async (opts) => {
        if (edge2Trusted) return null;
        if (s.edge2HostKey !== 'changed' && opts.acceptNewHostKey === FINGERPRINT) {
          edge2Trusted = true;
          return null;
        }
        if (s.edge2HostKey === 'changed') {
          return new HoldfastError('HOST_KEY_CHANGED', `The host key of ${edge2.host} does not match the one on record.`, {
            hint: `If the node was reinstalled, confirm the new key on its console, then remove the old entry with: ssh-keygen -R '[${edge2.host}]:${edge2.port}'`,
            fingerprint: FINGERPRINT,
            expectedFingerprint: OLD_FINGERPRINT,
          });
        }
        return new HoldfastError('HOST_KEY_UNKNOWN', `${edge2.host} presented a host key that is not known yet.`, {
          hint: 'Compare the fingerprint with the node before trusting it.',
          fingerprint: FINGERPRINT,
        });
      },
    },
  ];
  if (s.fleet) {
    specs[0]!.nodeFiles = guardFiles('edge-01', 'running');
    specs[1]!.nodeFiles = guardFiles('edge-02', 'failing');
    const edge3 = def({ name: 'edge-03', host: '10.30.0.13', group: 'south', sudo: true, user: 'ops' });
    const edge4 = def({ name: 'edge-04', host: '10.30.0.14', group: 'south', jump: 'edge-03' });
    specs.push(
      // Reached as ops with sudo, whose sudoers entry does not cover kubectl: no source of needs.
      { def: edge3, info: INFO, images: edge3Images().map(asSpec), files: [], disk: { totalBytes: 64 * GIB, freeBytes: 600 * MIB }, cluster: SUDO_REFUSES_KUBECTL, nodeFiles: guardFiles('edge-03', 'stale') },
      {
        def: edge4,
        info: INFO,
        images: [],
        files: [],
        disk: { totalBytes: 64 * GIB, freeBytes: 41 * GIB },
        // The site link is down: the connection attempt runs into its deadline.
        refuse: async () => {
          await new Promise((r) => setTimeout(r, s.fleetUnreachableMs ?? 1500));
          return new HoldfastError('TIMEOUT', `${edge4.host}:${edge4.port} did not answer within 30 s.`, { hint: 'The site link may be down; check the VPN or radio link, then retry.' });
        },
      },
    );
  }
  if (s.manyRefs || s.oneNode) specs.splice(1, 1);
  if (s.uploadBytesPerSec) for (const sp of specs) sp.linkBytesPerSec = s.uploadBytesPerSec;
  const inputs = specs.map(({ def: d }) => {
    const { port, user, socket, imagesDir, namespace, ...rest } = d;
    return { ...rest, port, user, socket, imagesDir, namespace } as NodeInput;
  });
  // The log recorded the image ids the node had (the fake node's are real config digests).
  const audit = structuredClone(EDGE1_AUDIT);
  // ops made metrics-exporter durable; the image is gone from edge-01 since.
  if (s.lostPins) audit.push({ time: '2025-02-27T10:00:00Z', user: 'ops', node: 'edge-01', action: 'pin', changes: [{ ref: DELETED_REF, imageId: sha('8f'), before: K3S, after: CRI }] });
  audit.push(...structuredClone(s.moreAudit ?? []));
  for (const e of audit) {
    for (const c of e.changes ?? []) {
      const im = images1.find((i) => i.name === c.ref);
      if (im) c.imageId = nodeImageId(im);
    }
  }
  return { specs, audit, inputs };
}
