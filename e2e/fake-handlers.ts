// In-memory Handlers for UI tests: two nodes, a handful of images covering every pin state and
// every fate at the next k3s start (including a digest reference that shares its image id with
// a tag, and three pins at risk), archives (safe and unsafe to remove, cached by k3s, a pre-pull
// list, an ignored and an unreadable file), an audit log, and a scripted host-key story for the
// second node. Pins and removals really change the fake's state, so a test sees the refreshed
// views. Records every call so tests can assert what the UI asked for.
import type {
  ArchiveInfo,
  AuditEntry,
  ImageRef,
  ImportPhase,
  Job,
  JobNodeProgress,
  LabelChange,
  LocalArchive,
  NodeDef,
  NodeInfo,
  NodeInput,
  NodeStatus,
  PinPlan,
  RemovalCheck,
} from '../src/shared/domain';
import { LABEL_CRI_PINNED, LABEL_K3S_PINNED, NODE_DEFAULTS, PINNED } from '../src/shared/domain';
import type { ArgsOf, LiveEvent } from '../src/shared/contract';
import type { CredentialRequest } from '../src/shared/domain';
import type { FleetNodeResult, FleetReport } from '../src/shared/fleet';
import { computeDrift } from '../src/core/fleet/drift';
import { summarizeFleet } from '../src/core/fleet/summary';
import { fleetHtml } from '../src/core/fleet/html';
import { fleetCsv } from '../src/core/fleet/csv';
import type { Handlers } from '../src/shared/handlers';
import { HoldfastError } from '../src/core/errors';
import { activeDurablePins, findLostPins } from '../src/shared/lostPins';
import { archiveRemedy, pinArchiveCommand } from '../src/shared/archiveRemedy';
import { createHash, randomUUID } from 'node:crypto';
import { diskExtraImages, fakePicture, fakeStore } from './fake-disk';
import { planPrune } from '../src/shared/prunePlan';
import { CRI, DELETED_REF, edge3Images, FAKE_PASSWORD, EDGE1_ARCHIVES, EDGE1_AUDIT, EDGE1_IMAGES, EDGE2_IMAGES, FINGERPRINT, generateRefs, img, K3S, MIB, OLD_FINGERPRINT, REASONS, sha } from './fake-catalog';

export { DELETED_REF, EDGE1_IMAGES, FAKE_PASSWORD, FINGERPRINT, OLD_FINGERPRINT } from './fake-catalog';
import { DEFAULT_KEEP_VERSIONS } from '../src/shared/imageVersions';

export interface FakeOptions {
  /** What edge-02 does on connect until trusted: 'unknown' (trustable) or 'changed' (blocked). */
  edge2HostKey?: 'unknown' | 'changed';
  /** pins.apply fails as a node whose containerd stopped answering would. */
  failApply?: boolean;
  /** What the native file dialog returns (a desktop app); absent: no dialog, as in the browser UI. */
  dialogPaths?: string[];
  /** The node whose import times out at 'importing' (once per archive: a re-run succeeds). null: none. */
  failImportOn?: string | null;
  /** Milliseconds one node's import takes from start to done (default ~2 s). */
  importMs?: number;
  /** Replace edge-01's images with this many generated references (performance tests). */
  manyRefs?: number;
  /** No live events (an old server): the UI must fall back to polling. */
  noEvents?: boolean;
  /**
   * A fleet of four in two groups: edge-01/02 in "north", edge-03 (reachable, drifts from
   * edge-01) and edge-04 (unreachable) in "south".
   */
  fleet?: boolean;
  /** When the fleet run's unreachable node gives up (ms after the start; default 1500). */
  fleetUnreachableMs?: number;
  /** edge-01 authenticates with a password asked in the UI (FAKE_PASSWORD is the right one). */
  edge1Auth?: 'password' | 'keyboard-interactive';
  /**
   * Pins lost behind Holdfast's back on edge-01: the CRI label taken off nginx:1.27.3 (its digest
   * reference keeps the image pinned), and an image Holdfast had pinned (metrics-exporter) deleted.
   */
  lostPins?: boolean;
  /** edge-01 runs this containerd (e.g. Debian's '1.6.20~ds1', which has no CRI pinning). */
  edge1Containerd?: string;
  /** edge-01's images.list answers only once releaseImages() is called (a slow node). */
  holdImages?: boolean;
  /** edge-01's k3s/RKE2 binary did not answer the probe (NodeInfo.distro 'unknown', no version). */
  edge1DistroUnknown?: boolean;
  /**
   * edge-01 also holds older telemetry-agent versions and an unused redis, and its image file
   * system is at 82 % (near kubelet's 85 %): the Disk tab's forecast and prune have work to show.
   */
  disk?: boolean;
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

/** Local archives the fake "laptop" holds: images by file name (anything else gets one generic image). */
export const LOCAL_ARCHIVES: Record<string, { images: LocalArchive['images']; size: number; warnings?: string[] }> = {
  // `ctr images export` of one platform of a multi-platform image: the index lists the others,
  // their blobs are not in the file (core/archives/importWarnings words the warning).
  'nginx-ctr-export.tar': {
    size: 71 * 1024 * 1024,
    images: [{ name: 'docker.io/library/nginx:1.27.3', platforms: ['linux/amd64'], configDigest: sha('4e') }],
    warnings: [
      'docker.io/library/nginx:1.27.3: linux/arm64 is listed but its blobs are not in the archive (3 missing, e.g. sha256:5c5c5c5c5c5c…; a partial export such as `ctr images export` without --all-platforms): k3s imports linux/amd64 and skips linux/arm64, so a linux/arm64 node cannot run it from this archive.',
    ],
  },
  'telemetry-2.5.tar.gz': {
    size: 96 * 1024 * 1024 + 318_221,
    images: [
      { name: 'registry.site.lan/acme/telemetry-agent:2.5.0', platforms: ['linux/amd64', 'linux/arm64'], configDigest: sha('7e') },
      { name: 'registry.site.lan/acme/telemetry-sidecar:1.3', platforms: ['linux/amd64'], configDigest: sha('8c') },
    ],
  },
  'k3s-airgap-images-arm64.tar.zst': {
    size: 171 * 1024 * 1024,
    images: [
      { name: 'docker.io/rancher/mirrored-pause:3.6', platforms: ['linux/arm64'], configDigest: sha('6f') },
      { name: 'docker.io/rancher/mirrored-coredns-coredns:1.12.0', platforms: ['linux/arm64'], configDigest: sha('1c') },
      { name: 'docker.io/rancher/local-path-provisioner:v0.0.30', platforms: ['linux/arm64'], configDigest: sha('5b') },
    ],
  },
};

const LOCAL_SUFFIXES: [string, LocalArchive['compression']][] = [
  ['.tar.lz4', 'lz4'],
  ['.tar.bz2', 'bzip2'],
  ['.tbz', 'bzip2'],
  ['.tar.gz', 'gzip'],
  ['.tgz', 'gzip'],
  ['.tar.zst', 'zstd'],
  ['.tzst', 'zstd'],
  ['.tar', 'none'],
];

/** What local.inspect answers for a path, the way core/import/inspectLocal refuses what k3s would. */
export function inspectFake(path: string): LocalArchive {
  const base = path.split('/').pop() ?? path;
  if (/\/(missing|nope)[^/]*$/.test(path)) throw new HoldfastError('NOT_FOUND', `no such file: ${path}`);
  const suffix = LOCAL_SUFFIXES.find(([s]) => base.endsWith(s));
  if (!suffix) {
    throw new HoldfastError('REFUSED', `${base} does not end in a suffix k3s imports (.tar .tar.lz4 .tar.bz2 .tbz .tar.gz .tgz .tar.zst .tzst; case-sensitive)`, {
      hint: 'Recompress it with a supported compression, or rename it if it already is one.',
    });
  }
  if (base.startsWith('broken')) {
    throw new HoldfastError('REFUSED', `${base} was refused: unexpected end of gzip stream after 1048576 bytes (truncated download?)`, {
      hint: 'Nothing was sent. Rebuild the archive (docker save / skopeo copy) and try again.',
    });
  }
  const known = LOCAL_ARCHIVES[base];
  const stem = base.slice(0, -suffix[0].length).replace(/[^a-z0-9._-]/gi, '-').toLowerCase() || 'archive';
  const images = known?.images ?? [{ name: `registry.site.lan/imports/${stem}:latest`, platforms: ['linux/amd64'], configDigest: sha('3f') }];
  const size = known?.size ?? 12 * 1024 * 1024 + base.length * 7919;
  return {
    path,
    size,
    sha256: createHash('sha256').update(path).digest('hex'),
    format: suffix[1] === 'zstd' ? 'oci' : 'docker',
    compression: suffix[1],
    images,
    uncompressedBytes: suffix[1] === 'none' ? size : Math.round(size * 1.6),
    warnings: known?.warnings ?? [],
  };
}

export function fakeHandlers(opts: FakeOptions = {}) {
  // holdImages: edge-01's images arrive only when the test says so.
  let releaseImages: () => void = () => undefined;
  const imagesHeld = new Promise<void>((resolve) => (releaseImages = resolve));
  const calls: { channel: string; args: unknown }[] = [];
  const north = opts.fleet ? { group: 'north' } : {};
  const nodes: NodeDef[] = [
    def({ name: 'edge-01', host: '10.20.0.11', knownHosts: '/home/tech/.ssh/known_hosts', ...north, ...(opts.edge1Auth ? { auth: opts.edge1Auth } : {}) }),
    def({ name: 'edge-02', host: '10.20.0.12', user: 'ops', port: 2222, ...north }),
  ];
  if (opts.fleet) {
    nodes.push(
      def({ name: 'edge-03', host: '10.30.0.13', group: 'south', sudo: true, user: 'ops' }),
      def({ name: 'edge-04', host: '10.30.0.14', group: 'south', jump: 'edge-03' }),
    );
  }
  // Credential requests the UI has not answered yet, and how each is resolved.
  const pendingCreds = new Map<string, { request: CredentialRequest; resolve(answers: string[] | null): void }>();
  let fleetRun: { runId: string; timers: ReturnType<typeof setTimeout>[] } | null = null;
  let lastFleet: FleetReport | null = null;
  let edge2Trusted = false;
  // Live events, as createHandlers' LiveHub sends them (job changes throttled to ~5 per second).
  const listeners = new Set<(e: LiveEvent) => void>();
  const emit = (e: LiveEvent) => {
    for (const l of [...listeners]) l(structuredClone(e));
  };
  const lastJobEmit = new Map<string, number>();
  const images: Record<string, ImageRef[]> = {
    'edge-01': opts.manyRefs ? generateRefs(opts.manyRefs) : [...structuredClone(EDGE1_IMAGES), ...(opts.disk ? diskExtraImages() : [])],
    // In the fleet, edge-02 runs the same workload as edge-01 plus its own redis.
    'edge-02': opts.fleet ? [...structuredClone(EDGE1_IMAGES), ...structuredClone(EDGE2_IMAGES)] : structuredClone(EDGE2_IMAGES),
    ...(opts.fleet ? { 'edge-03': edge3Images() } : {}),
  };
  const archives: Record<string, ArchiveInfo[]> = { 'edge-01': structuredClone(EDGE1_ARCHIVES), 'edge-02': [] };
  const audit: AuditEntry[] = structuredClone(EDGE1_AUDIT);
  if (opts.lostPins) {
    const nginx = images['edge-01']!.find((r) => r.name === 'docker.io/library/nginx:1.27.3')!;
    nginx.labels = { 'io.cri-containerd.image': 'managed', 'io.holdfast.pinned-by': 'tech' };
    nginx.pin = 'none';
    nginx.afterRestart = 'unpinned';
    nginx.reason = REASONS.unpinned;
    audit.push({
      time: '2025-02-27T10:00:00Z',
      user: 'ops',
      node: 'edge-01',
      action: 'pin',
      changes: [{ ref: DELETED_REF, imageId: sha('8f'), before: K3S, after: CRI }],
    });
  }
  const lostPinsOf = (node: string) =>
    findLostPins({ node, pins: activeDurablePins(audit, node), refs: refsOf(node), imagesDir: archives[node] ?? [], info: infoOf(node) });
  /** Stands in for the user Holdfast records in the log. */
  const user = 'tech';
  let clock = Date.parse('2025-03-06T10:00:00Z');
  const now = () => new Date((clock += 61_000)).toISOString();

  const refsOf = (node: string) => images[node] ?? [];
  const removalCheck = (node: string, a: ArchiveInfo): RemovalCheck => {
    const list = refsOf(node);
    const imgs = a.images.map((name) => {
      const r = list.find((x) => x.name === name);
      return { name, present: !!r, complete: !!r, durable: r?.pin === 'durable', missing: [] as string[] };
    });
    const problems: string[] = [];
    if (a.error) problems.push(`Its index could not be read (${a.error}): Holdfast cannot tell what removing it loses.`);
    if (a.kind === 'archive') {
      for (const i of imgs) {
        if (!i.present) problems.push(`${i.name} is not in containerd: k3s has not imported this archive (yet).`);
        // Worded as core words it, CLI command included (src/core/node/inspect.ts removalCheckFor).
        else if (!i.durable) problems.push(`${i.name} is pinned by k3s only: make its pins durable first (${pinArchiveCommand(node, a.path)}).`);
      }
    }
    return { node, path: a.path, allowed: problems.length === 0, problems, images: a.kind === 'archive' ? imgs : [] };
  };
  // Keep safeToRemove/reason consistent with the images, as the real backend derives them.
  const recompute = (node: string) => {
    for (const a of archives[node] ?? []) {
      if (a.kind !== 'archive') continue;
      const c = removalCheck(node, a);
      a.safeToRemove = c.allowed;
      a.reason = c.allowed
        ? 'Every image it brings is complete and durably pinned.'
        : a.error
          ? 'Its index could not be read, so Holdfast cannot tell what removing it loses.'
          : c.problems.length > 1
            ? `${c.problems[0]} (and ${c.problems.length - 1} more)`
            : c.problems[0]!;
      const remedy = c.allowed ? undefined : archiveRemedy(c);
      if (remedy) a.remedy = remedy;
      else delete a.remedy;
    }
  };
  recompute('edge-01');

  const selectRefs = (node: string, target: ArgsOf<'pins.plan'>['target']): { refs: ImageRef[]; missing: string[] } => {
    const list = refsOf(node);
    if ('refs' in target) {
      return { refs: list.filter((r) => target.refs.includes(r.name)), missing: target.refs.filter((n) => !list.some((r) => r.name === n)) };
    }
    if ('archive' in target) {
      const a = (archives[node] ?? []).find((x) => x.path === target.archive);
      if (!a) throw new HoldfastError('NOT_FOUND', `No file ${target.archive} in the images dir.`, { hint: 'Refresh the archives list.' });
      return { refs: list.filter((r) => a.images.includes(r.name)), missing: a.images.filter((n) => !list.some((r) => r.name === n)) };
    }
    return { refs: list.filter((r) => r.pin === 'k3s'), missing: [] };
  };

  const plan = (args: ArgsOf<'pins.plan'>): PinPlan => {
    find(args.node);
    const { refs, missing } = selectRefs(args.node, args.target);
    const changes: LabelChange[] = [];
    const unchanged: PinPlan['unchanged'] = missing.map((ref) => ({ ref, reason: 'Not found in containerd.' }));
    for (const r of refs) {
      const after = { ...r.labels };
      if (args.action === 'pin') {
        if (r.pin === 'durable') {
          unchanged.push({ ref: r.name, reason: 'Already durable.' });
          continue;
        }
        delete after[LABEL_K3S_PINNED];
        after[LABEL_CRI_PINNED] = PINNED;
      } else {
        if (r.pin !== 'durable') {
          unchanged.push({ ref: r.name, reason: r.pin === 'k3s' ? 'Pinned by k3s, not durably: nothing to release.' : 'Not pinned.' });
          continue;
        }
        delete after[LABEL_CRI_PINNED];
      }
      changes.push({ ref: r.name, imageId: r.imageId, before: { ...r.labels }, after });
    }
    return { node: args.node, action: args.action, changes, unchanged };
  };
  const find = (name: string) => {
    const n = nodes.find((x) => x.name === name);
    if (!n) throw new HoldfastError('NOT_FOUND', `No node named "${name}".`);
    return n;
  };
  const infoOf = (node: string): NodeInfo => {
    if (node !== 'edge-01') return info;
    return {
      ...info,
      ...(opts.edge1Containerd ? { containerdVersion: opts.edge1Containerd } : {}),
      ...(opts.edge1DistroUnknown ? { distro: 'unknown' as const, distroVersion: null } : {}),
    };
  };
  const info: NodeInfo = {
    containerdVersion: 'v2.0.4-k3s2',
    containerdRevision: '1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20',
    distro: 'k3s' as const,
    distroVersion: 'v1.31.6+k3s1',
  };

  // ---- Import jobs: advance through the phases on a timer, like core/jobs over real nodes. ----
  const jobs = new Map<string, { job: Job; timer: ReturnType<typeof setInterval> | null; startedAt: number }>();
  const failedOnce = new Set<string>();
  const failOn = opts.failImportOn === undefined ? 'edge-02' : opts.failImportOn;
  const totalMs = opts.importMs ?? 2000;
  const finishedState = (n: JobNodeProgress) => n.state === 'succeeded' || n.state === 'failed' || n.state === 'cancelled';
  // Share of the node's time each phase takes; uploading is most of it.
  const timeline = (o: Job['options']): [ImportPhase, number][] => [
    ['checking', 0.1],
    ['uploading', 0.5],
    ['verifying', 0.1],
    ['importing', 0.15],
    ...(o.pin ? ([['pinning', 0.08]] as [ImportPhase, number][]) : []),
    ...(o.removeArchive ? ([['removing', 0.07]] as [ImportPhase, number][]) : []),
  ];
  const MESSAGES: Record<ImportPhase, string> = {
    queued: 'waiting',
    checking: 'checking what the node already has',
    uploading: 'uploading',
    verifying: 'verifying SHA-256 on the node',
    importing: 'waiting for k3s to import the archive',
    pinning: 'making the pins durable',
    removing: 'removing the archive safely',
    done: '',
  };
  const weight: Record<ImportPhase, number> = { queued: 0, checking: 0.02, uploading: 0.05, verifying: 0.8, importing: 0.85, pinning: 0.92, removing: 0.96, done: 1 };
  const progressOf = (job: Job) =>
    job.nodes.reduce((sum, n) => {
      if (finishedState(n)) return sum + 1;
      if (n.phase === 'uploading' && n.bytesTotal > 0) return sum + 0.05 + 0.75 * (n.bytesDone / n.bytesTotal);
      return sum + weight[n.phase];
    }, 0) / Math.max(1, job.nodes.length);

  /** The node now has the archive's images (durably pinned when asked), as the real import leaves it. */
  const landImport = (node: string, a: LocalArchive, o: Job['options']) => {
    const list = (images[node] ??= []);
    const rel = a.path.split('/').pop()!;
    for (const im of a.images) {
      if (!im.name) continue;
      const labels: Record<string, string> = o.pin ? { ...CRI } : { ...K3S };
      const existing = list.find((r) => r.name === im.name);
      const ref = img({
        name: im.name,
        digest: sha((im.configDigest ?? sha('1')).slice(7, 9)),
        imageId: im.configDigest,
        size: Math.round(a.uncompressedBytes / a.images.length),
        platforms: im.platforms,
        labels,
        pin: o.pin ? 'durable' : 'k3s',
        afterRestart: 'pinned',
        reason: o.pin ? REASONS.durable : REASONS.reimported(rel),
        archive: o.removeArchive ? null : rel,
      });
      if (existing) Object.assign(existing, ref);
      else list.push(ref);
    }
    const arch = (archives[node] ??= []);
    if (!o.removeArchive && !arch.some((x) => x.path === rel)) {
      arch.push({
        path: rel,
        kind: 'archive',
        compression: a.compression,
        size: a.size,
        mtime: now(),
        images: a.images.map((i) => i.name).filter((n): n is string => !!n),
        imported: true,
        safeToRemove: false,
        reason: '',
        cachedByK3s: false,
      });
    }
    recompute(node);
  };

  const tick = (id: string, archive: LocalArchive) => {
    const entry = jobs.get(id);
    if (!entry) return;
    const { job } = entry;
    const elapsed = Date.now() - entry.startedAt;
    const steps = timeline(job.options);
    job.nodes.forEach((n, idx) => {
      if (finishedState(n)) return;
      // Nodes start a little apart so their bars differ.
      let t = (elapsed - idx * totalMs * 0.08) / totalMs;
      if (t < 0) return;
      for (const [phase, share] of steps) {
        if (t < share) {
          n.state = 'running';
          n.phase = phase;
          n.message = MESSAGES[phase];
          if (phase === 'uploading') {
            const rate = archive.size / (totalMs * share / 1000);
            n.bytesTotal = archive.size;
            n.bytesDone = Math.min(archive.size, Math.round((t / share) * archive.size));
            n.rate = Math.round(rate * (0.92 + 0.16 * Math.abs(Math.sin(elapsed / 170))));
            n.eta = (archive.size - n.bytesDone) / rate;
          } else {
            n.rate = 0;
            n.eta = null;
            if (phase !== 'checking') n.bytesDone = n.bytesTotal;
          }
          if (phase === 'importing') {
            const key = `${n.node}\u0000${archive.path}`;
            if (n.node === failOn && !failedOnce.has(key) && t > share * 0.6) {
              failedOnce.add(key);
              n.state = 'failed';
              n.error = {
                code: 'TIMEOUT',
                message: `k3s did not import ${archive.path.split('/').pop()} within 120 s`,
                hint: "Check that k3s is running on the node (systemctl status k3s) and that its version watches the images dir (v1.29.13 / v1.30.9 / v1.31.5 / v1.32.1 or later); otherwise restart k3s, then run the import again.",
              };
              n.message = n.error.message;
            } else {
              const done = Math.min(archive.images.length, Math.floor((t / share) * (archive.images.length + 1)));
              n.message = `k3s imported ${done} of ${archive.images.length} images`;
            }
          }
          return;
        }
        t -= share;
      }
      n.state = 'succeeded';
      n.phase = 'done';
      n.rate = 0;
      n.eta = null;
      n.message = ['uploaded and imported', ...(job.options.pin ? [`${archive.images.length * 2} references pinned durably`] : []), ...(job.options.removeArchive ? ['archive removed'] : [])].join(', ');
      landImport(n.node, archive, job.options);
      emit({ type: 'node.changed', payload: { node: n.node, topic: '/images/create', name: archive.images[0]?.name ?? '' } });
    });
    job.progress = progressOf(job);
    if (job.nodes.every(finishedState)) {
      job.state = job.nodes.every((n) => n.state === 'succeeded') ? 'succeeded' : 'failed';
      job.finishedAt = new Date().toISOString();
      job.progress = 1;
      if (entry.timer) clearInterval(entry.timer);
      entry.timer = null;
    }
    const finished = job.state !== 'running' && job.state !== 'queued';
    if (finished || Date.now() - (lastJobEmit.get(job.id) ?? 0) >= 200) {
      lastJobEmit.set(job.id, Date.now());
      emit({ type: 'jobs.changed', payload: job });
    }
  };

  // Bytes prune gave back per node (the fake file systems grow by it).
  const freed: Record<string, number> = {};
  const pictureOf = (node: string, withImages: boolean) =>
    fakePicture(find(node), refsOf(node), infoOf(node).containerdVersion, { tight: Boolean(opts.disk) && node === 'edge-01', freed: freed[node] ?? 0, images: withImages });
  const prunePlanOf = (node: string, keepVersions: number) => {
    const store = fakeStore(node, refsOf(node), infoOf(node).containerdVersion);
    return planPrune(node, store.images, store.index, { keepVersions });
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
      if (n.auth === 'password' || n.auth === 'keyboard-interactive') {
        // As the real broker: ask the UI, wait for the answer; the secret is compared and dropped.
        const request: CredentialRequest =
          n.auth === 'password'
            ? { id: randomUUID(), kind: 'password', subject: `${n.user}@${n.host}`, prompts: [{ prompt: 'Password:', echo: false }] }
            : {
                id: randomUUID(),
                kind: 'keyboard-interactive',
                subject: `${n.user}@${n.host}`,
                instructions: 'Site policy: password and the code from your token.',
                prompts: [
                  { prompt: 'Password:', echo: false },
                  { prompt: 'Verification code:', echo: true },
                ],
              };
        const answers = await new Promise<string[] | null>((resolve) => {
          pendingCreds.set(request.id, { request, resolve });
          emit({ type: 'credentials.request', payload: request });
        });
        pendingCreds.delete(request.id);
        if (answers === null || answers[0] !== FAKE_PASSWORD) {
          return {
            name: n.name,
            state: 'error',
            error: {
              code: 'AUTH_FAILED',
              message: answers === null ? `Authentication for ${n.user}@${n.host} was cancelled.` : `${n.user}@${n.host} refused the password.`,
              hint: 'Connect again and type the password of this user on the node.',
            },
          };
        }
      }
      if (n.name === 'edge-04') {
        return {
          name: n.name,
          state: 'error',
          error: { code: 'TIMEOUT', message: `${n.host}:${n.port} did not answer within 30 s.`, hint: 'The site link may be down; check the VPN or radio link, then retry.' },
        };
      }
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
      if (!['edge-01', 'edge-02', ...(opts.fleet ? ['edge-03'] : [])].includes(n.name)) {
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
      return { name: n.name, state: 'connected', info: infoOf(n.name) };
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
      if (opts.holdImages && args.node === 'edge-01') await imagesHeld;
      await new Promise((r) => setTimeout(r, 100));
      // As core's withLostPins: only references still there whose own pin is gone carry it.
      const lost = new Map(lostPinsOf(args.node).filter((l) => l.kind === 'label-removed' || l.kind === 'k3s-managed-again').map((l) => [l.ref, l]));
      return structuredClone(refsOf(args.node)).map((r) => (lost.has(r.name) ? { ...r, lostPin: lost.get(r.name)! } : r));
    },
    'images.report': async (args) => {
      calls.push({ channel: 'images.report', args });
      find(args.node);
      const lost = lostPinsOf(args.node);
      const byRef = new Map(lost.filter((l) => l.kind === 'label-removed' || l.kind === 'k3s-managed-again').map((l) => [l.ref, l]));
      const images = structuredClone(refsOf(args.node)).map((r) => (byRef.has(r.name) ? { ...r, lostPin: byRef.get(r.name)! } : r));
      return { images, lost, info: infoOf(args.node) };
    },
    'nodes.info': async (args) => {
      calls.push({ channel: 'nodes.info', args });
      find(args.node);
      return infoOf(args.node);
    },
    'pins.lost': async (args) => {
      calls.push({ channel: 'pins.lost', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 50));
      return lostPinsOf(args.node);
    },
    'archives.list': async (args) => {
      calls.push({ channel: 'archives.list', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 100));
      return structuredClone(archives[args.node] ?? []);
    },
    'pins.plan': async (args) => {
      calls.push({ channel: 'pins.plan', args });
      await new Promise((r) => setTimeout(r, 150));
      return plan(args);
    },
    'pins.apply': async (args) => {
      calls.push({ channel: 'pins.apply', args });
      if (opts.failApply) {
        throw new HoldfastError('CONTAINERD_UNAVAILABLE', 'containerd on edge-01 did not answer.', {
          hint: 'Check that k3s is running on the node (systemctl status k3s), then retry.',
        });
      }
      const p = plan(args);
      await new Promise((r) => setTimeout(r, 250));
      for (const c of p.changes) {
        const r = refsOf(args.node).find((x) => x.name === c.ref)!;
        r.labels = c.after;
        if (args.action === 'pin') {
          r.pin = 'durable';
          r.afterRestart = 'pinned';
          r.reason = REASONS.durable;
        } else {
          r.pin = 'none';
          r.afterRestart = r.archive ? 'pinned' : 'unpinned';
          r.reason = r.archive ? REASONS.gain(r.archive) : REASONS.unpinned;
        }
      }
      recompute(args.node);
      if (p.changes.length) audit.push({ time: now(), user, node: args.node, action: args.action, changes: p.changes });
      return p;
    },
    'archives.check': async (args) => {
      calls.push({ channel: 'archives.check', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 150));
      const a = (archives[args.node] ?? []).find((x) => x.path === args.path);
      if (!a) throw new HoldfastError('NOT_FOUND', `No file ${args.path} in the images dir.`, { hint: 'Refresh the archives list.' });
      return removalCheck(args.node, a);
    },
    'archives.remove': async (args) => {
      calls.push({ channel: 'archives.remove', args });
      find(args.node);
      const list = archives[args.node] ?? [];
      const a = list.find((x) => x.path === args.path);
      if (!a) throw new HoldfastError('NOT_FOUND', `No file ${args.path} in the images dir.`, { hint: 'Refresh the archives list.' });
      const check = removalCheck(args.node, a);
      if (!check.allowed && !args.force) {
        throw new HoldfastError('REFUSED', `Removing ${a.path} now would lose pins.`, {
          hint: 'Make its pins durable first, or force the removal.',
        });
      }
      if (args.force && args.confirm !== a.path) {
        throw new HoldfastError('REFUSED', 'The typed confirmation does not match the archive path.', {
          hint: `Type ${a.path} exactly.`,
        });
      }
      await new Promise((r) => setTimeout(r, 250));
      list.splice(list.indexOf(a), 1);
      for (const r of refsOf(args.node)) {
        if (r.archive !== a.path) continue;
        r.archive = null;
        if (r.pin !== 'durable') {
          r.afterRestart = 'unpinned';
          r.reason = r.pin === 'k3s' ? REASONS.removed(a.path) : REASONS.unpinned;
        }
      }
      const entry: AuditEntry = {
        time: now(),
        user,
        node: args.node,
        action: 'rm-archive',
        archive: { path: a.path, size: a.size, sha256: sha(a.path.length.toString(16).slice(-1) + 'e') },
        ...(args.force ? { forced: true, note: check.problems.join(' ') } : {}),
      };
      audit.push(entry);
      return entry;
    },
    'audit.list': async (args) => {
      calls.push({ channel: 'audit.list', args });
      if (args.node) find(args.node);
      return structuredClone(audit.filter((e) => !args.node || e.node === args.node));
    },
    'local.pickArchives': async (args) => {
      calls.push({ channel: 'local.pickArchives', args });
      if (!opts.dialogPaths) {
        throw new HoldfastError('INVALID_INPUT', 'there is no file dialog in the browser UI', { hint: "Type or paste the archive's full path instead." });
      }
      return { paths: [...opts.dialogPaths] };
    },
    'local.inspect': async (args) => {
      calls.push({ channel: 'local.inspect', args });
      await new Promise((r) => setTimeout(r, 300));
      return inspectFake(args.path);
    },
    'jobs.startImport': async (args) => {
      calls.push({ channel: 'jobs.startImport', args });
      for (const n of args.nodes) find(n);
      if (args.removeArchive && !args.pin) {
        throw new HoldfastError('INVALID_INPUT', 'removing the archive needs its pins made durable first', { hint: 'Turn on "make pins durable".' });
      }
      const archive = inspectFake(args.path);
      const base = archive.path.split('/').pop()!;
      const job: Job = {
        id: randomUUID(),
        kind: 'import',
        title: `Import ${base} to ${args.nodes.length === 1 ? args.nodes[0] : `${args.nodes.length} nodes`}`,
        state: 'running',
        createdAt: new Date().toISOString(),
        finishedAt: null,
        progress: 0,
        nodes: args.nodes.map((node) => ({ node, state: 'queued', phase: 'queued', bytesDone: 0, bytesTotal: 0, rate: 0, eta: null, message: 'waiting' })),
        archive: { path: archive.path, size: archive.size, sha256: archive.sha256 },
        options: { pin: args.pin, removeArchive: args.removeArchive },
      };
      const entry = { job, timer: null as ReturnType<typeof setInterval> | null, startedAt: Date.now() };
      jobs.set(job.id, entry);
      entry.timer = setInterval(() => tick(job.id, archive), 50);
      entry.timer.unref?.();
      return structuredClone(job);
    },
    'jobs.list': async (args) => {
      calls.push({ channel: 'jobs.list', args });
      return [...jobs.values()].map((e) => structuredClone(e.job)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },
    'jobs.cancel': async (args) => {
      calls.push({ channel: 'jobs.cancel', args });
      const entry = jobs.get(args.id);
      if (!entry) throw new HoldfastError('NOT_FOUND', `no job ${args.id}`);
      const { job } = entry;
      if (job.state === 'running' || job.state === 'queued') {
        if (entry.timer) clearInterval(entry.timer);
        entry.timer = null;
        for (const n of job.nodes) {
          if (finishedState(n)) continue;
          n.state = 'cancelled';
          n.message = 'cancelled';
          n.rate = 0;
          n.eta = null;
        }
        job.state = 'cancelled';
        job.finishedAt = new Date().toISOString();
        emit({ type: 'jobs.changed', payload: job });
      }
      return structuredClone(job);
    },
    'credentials.answer': async (args) => {
      // Recorded without the secret: tests assert it is nowhere.
      calls.push({ channel: 'credentials.answer', args: { id: args.id, answered: args.answers !== null } });
      const p = pendingCreds.get(args.id);
      if (!p) throw new HoldfastError('NOT_FOUND', 'That request is no longer open.');
      p.resolve(args.answers);
      return { answered: true };
    },
    'credentials.pending': async (args) => {
      calls.push({ channel: 'credentials.pending', args });
      return [...pendingCreds.values()].map((p) => structuredClone(p.request));
    },
    'fleet.start': async (args) => {
      calls.push({ channel: 'fleet.start', args });
      for (const n of args.nodes ?? []) find(n);
      const defs = nodes.filter((d) => (args.nodes ? args.nodes.includes(d.name) : true) && (args.group ? d.group === args.group : true));
      if (defs.length === 0) throw new HoldfastError('NOT_FOUND', args.group ? `no nodes in group "${args.group}"` : 'no nodes to inspect');
      if (fleetRun) for (const t of fleetRun.timers) clearTimeout(t);
      const runId = randomUUID();
      const run = { runId, timers: [] as ReturnType<typeof setTimeout>[] };
      fleetRun = run;
      const started = Date.now();
      const results: FleetNodeResult[] = [];
      // One node answers every ~350 ms; the unreachable one times out last (~1.5 s); then the report.
      const order = [...defs].sort((a, b) => Number(a.name === 'edge-04') - Number(b.name === 'edge-04'));
      order.forEach((d, i) => {
        const at = d.name === 'edge-04' ? Math.max(350 * (i + 1), opts.fleetUnreachableMs ?? 1500) : 350 * (i + 1);
        run.timers.push(
          setTimeout(() => {
            const r = fleetResult(d);
            results.push(r);
            emit({ type: 'fleet.node', payload: { runId, result: r } });
            if (results.length === defs.length) {
              const inOrder = defs.map((x) => results.find((y) => y.node === x.name)!);
              const drift = computeDrift(inOrder);
              lastFleet = {
                generatedAt: new Date().toISOString(),
                summary: summarizeFleet(inOrder, drift, undefined, Date.now() - started),
                nodes: inOrder,
                drift,
              };
              run.timers.push(setTimeout(() => emit({ type: 'fleet.done', payload: { runId, report: structuredClone(lastFleet!) } }), 50));
            }
          }, at),
        );
      });
      return { runId, nodes: defs.map((d) => d.name) };
    },
    'disk.picture': async (args) => {
      calls.push({ channel: 'disk.picture', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 120));
      return pictureOf(args.node, args.images !== false);
    },
    'prune.plan': async (args) => {
      calls.push({ channel: 'prune.plan', args });
      find(args.node);
      await new Promise((r) => setTimeout(r, 150));
      return prunePlanOf(args.node, args.keepVersions ?? DEFAULT_KEEP_VERSIONS);
    },
    'prune.apply': async (args) => {
      calls.push({ channel: 'prune.apply', args });
      find(args.node);
      if (args.confirm !== args.node) {
        throw new HoldfastError('REFUSED', "prune needs the node's name typed exactly as confirmation", { hint: `Type ${args.node} to confirm.` });
      }
      await new Promise((r) => setTimeout(r, 250));
      // As core's applyPrune: a fresh plan, only the previewed images it still removes.
      const p = prunePlanOf(args.node, args.keepVersions ?? DEFAULT_KEEP_VERSIONS);
      const removed = p.remove.filter((r) => args.images.includes(r.key));
      const refused = args.images
        .filter((k) => !removed.some((r) => r.key === k))
        .map((k) => {
          const kept = p.kept.find((x) => x.key === k);
          return { key: k, refs: kept?.refs ?? [], text: kept?.text ?? 'It is no longer on the node.' };
        });
      const gone = new Set(removed.flatMap((r) => r.refs));
      images[args.node] = refsOf(args.node).filter((r) => !gone.has(r.name));
      const bytes = removed.reduce((s, r) => s + r.bytes, 0);
      freed[args.node] = (freed[args.node] ?? 0) + bytes;
      let entry: AuditEntry | null = null;
      if (removed.length) {
        entry = {
          time: now(),
          user,
          node: args.node,
          action: 'prune',
          pruned: { keepVersions: p.keepVersions, images: removed.map((r) => ({ imageId: r.imageId, refs: r.refs, digests: r.digests, bytes: r.bytes })), plannedBytes: bytes, freedBytes: bytes },
        };
        audit.push(entry);
        emit({ type: 'node.changed', payload: { node: args.node, topic: '/images/delete', name: removed[0]!.refs[0] ?? '' } });
      }
      return { node: args.node, keepVersions: p.keepVersions, removed, refused, failed: [], plannedBytes: bytes, freedBytes: bytes, audit: entry };
    },
    'fleet.last': async (args) => {
      calls.push({ channel: 'fleet.last', args });
      return lastFleet ? structuredClone(lastFleet) : null;
    },
    'fleet.export': async (args) => {
      calls.push({ channel: 'fleet.export', args });
      if (!lastFleet) throw new HoldfastError('NOT_FOUND', 'no fleet report yet', { hint: 'Inspect the fleet first.' });
      const stamp = lastFleet.generatedAt.replace(/[:.]/g, '-');
      if (args.format === 'html') return { filename: `holdfast-fleet-${stamp}.html`, mime: 'text/html', content: fleetHtml(lastFleet) };
      if (args.format === 'csv') return { filename: `holdfast-fleet-${stamp}.csv`, mime: 'text/csv', content: fleetCsv(lastFleet) };
      return { filename: `holdfast-fleet-${stamp}.json`, mime: 'application/json', content: JSON.stringify(lastFleet, null, 2) };
    },
  };
  function fleetResult(d: NodeDef): FleetNodeResult {
    if (d.name === 'edge-04' || !images[d.name]) {
      return {
        node: d.name,
        reachable: false,
        error: { code: 'TIMEOUT', message: `${d.host}:${d.port} did not answer within 30 s.`, hint: 'The site link may be down; check the VPN or radio link, then retry.' },
        versions: null,
        images: null,
        archives: null,
        disk: null,
      };
    }
    const low = d.name === 'edge-03';
    return {
      node: d.name,
      reachable: true,
      error: null,
      versions: infoOf(d.name),
      images: structuredClone(refsOf(d.name)),
      archives: structuredClone(archives[d.name] ?? []),
      lostPins: lostPinsOf(d.name),
      disk: { path: d.imagesDir, freeBytes: low ? 600 * MIB : 41 * 1024 * MIB, totalBytes: 64 * 1024 * MIB, via: 'statvfs' },
    };
  }
  /** Stop every job timer (tests call it when the server closes). */
  const stopJobs = () => {
    for (const e of jobs.values()) if (e.timer) clearInterval(e.timer);
    if (fleetRun) for (const t of fleetRun.timers) clearTimeout(t);
    for (const p of pendingCreds.values()) p.resolve(null);
  };
  const events = {
    subscribe(cb: (e: LiveEvent) => void) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
  // startServer serves GET /api/events from `handlers.events`, as with the real service.
  if (!opts.noEvents) Object.assign(handlers, { events });
  return { handlers, calls, nodes, images, archives, audit, jobs, stopJobs, emit, events, listeners, releaseImages };
}
