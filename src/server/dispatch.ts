// The one validate → run → envelope step shared by both transports: Electron main (IPC, see
// src/main/ipc.ts) and `holdfast serve` (HTTP, see ./http.ts). Both answer identically.
import { toErrorInfo } from '../core/errors';
import { payloadProblem } from '../core/payload';
import { isChannel, parseArgs, type Envelope } from '../shared/contract';
import type { Handlers } from '../shared/handlers';

/**
 * Validate untrusted args for `channel`, run its handler and wrap the outcome in an Envelope.
 * Never throws: bad input becomes INVALID_INPUT, anything thrown becomes an ErrorInfo
 * (no stack traces cross the boundary).
 */
export async function dispatch(handlers: Handlers, channel: string, raw: unknown): Promise<Envelope<unknown>> {
  if (!isChannel(channel)) {
    return { ok: false, error: { code: 'NOT_FOUND', message: `Unknown operation "${channel}".` } };
  }
  // Size and nesting first (limits ipc.payloadBytes/ipc.payloadDepth): zod walks what it is given.
  const problem = payloadProblem(raw, channel);
  if (problem) return { ok: false, error: problem.toInfo() };
  try {
    const args = parseArgs(channel, raw);
    const handler = handlers[channel] as (a: unknown) => Promise<unknown>;
    return { ok: true, result: await handler(args) };
  } catch (err) {
    return { ok: false, error: toErrorInfo(err) };
  }
}
