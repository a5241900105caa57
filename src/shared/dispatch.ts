// The one validate → run → envelope step shared by both transports: Electron main (IPC, see
// src/main/ipc.ts) and `holdfast serve` (HTTP, src/server/http.ts). Both answer identically.
// Transport-neutral and pure: what the process that owns the nodes adds (the payload bound of
// ipc.payloadBytes/ipc.payloadDepth and how a thrown error becomes an ErrorInfo) comes in as
// DispatchGuards — src/core/payload.ts has the ones both transports use.
import { isChannel, parseArgs, type Channel, type Envelope } from './contract';
import type { ErrorInfo } from './domain/errors';
import type { Handlers } from './handlers';

export interface DispatchGuards {
  /** null when the raw args are within bounds, else the error to answer with (before zod walks them). */
  payloadProblem(raw: unknown, channel: Channel): ErrorInfo | null;
  /** Any thrown value as an ErrorInfo fit for the envelope (never a stack trace). */
  toErrorInfo(err: unknown): ErrorInfo;
}

/**
 * Validate untrusted args for `channel`, run its handler and wrap the outcome in an Envelope.
 * Never throws: bad input becomes INVALID_INPUT, anything thrown becomes an ErrorInfo
 * (no stack traces cross the boundary).
 */
export async function dispatch(handlers: Handlers, channel: string, raw: unknown, guards: DispatchGuards): Promise<Envelope<unknown>> {
  if (!isChannel(channel)) {
    return { ok: false, error: { code: 'NOT_FOUND', message: `Unknown operation "${channel}".` } };
  }
  // Size and nesting first: zod walks what it is given.
  const problem = guards.payloadProblem(raw, channel);
  if (problem) return { ok: false, error: problem };
  try {
    const args = parseArgs(channel, raw);
    const handler = handlers[channel] as (a: unknown) => Promise<unknown>;
    return { ok: true, result: await handler(args) };
  } catch (err) {
    return { ok: false, error: guards.toErrorInfo(err) };
  }
}
