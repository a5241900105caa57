// Sandboxed preload: exposes exactly the named operations of the contract as
// `window.holdfast`, each bound to its fixed channel. There is deliberately no generic
// invoke(channel, …): the renderer cannot reach anything the contract does not name.
// The one addition is `pathForFile`, which runs here and crosses no IPC at all.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
// Run time: the zod-free channel map only, so this sandboxed bundle carries no zod (the layers
// unit test checks). The HoldfastApi type comes from the schemas and is erased.
import { EVENT_CHANNEL, isLiveEvent, operations, type LiveApi, type LiveEvent, type Operation } from '../shared/channels';
import type { HoldfastApi } from '../shared/contract';

/** The contract's operation → channel map itself: the one list the named operations come from. */
export const OPERATION_CHANNELS = operations;
export { EVENT_CHANNEL };

/** Listen to live events; only well-formed events (the contract's isLiveEvent, as main checks) reach the callback, never the IPC event object. */
function onEvent(cb: (e: LiveEvent) => void): () => void {
  if (typeof cb !== 'function') throw new TypeError('onEvent needs a function');
  const listener = (_event: unknown, data: unknown) => {
    if (isLiveEvent(data)) cb(data);
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

/** Every named operation of the contract, each bound to its fixed channel (no generic invoke). */
const named = Object.fromEntries((Object.keys(OPERATION_CHANNELS) as Operation[]).map((op) => [op, bind(op)])) as HoldfastApi;

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
  ...named,
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
