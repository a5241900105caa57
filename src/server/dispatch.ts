// The shared dispatcher (src/shared/dispatch.ts) bound to the guards of the process that owns
// the nodes (src/core/payload.ts): what `holdfast serve` calls. Electron main (src/main/ipc.ts)
// and the CLI (src/cli/service.ts) bind the same two themselves; they import nothing from here.
import { dispatchGuards } from '../core/payload';
import { dispatch as dispatchWith } from '../shared/dispatch';
import type { Envelope } from '../shared/contract';
import type { Handlers } from '../shared/handlers';

/** Validate, run, envelope: never throws (see src/shared/dispatch.ts). */
export function dispatch(handlers: Handlers, channel: string, raw: unknown): Promise<Envelope<unknown>> {
  return dispatchWith(handlers, channel, raw, dispatchGuards);
}
