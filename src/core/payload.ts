// The shape bound on arguments arriving over IPC or HTTP (limits ipc.payloadBytes and
// ipc.payloadDepth), checked before zod sees them. Electron's structured clone can carry what
// JSON cannot (cycles, typed arrays, Maps) at any depth. The walk is iterative and stops at the
// first bound it crosses, so its own work is bounded by the limit whatever the value: a cycle is
// infinitely deep, and shared sub-objects are counted every time they appear, as JSON would.
import type { DispatchGuards } from '../shared/dispatch';
import { toErrorInfo, type HoldfastError } from './errors';
import { formatLimit, limit, limitError } from './limits';

const MAX_BYTES = limit('ipc.payloadBytes');
const MAX_DEPTH = limit('ipc.payloadDepth');

/** null when `value` is within the bounds; else the INVALID_INPUT to answer with. */
export function payloadProblem(value: unknown, what: string): HoldfastError | null {
  const tooLarge = (): HoldfastError => limitError('ipc.payloadBytes', `The arguments of ${what} are larger than ${formatLimit('ipc.payloadBytes')}`, 'INVALID_INPUT');
  let bytes = 0;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v === 'string') bytes += v.length;
    else if (v === null || typeof v !== 'object') bytes += 8;
    else if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) bytes += v.byteLength;
    else {
      if (depth >= MAX_DEPTH) {
        return limitError('ipc.payloadDepth', `The arguments of ${what} are nested more than ${formatLimit('ipc.payloadDepth')} levels deep`, 'INVALID_INPUT');
      }
      const children: Iterable<unknown> = v instanceof Map ? [...v.keys(), ...v.values()] : v instanceof Set ? v : Array.isArray(v) ? v : Object.keys(v);
      for (const c of children) {
        // Every child costs a little (its separator), so the stack never outgrows the bound.
        bytes += 2;
        if (bytes > MAX_BYTES) return tooLarge();
        if (!Array.isArray(v) && !(v instanceof Map) && !(v instanceof Set)) {
          bytes += (c as string).length;
          stack.push({ v: (v as Record<string, unknown>)[c as string], depth: depth + 1 });
        } else stack.push({ v: c, depth: depth + 1 });
      }
    }
    if (bytes > MAX_BYTES) return tooLarge();
  }
  return null;
}

/** What both transports (Electron main and the serve command) give the shared dispatcher. */
export const dispatchGuards: DispatchGuards = {
  payloadProblem: (raw, channel) => payloadProblem(raw, channel)?.toInfo() ?? null,
  toErrorInfo,
};
