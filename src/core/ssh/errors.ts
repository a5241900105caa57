// How a failed SSH connection is told: Node/ssh2 errors classified into our error codes (UNREACHABLE,
// TIMEOUT) with one sentence and a hint each. Separate from connect.ts so the wording can be read
// and changed without wading through the connection's event handling; the connection decides
// *when* it failed, this file says *what to tell the person*. Authentication failures are worded
// in auth.ts, host-key failures in hostKey.ts.
import { HoldfastError } from '../errors';

const NET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  EHOSTDOWN: 'host is down',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (temporary DNS failure)',
  ECONNRESET: 'connection reset',
  EADDRNOTAVAIL: 'address not available',
  EPIPE: 'connection closed',
};

export function errnoCode(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; errors?: unknown[] };
  if (typeof e.code === 'string') return e.code;
  // Node 20's happy-eyeballs connect reports an AggregateError of per-address errors.
  if (Array.isArray(e.errors)) for (const sub of e.errors) {
    const c = errnoCode(sub);
    if (c) return c;
  }
  return undefined;
}

export function addr(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** Where the connection was when the ready deadline passed. */
export type ConnectPhase = 'connect' | 'handshake' | 'auth';

/** The connect + handshake + authentication deadline passed during `phase`. */
export function deadlineError(phase: ConnectPhase, where: string, user: string, readyTimeoutMs: number): HoldfastError {
  const what =
    phase === 'connect'
      ? `no TCP connection to ${where} within ${seconds(readyTimeoutMs)}`
      : phase === 'handshake'
        ? `${where} accepted the TCP connection but did not complete the SSH handshake within ${seconds(readyTimeoutMs)}`
        : `authentication as ${user} at ${where} did not finish within ${seconds(readyTimeoutMs)}`;
  return new HoldfastError('TIMEOUT', `Timed out: ${what}.`, {
    hint:
      phase === 'connect'
        ? 'Check the address and port, and that no firewall drops the traffic.'
        : 'Check that an SSH server (not another service) listens on that port and is not overloaded.',
  });
}

/** The server hung up before login completed, with no error of its own. */
export function closedBeforeLoginError(where: string): HoldfastError {
  return new HoldfastError('UNREACHABLE', `${where} closed the connection before login completed.`, {
    hint: 'Check that the port belongs to an SSH server and that it accepts connections from here (MaxStartups, AllowUsers, tcp wrappers).',
  });
}

/**
 * An ssh2 'error' before login that is neither about authentication nor the host key: the TCP
 * connection, the handshake or ssh2's own timeouts. `overStream` is true when the connection runs
 * over a jump host's channel instead of a TCP socket.
 */
export function connectionError(err: Error & { level?: string }, where: string, overStream: boolean): HoldfastError {
  const code = errnoCode(err);
  if (err.level === 'client-socket' && code) {
    if (code === 'ETIMEDOUT') {
      return new HoldfastError('TIMEOUT', `Timed out: no TCP connection to ${where}.`, { hint: 'Check the address and port, and that no firewall drops the traffic.', cause: err });
    }
    const why = NET_ERRORS[code] ?? `${code}`;
    return new HoldfastError('UNREACHABLE', `Cannot reach ${where}: ${why}.`, {
      hint:
        code === 'ECONNREFUSED'
          ? 'Check that sshd runs on the node and listens on that port.'
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? 'Check the host name, or use the node\'s IP address.'
            : 'Check the address, the network path and any firewall.',
      cause: err,
    });
  }
  if (/Connection lost before handshake/.test(err.message) || (overStream && /ECONNRESET|socket hang up|write after end/.test(err.message))) {
    return new HoldfastError('UNREACHABLE', `${where} closed the connection before the SSH handshake.`, {
      hint: 'Check that an SSH server listens on that port and accepts connections from this machine (MaxStartups, firewall, tcp wrappers).',
      cause: err,
    });
  }
  if (err.level === 'client-timeout') {
    return new HoldfastError('TIMEOUT', `Timed out talking to ${where}: ${err.message}.`, { cause: err });
  }
  return new HoldfastError('UNREACHABLE', `SSH connection to ${where} failed: ${err.message}.`, {
    hint: 'Check that the port belongs to an SSH server and that it accepts this client.',
    cause: err,
  });
}
