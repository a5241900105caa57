// One ipcMain.handle per contract channel. Arguments are validated (zod, via `dispatch`, the
// dispatcher `holdfast serve` uses too, src/shared/dispatch.ts) before any handler runs; every
// answer is an Envelope, never a thrown error, so the renderer only ever sees { ok, result | error }. No electron runtime import: tests pass a fake.
import { channels, type Channel, type Envelope } from '../shared/contract';
import { dispatchGuards } from '../core/payload';
import { dispatch } from '../shared/dispatch';
import type { Handlers } from '../shared/handlers';
import { packEnvelope } from '../shared/wirePack';

export interface IpcInvokeEventLike {
  senderFrame?: { url: string } | null;
}

/** The subset of Electron's ipcMain used here. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcInvokeEventLike, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

export interface RegisterIpcOptions {
  /** Reject calls from frames other than our renderer (e.g. an injected iframe). */
  isTrustedSender?: (event: IpcInvokeEventLike) => boolean;
}

export const IPC_CHANNELS = Object.keys(channels) as Channel[];

/** Registers every channel; returns a function that removes them again. */
export function registerIpc(ipcMain: IpcMainLike, handlers: Handlers, opts: RegisterIpcOptions = {}): () => void {
  for (const channel of IPC_CHANNELS) {
    ipcMain.handle(channel, async (event, ...args): Promise<Envelope<unknown>> => {
      if (opts.isTrustedSender && !opts.isTrustedSender(event)) {
        return { ok: false, error: { code: 'REFUSED', message: 'This window may not call Holdfast operations.' } };
      }
      if (args.length > 1) {
        return { ok: false, error: { code: 'INVALID_INPUT', message: 'Invalid input: expected one argument object.' } };
      }
      // Record lists cross packed (src/shared/wirePack.ts): one structured clone of a few arrays,
      // not of 10,000 objects; the renderer's api unpacks them.
      return packEnvelope(await dispatch(handlers, channel, args[0], dispatchGuards));
    });
  }
  return () => {
    for (const channel of IPC_CHANNELS) ipcMain.removeHandler(channel);
  };
}
