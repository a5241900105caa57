// The one typed contract between the renderer and the process that owns the nodes
// (Electron main over IPC, or `holdfast serve` over loopback HTTP).
//
// Every channel has an argument schema (validated in main / the server, never trusted from
// the renderer) and a result type. Results and errors travel in one envelope.
import { z } from 'zod';
import type { DiskPicture } from './diskPicture';
import type { FleetNodeResult, FleetReport } from './fleet';
import type { PrunePlan, PruneResult } from './prunePlan';
import type { ArchiveInfo, CredentialRequest, AuditEntry, ErrorInfo, ImageRef, Job, LocalArchive, LostPin, NodeDef, NodeInfo, NodeStatus, PinPlan, RemovalCheck } from './domain';

const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');
const absPath = z.string().min(1).max(4096).refine((p) => p.startsWith('/'), 'must be an absolute path');
const localPath = z.string().min(1).max(4096);
const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:%[\]-]+$/, 'a host name or IP address');

export const nodeInputSchema = z.strictObject({
  name,
  host,
  port: z.number().int().min(1).max(65535).optional(),
  user: z.string().min(1).max(64).regex(/^[a-z_][a-z0-9_.-]*\$?$/i, 'a user name').optional(),
  identity: localPath.optional(),
  knownHosts: localPath.optional(),
  socket: absPath.optional(),
  imagesDir: absPath.optional(),
  imagesDirSource: z.enum(['explicit', 'detected']).optional(),
  namespace: z.string().min(1).max(76).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional(),
  group: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'letters, digits, spaces, ".", "_" and "-"').optional(),
  sudo: z.boolean().optional(),
  jump: name.optional(),
  auth: z.enum(['publickey', 'password', 'keyboard-interactive']).optional(),
});

/** A path relative to the node's images dir: no absolute paths, no `..`, no NUL. */
const archivePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0'), 'a path inside the images dir');
const imageRefName = z.string().min(1).max(4096).refine((r) => !/[\s\0]/.test(r), 'an image reference');

/** What a pin operation applies to: named references, the images of one archive, or every k3s pin. */
export const pinTargetSchema = z.union([
  z.strictObject({ refs: z.array(imageRefName).min(1).max(10_000) }),
  z.strictObject({ archive: archivePath }),
  z.strictObject({ allK3s: z.literal(true) }),
]);

/** An absolute path to a file on this machine (the laptop). */
const localFile = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) && !p.includes('\0'), 'an absolute path to a local file');

/** An image as prune names it: its image id (or target digest when it has none). */
const imageKey = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'an image id (sha256:…)');
const keepVersions = z.number().int().min(1).max(100);

const fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'an OpenSSH SHA256 fingerprint');

export const channels = {
  'nodes.list': { args: z.strictObject({}), result: null as unknown as NodeDef[] },
  'nodes.add': { args: z.strictObject({ node: nodeInputSchema }), result: null as unknown as NodeDef },
  'nodes.update': {
    args: z.strictObject({ name, node: nodeInputSchema }),
    result: null as unknown as NodeDef,
  },
  'nodes.remove': { args: z.strictObject({ name }), result: null as unknown as { removed: string } },
  'nodes.connect': { args: z.strictObject({ name }), result: null as unknown as NodeStatus },
  'nodes.trustHostKey': {
    args: z.strictObject({ name, fingerprint }),
    result: null as unknown as { recorded: string },
  },
  'images.list': { args: z.strictObject({ node: name }), result: null as unknown as ImageRef[] },
  // images.list from the same inventory, with every lost pin (also those whose reference is
  // gone) and the versions the node runs (what makes a pin honoured): the CLI's `images`.
  'images.report': {
    args: z.strictObject({ node: name }),
    result: null as unknown as { images: ImageRef[]; lost: LostPin[]; info: NodeInfo },
  },
  // The versions the node runs, detected once per session (the pooled session's, when open).
  'nodes.info': { args: z.strictObject({ node: name }), result: null as unknown as NodeInfo },
  'archives.list': { args: z.strictObject({ node: name }), result: null as unknown as ArchiveInfo[] },
  'pins.plan': {
    args: z.strictObject({ node: name, action: z.enum(['pin', 'unpin']), target: pinTargetSchema }),
    result: null as unknown as PinPlan,
  },
  'pins.apply': {
    args: z.strictObject({ node: name, action: z.enum(['pin', 'unpin']), target: pinTargetSchema }),
    result: null as unknown as PinPlan,
  },
  // Durable pins Holdfast made on the node (its audit log) that are gone now, with causes and remedy.
  'pins.lost': { args: z.strictObject({ node: name }), result: null as unknown as LostPin[] },
  'archives.check': { args: z.strictObject({ node: name, path: archivePath }), result: null as unknown as RemovalCheck },
  'archives.remove': {
    // force needs the archive's path typed again as confirmation (checked in main).
    args: z.strictObject({ node: name, path: archivePath, force: z.boolean().optional(), confirm: z.string().max(4096).optional() }),
    result: null as unknown as AuditEntry,
  },
  'audit.list': { args: z.strictObject({ node: name.optional() }), result: null as unknown as AuditEntry[] },
  // A native file dialog (desktop app only; the browser UI types or drops a path instead).
  'local.pickArchives': { args: z.strictObject({}), result: null as unknown as { paths: string[] } },
  'local.inspect': { args: z.strictObject({ path: localFile }), result: null as unknown as LocalArchive },
  'jobs.startImport': {
    args: z.strictObject({
      nodes: z.array(name).min(1).max(500),
      path: localFile,
      pin: z.boolean(),
      removeArchive: z.boolean(),
    }),
    result: null as unknown as Job,
  },
  'jobs.list': { args: z.strictObject({}), result: null as unknown as Job[] },
  'jobs.cancel': { args: z.strictObject({ id: z.string().min(1).max(64) }), result: null as unknown as Job },
  // A secret typed by the person for an open credentials request (null = Cancel). It goes to
  // ssh2 and is dropped: never stored, logged or sent back to any window.
  'credentials.answer': {
    args: z.strictObject({ id: z.string().min(1).max(64), answers: z.array(z.string().max(4096)).max(16).nullable() }),
    result: null as unknown as { answered: true },
  },
  'credentials.pending': { args: z.strictObject({}), result: null as unknown as CredentialRequest[] },
  // Inspect many nodes at once; results arrive as fleet.node events, then fleet.done.
  'fleet.start': {
    args: z.strictObject({ nodes: z.array(name).max(1000).optional(), group: z.string().min(1).max(64).optional() }),
    result: null as unknown as { runId: string; nodes: string[] },
  },
  'fleet.last': { args: z.strictObject({}), result: null as unknown as FleetReport | null },
  // The node's disk as kubelet's image GC sees it; images: false measures only the file systems
  // and thresholds (the fleet overview), without walking the image store.
  'disk.picture': { args: z.strictObject({ node: name, images: z.boolean().optional() }), result: null as unknown as DiskPicture },
  // What prune would remove (nothing changes on the node).
  'prune.plan': { args: z.strictObject({ node: name, keepVersions: keepVersions.optional() }), result: null as unknown as PrunePlan },
  // Removes the previewed images that a fresh plan still removes; the node's name typed as
  // confirmation (checked in main), since a removed image is gone from an air-gapped site.
  'prune.apply': {
    args: z.strictObject({ node: name, keepVersions: keepVersions.optional(), images: z.array(imageKey).min(1).max(10_000), confirm: z.string().max(64) }),
    result: null as unknown as PruneResult,
  },
  'fleet.export': {
    args: z.strictObject({ format: z.enum(['html', 'csv', 'json']) }),
    result: null as unknown as { filename: string; mime: string; content: string },
  },
} as const;

export type Channel = keyof typeof channels;
export type ArgsOf<C extends Channel> = z.infer<(typeof channels)[C]['args']>;
export type ResultOf<C extends Channel> = (typeof channels)[C]['result'];

export type Envelope<T> = { ok: true; result: T } | { ok: false; error: ErrorInfo };

/**
 * Named operations the preload exposes (and the HTTP client mirrors). The renderer never
 * names a channel itself.
 */
export const operations = {
  listNodes: 'nodes.list',
  addNode: 'nodes.add',
  updateNode: 'nodes.update',
  removeNode: 'nodes.remove',
  connectNode: 'nodes.connect',
  trustHostKey: 'nodes.trustHostKey',
  listImages: 'images.list',
  listArchives: 'archives.list',
  planPins: 'pins.plan',
  applyPins: 'pins.apply',
  listLostPins: 'pins.lost',
  checkArchiveRemoval: 'archives.check',
  removeArchive: 'archives.remove',
  listAudit: 'audit.list',
  pickArchives: 'local.pickArchives',
  inspectLocalArchive: 'local.inspect',
  startImport: 'jobs.startImport',
  listJobs: 'jobs.list',
  cancelJob: 'jobs.cancel',
  answerCredentials: 'credentials.answer',
  pendingCredentials: 'credentials.pending',
  startFleetInspection: 'fleet.start',
  lastFleetReport: 'fleet.last',
  exportFleetReport: 'fleet.export',
  getDiskPicture: 'disk.picture',
  planPrune: 'prune.plan',
  applyPrune: 'prune.apply',
} as const satisfies Record<string, Channel>;

export type Operation = keyof typeof operations;
export type HoldfastApi = {
  [O in Operation]: (args: ArgsOf<(typeof operations)[O]>) => Promise<Envelope<ResultOf<(typeof operations)[O]>>>;
};

/** Validate untrusted arguments for a channel; throws a zod error on bad input. */
export function parseArgs<C extends Channel>(channel: C, raw: unknown): ArgsOf<C> {
  return channels[channel].args.parse(raw ?? {}) as ArgsOf<C>;
}

export function isChannel(value: string): value is Channel {
  return Object.prototype.hasOwnProperty.call(channels, value);
}

// ---------------------------------------------------------------------------------------------
// Live events: pushed from the process that owns the nodes to the UI (no polling). Electron
// sends them on the one fixed IPC channel EVENT_CHANNEL; `holdfast serve` streams them as
// Server-Sent Events from GET /api/events. Both deliver the same LiveEvent objects.

/**
 * The live connection to one node (its containerd event stream), as the watcher sees it.
 * reconnecting: the SSH connection or containerd dropped; the next attempt is `attempt`, due in
 * `retryInMs` (exponential backoff 1 s → 30 s with jitter). error: given up (e.g. a changed host
 * key) until the user connects again. stopped: nothing is watching the node any more.
 */
export type LiveState = 'connecting' | 'connected' | 'reconnecting' | 'error' | 'stopped';

export interface NodeLiveStatus {
  name: string;
  state: LiveState;
  /** 1 for the first retry after a drop. */
  attempt?: number;
  retryInMs?: number;
  error?: ErrorInfo;
  info?: NodeInfo;
}

/**
 * Something changed on a node. topic: containerd's (/images/create|update|delete), 'resync'
 * after a reconnect, or 'pins.lost' when durable pins Holdfast made were found gone (then
 * `lostPins` says which, when they were made, the likely causes and the remedy).
 */
export interface NodeChanged {
  node: string;
  topic: string;
  /** The image reference the event is about ('' for resync). */
  name: string;
  lostPins?: LostPin[];
}

export const events = {
  'node.status': null as unknown as NodeLiveStatus,
  'node.changed': null as unknown as NodeChanged,
  'jobs.changed': null as unknown as Job,
  'credentials.request': null as unknown as CredentialRequest,
  'fleet.node': null as unknown as { runId: string; result: FleetNodeResult },
  'fleet.done': null as unknown as { runId: string; report: FleetReport },
} as const;

export type EventName = keyof typeof events;
export type LiveEvent = { [E in EventName]: { type: E; payload: (typeof events)[E] } }[EventName];

/** The one IPC channel main sends live events on (main → renderer only). */
export const EVENT_CHANNEL = 'holdfast:event';

/** How the renderer listens, whatever the transport: returns the unsubscribe. */
export interface LiveApi {
  onEvent(cb: (event: LiveEvent) => void): () => void;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LIVE_STATES: readonly string[] = ['connecting', 'connected', 'reconnecting', 'error', 'stopped'];
const CREDENTIAL_KINDS: readonly string[] = ['passphrase', 'password', 'keyboard-interactive'];

/**
 * A cheap structural check of an event received from the other side of a transport (the
 * preload restates it without zod). Unknown types and malformed payloads are dropped.
 */
export function isLiveEvent(value: unknown): value is LiveEvent {
  if (!isObj(value) || typeof value['type'] !== 'string' || !isObj(value['payload'])) return false;
  const p = value['payload'];
  switch (value['type'] as EventName) {
    case 'node.status':
      return typeof p['name'] === 'string' && typeof p['state'] === 'string' && LIVE_STATES.includes(p['state']);
    case 'node.changed':
      return (
        typeof p['node'] === 'string' &&
        typeof p['topic'] === 'string' &&
        typeof p['name'] === 'string' &&
        (p['lostPins'] === undefined || (Array.isArray(p['lostPins']) && p['lostPins'].every((l) => isObj(l) && typeof l['ref'] === 'string' && typeof l['kind'] === 'string')))
      );
    case 'jobs.changed':
      return typeof p['id'] === 'string' && typeof p['state'] === 'string' && Array.isArray(p['nodes']);
    case 'credentials.request':
      return (
        typeof p['id'] === 'string' &&
        CREDENTIAL_KINDS.includes(p['kind'] as string) &&
        typeof p['subject'] === 'string' &&
        Array.isArray(p['prompts']) &&
        p['prompts'].every((q) => isObj(q) && typeof q['prompt'] === 'string' && typeof q['echo'] === 'boolean') &&
        (p['instructions'] === undefined || typeof p['instructions'] === 'string')
      );
    case 'fleet.node': {
      const r = p['result'];
      return typeof p['runId'] === 'string' && isObj(r) && typeof r['node'] === 'string' && typeof r['reachable'] === 'boolean';
    }
    case 'fleet.done': {
      const r = p['report'];
      return typeof p['runId'] === 'string' && isObj(r) && Array.isArray(r['nodes']) && Array.isArray(r['drift']) && isObj(r['summary']);
    }
    default:
      return false;
  }
}
