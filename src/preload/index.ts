// Sandboxed preload: exposes exactly the named operations of the contract as
// `window.holdfast`, each bound to its fixed channel. There is deliberately no generic
// invoke(channel, …): the renderer cannot reach anything the contract does not name.
// The one addition is `pathForFile`, which runs here and crosses no IPC at all.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import type { EventName, events, HoldfastApi, LiveApi, LiveEvent, Operation, operations } from '../shared/contract';

// The contract's operation → channel map, restated so this bundle needs no zod at run time.
// `satisfies` makes the compiler reject any drift (missing, extra or re-pointed operations).
export const OPERATION_CHANNELS = {
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
} as const satisfies typeof operations;

/** The one main → renderer channel (restated: `EVENT_CHANNEL` in the contract; the unit test checks they agree). */
export const EVENT_CHANNEL = 'holdfast:event';

// The event names of the contract, restated; `satisfies` rejects drift either way.
const EVENT_NAMES = {
  'node.status': true,
  'node.changed': true,
  'jobs.changed': true,
  'credentials.request': true,
  'fleet.node': true,
  'fleet.done': true,
} as const satisfies Record<EventName, true> &
  Record<keyof typeof events, true>;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The shape check of the contract's isLiveEvent, without importing zod into the preload bundle. */
export function isLiveEventShape(value: unknown): value is LiveEvent {
  if (!isObj(value) || typeof value['type'] !== 'string' || !isObj(value['payload'])) return false;
  if (!Object.prototype.hasOwnProperty.call(EVENT_NAMES, value['type'])) return false;
  const p = value['payload'];
  switch (value['type'] as EventName) {
    case 'node.status':
      return typeof p['name'] === 'string' && typeof p['state'] === 'string';
    case 'node.changed':
      return typeof p['node'] === 'string' && typeof p['topic'] === 'string' && typeof p['name'] === 'string';
    case 'jobs.changed':
      return typeof p['id'] === 'string' && typeof p['state'] === 'string' && Array.isArray(p['nodes']);
    case 'credentials.request':
      return typeof p['id'] === 'string' && typeof p['kind'] === 'string' && typeof p['subject'] === 'string' && Array.isArray(p['prompts']);
    case 'fleet.node':
      return typeof p['runId'] === 'string' && isObj(p['result']) && typeof p['result']['node'] === 'string';
    case 'fleet.done':
      return typeof p['runId'] === 'string' && isObj(p['report']) && Array.isArray(p['report']['nodes']);
    default:
      return false;
  }
}

/** Listen to live events; only well-formed events reach the callback, never the IPC event object. */
function onEvent(cb: (e: LiveEvent) => void): () => void {
  if (typeof cb !== 'function') throw new TypeError('onEvent needs a function');
  const listener = (_event: unknown, data: unknown) => {
    if (isLiveEventShape(data)) cb(data);
  };
  ipcRenderer.on(EVENT_CHANNEL, listener);
  return () => {
    ipcRenderer.removeListener(EVENT_CHANNEL, listener);
  };
}

function bind<O extends Operation>(op: O): HoldfastApi[O] {
  const channel = OPERATION_CHANNELS[op];
  // Only the single args object crosses; main refuses anything else.
  return ((args: unknown) => ipcRenderer.invoke(channel, args)) as HoldfastApi[O];
}

/**
 * What the desktop bridge adds to the contract: the local path of a File dropped on the window.
 * Since Electron 32 File objects carry no `path`; only webUtils, in the preload, can tell it.
 * The renderer gets a path string, never file contents, and sends it through the contract
 * (`local.inspect`, `jobs.startImport`) where main validates it like any typed path.
 */
export interface DesktopExtras {
  pathForFile(file: File): string;
}

const api: HoldfastApi & LiveApi & DesktopExtras = {
  listNodes: bind('listNodes'),
  addNode: bind('addNode'),
  updateNode: bind('updateNode'),
  removeNode: bind('removeNode'),
  connectNode: bind('connectNode'),
  trustHostKey: bind('trustHostKey'),
  listImages: bind('listImages'),
  listArchives: bind('listArchives'),
  planPins: bind('planPins'),
  applyPins: bind('applyPins'),
  listLostPins: bind('listLostPins'),
  checkArchiveRemoval: bind('checkArchiveRemoval'),
  removeArchive: bind('removeArchive'),
  listAudit: bind('listAudit'),
  pickArchives: bind('pickArchives'),
  inspectLocalArchive: bind('inspectLocalArchive'),
  startImport: bind('startImport'),
  listJobs: bind('listJobs'),
  cancelJob: bind('cancelJob'),
  answerCredentials: bind('answerCredentials'),
  pendingCredentials: bind('pendingCredentials'),
  startFleetInspection: bind('startFleetInspection'),
  lastFleetReport: bind('lastFleetReport'),
  exportFleetReport: bind('exportFleetReport'),
  getDiskPicture: bind('getDiskPicture'),
  planPrune: bind('planPrune'),
  applyPrune: bind('applyPrune'),
  onEvent,
  pathForFile: (file: File) => {
    try {
      return webUtils.getPathForFile(file);
    } catch {
      // Not a File from a drop or an <input> (e.g. a Blob built in the page): no path.
      return '';
    }
  },
};

contextBridge.exposeInMainWorld('holdfast', Object.freeze(api));
