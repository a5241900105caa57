// The zod-free half of the contract: the named operations and the channel each is bound to,
// the result envelope, and the live events (their names, payload types and the structural
// check every receiver applies). The Electron preload imports only this at run time, so its
// bundle carries no zod; the argument schemas and ArgsOf/ResultOf live in ./contract, which
// re-exports all of this and checks that every operation names a channel it has a schema for.
import type { FleetNodeResult, FleetReport } from './fleet';
import type { CredentialRequest } from './domain/connection';
import type { ErrorInfo } from './domain/errors';
import type { Job } from './domain/jobs';
import type { LostPin } from './domain/lostPins';
import type { NodeInfo } from './domain/nodes';

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
  // The images with the site's needs beside them (NeedsReport), their lost pins and the versions.
  getImagesReport: 'images.report',
  listArchives: 'archives.list',
  planPins: 'pins.plan',
  applyPins: 'pins.apply',
  listLostPins: 'pins.lost',
  checkArchiveRemoval: 'archives.check',
  removeArchive: 'archives.remove',
  listAudit: 'audit.list',
  pickArchives: 'local.pickArchives',
  inspectLocalArchive: 'local.inspect',
  pickSignatureFiles: 'local.pickSignatureFiles',
  // Each image's signature verdict for an archive, with the technician's keys, before Next (#48).
  checkArchiveSignatures: 'signatures.checkArchive',
  startImport: 'jobs.startImport',
  listJobs: 'jobs.list',
  cancelJob: 'jobs.cancel',
  answerCredentials: 'credentials.answer',
  pendingCredentials: 'credentials.pending',
  startFleetInspection: 'fleet.start',
  lastFleetReport: 'fleet.last',
  exportFleetReport: 'fleet.export',
  savePinSet: 'pinset.save',
  getDiskPicture: 'disk.picture',
  planPrune: 'prune.plan',
  applyPrune: 'prune.apply',
  // The images on nodes checked against signatures the technician carries (verdicts recorded as labels).
  verifySignatures: 'signatures.verify',
} as const;

export type Operation = keyof typeof operations;

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
  // How far the service has read an archive on this machine it inspects before a job starts
  // (jobs.startImport, jobs.startUpload): a 1 GB archive takes a while (at most ~10 a second).
  'local.inspect': null as unknown as LocalInspectProgress,
} as const;

export interface LocalInspectProgress {
  path: string;
  bytesRead: number;
  size: number;
}

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

/** Every event name, from the one map above. */
export const EVENT_NAMES = Object.keys(events) as EventName[];

/**
 * A cheap structural check of an event received from the other side of a transport (main's
 * sender, the preload and the HTTP client all use this one). Unknown types and malformed
 * payloads are dropped.
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
    case 'local.inspect':
      return typeof p['path'] === 'string' && typeof p['bytesRead'] === 'number' && typeof p['size'] === 'number';
    default:
      return false;
  }
}
