// Sandboxed preload: exposes exactly the named operations of the contract as
// `window.holdfast`, each bound to its fixed channel. There is deliberately no generic
// invoke(channel, …): the renderer cannot reach anything the contract does not name.
import { contextBridge, ipcRenderer } from 'electron';
import type { HoldfastApi, Operation, operations } from '../shared/contract';

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
  checkArchiveRemoval: 'archives.check',
  removeArchive: 'archives.remove',
  listAudit: 'audit.list',
} as const satisfies typeof operations;

function bind<O extends Operation>(op: O): HoldfastApi[O] {
  const channel = OPERATION_CHANNELS[op];
  // Only the single args object crosses; main refuses anything else.
  return ((args: unknown) => ipcRenderer.invoke(channel, args)) as HoldfastApi[O];
}

const api: HoldfastApi = {
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
  checkArchiveRemoval: bind('checkArchiveRemoval'),
  removeArchive: bind('removeArchive'),
  listAudit: bind('listAudit'),
};

contextBridge.exposeInMainWorld('holdfast', Object.freeze(api));
