// One authenticated, host-key-verified SSH connection to a node, with exec, SFTP and tunnels.
//
// - The host key is always checked by verifyHostKey (ssh2 accepts ANY key without hostVerifier).
// - We open the TCP socket ourselves (net.connect + setNoDelay: ssh2 never sets TCP_NODELAY).
// - One deadline (default 10 s) covers TCP connect, SSH handshake and authentication.
// - Every failure becomes a HoldfastError with one sentence and a hint. Secrets never appear in
//   messages: no passphrases, no key material, only file names and fingerprints.
// - How we log in is auth.ts, how failures are worded errors.ts, the host-key check hostKeyCheck.ts;
//   this file is the connection itself: its deadline, its phases, exec/SFTP/tunnels and closing.
import net from 'node:net';
import type { Duplex } from 'node:stream';
// ssh2 is CommonJS: under Node's ESM loader only some of its exports are detectable as named
// exports (`utils` is not), so take everything from the default export.
import ssh2 from 'ssh2';
import type { Client, ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';
import { HoldfastError } from '../errors';
import { formatLimit, limit, limitError } from '../limits';
import { authFailedError, authHandler, nativeLogin, newAuthState, planAuth, type AuthTarget } from './auth';
import { addr, closedBeforeLoginError, connectionError, deadlineError, seconds } from './errors';
import type { AcceptNewHostKey } from './hostKey';
import { hostKeyAlgorithmsFor } from './hostKeyAlgorithms';
import { hostVerifier, newHostKeyState } from './hostKeyCheck';
import { shellQuote } from './quote';
import { settlingSftp } from './sftpGuard';
import { openTunnel as openTunnelOn, type Tunnel, type TunnelOptions } from './tunnel';
import { logger } from '../log';

const log = logger('ssh');

export interface SshTarget extends AuthTarget {
  /** known_hosts file to verify (and, on accepted first contact, record) the host key. */
  knownHosts: string;
  /** Whether to record an unknown host's key: the fingerprint(s) the user checked, or ask (hostKey.ts). */
  acceptNewHostKey?: AcceptNewHostKey;
  /** Bound on TCP connect + handshake + authentication, in ms. Default 10 000. */
  readyTimeoutMs?: number;
  /**
   * An already open stream to the SSH server instead of a TCP connection: a jump host's
   * forwardOut() channel. `via` is the connection it came from; it is closed with this one.
   */
  sock?: Duplex;
  via?: SshConnection;
  /** How messages name this server (default host:port), e.g. "jump host bastion (10.0.0.1:22)". */
  label?: string;
  /**
   * Work the caller has to do anyway and that needs no connection (e.g. loading the containerd
   * definitions): started once the connection is under way, so it runs while the handshake
   * waits on the server instead of after it.
   */
  whileHandshaking?: () => void;
}

export interface ExecOptions {
  stdin?: Buffer | string;
  /** Default 120 000 ms; 0 disables. On expiry the command is signalled and TIMEOUT is thrown. */
  timeoutMs?: number;
  /**
   * The bound on what is buffered of stdout, and separately of stderr (limits.ts; default
   * remote.commandOutputBytes). A node printing more has the command killed and REFUSED thrown:
   * a broken or hostile node must not fill the laptop's memory. Use spawn() to stream instead.
   */
  outputLimit?: 'remote.commandOutputBytes' | 'remote.listingOutputBytes' | 'remote.workloadsBytes';
}

export interface ExecResult {
  /** Exit status; null when the command died from a signal. */
  code: number | null;
  /** Signal name (e.g. "KILL") when the command died from one. */
  signal?: string;
  stdout: string;
  stderr: string;
}

export interface SshConnection {
  readonly client: Client;
  /** host:port as messages show it. */
  readonly where: string;
  /** The jump host connection this one runs through (its forwardOut channel is our socket). */
  readonly via: SshConnection | undefined;
  /** SHA256:… fingerprint of the verified host key. */
  readonly hostKeyFingerprint: string;
  /** The verified host key (SSH wire format), for a native OpenSSH client on the same node (upload/openssh.ts). */
  readonly hostKey: Buffer;
  /** host, port and user this connection logged in to (after ssh_config), for that native client. */
  readonly login: { host: string; port: number; user: string };
  /**
   * How a native OpenSSH client could log in the same way without asking anyone: the identity
   * file (only an unencrypted one: the passphrase stays in this process), or the agent; null for
   * passwords, keyboard-interactive and encrypted keys.
   */
  readonly nativeAuth: { identity: string } | { agent: string } | null;
  /** True once the connection closed (by close() or by the network). */
  readonly closed: boolean;
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /**
   * Starts argv (shell-quoted) and hands back its channel: stdout as the readable side, stderr as
   * `.stderr`, 'exit' with the status. For output too large to buffer (e.g. `sudo -n cat -- FILE`).
   */
  spawn(argv: string[]): Promise<ClientChannel>;
  sftp(): Promise<SFTPWrapper>;
  openTunnel(remoteSocketPath: string, opts?: TunnelOptions): Promise<Tunnel>;
  /** A direct-tcpip channel to host:port from the server (for the next hop of a jump chain). */
  forwardOut(host: string, port: number): Promise<ClientChannel>;
  /** Called once when the connection closes; err is the last error seen, if any. Returns an unsubscribe. */
  onClose(cb: (err?: Error) => void): () => void;
  close(): Promise<void>;
}

export const DEFAULT_READY_TIMEOUT_MS = 10_000;
export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;
const KEEPALIVE_INTERVAL_MS = 15_000;
const KEEPALIVE_COUNT_MAX = 3;

/**
 * Best effort: signal KILL to an exec channel's process, then close the channel.
 * ssh2's Channel#signal() is a silent no-op once our side sent EOF (which exec does right away,
 * so commands reading stdin do not hang), hence the guarded call into its protocol object.
 * sshd delivers it as killpg() to the session's process group (OpenSSH >= 7.9).
 */
function killChannel(ch: ClientChannel): void {
  try {
    const internals = ch as unknown as {
      outgoing?: { id?: number; state?: string };
      _client?: { _protocol?: { signal?: (id: number, sig: string) => void } };
    };
    const id = internals.outgoing?.id;
    const proto = internals._client?._protocol;
    if (typeof id === 'number' && internals.outgoing?.state !== 'closed' && typeof proto?.signal === 'function') {
      proto.signal(id, 'KILL');
    } else {
      ch.signal('KILL');
    }
  } catch (err) {
    // the channel may already be gone
    log.debug('KILL not signalled; channel gone', { err });
  }
  try {
    ch.close();
  } catch (err) {
    // idem
    log.debug('channel not closed; already gone', { err });
  }
}

export { killChannel };

export async function connectSsh(target: SshTarget): Promise<SshConnection> {
  const { host, port, user } = target;
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535 || !user) {
    throw new HoldfastError('INVALID_INPUT', `Invalid SSH target ${user}@${host}:${port}.`);
  }
  const where = target.label ?? addr(host, port);
  const readyTimeoutMs = target.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const auth = await planAuth(target);
  log.debug('connecting', { where, user, auth: auth.describe, via: target.via?.where ?? null });
  // Offer the key types known_hosts records for this host first, as OpenSSH does.
  const hostKeyAlgorithms = await hostKeyAlgorithmsFor(target.knownHosts, host, port);

  const client: Client = new ssh2.Client();
  const hostKey = newHostKeyState();
  const authState = newAuthState();
  let agentError: Error | null = null;
  let lastError: Error | undefined;
  let phase: 'connect' | 'handshake' | 'auth' | 'ready' | 'closed' = target.sock ? 'handshake' : 'connect';
  const closeCbs = new Set<(err?: Error) => void>();

  // Persistent: ssh2 may emit 'error' more than once (e.g. twice for one failed authentication),
  // and an 'error' without a listener would crash the process.
  client.on('error', (err: Error & { level?: string }) => {
    lastError = err;
    if (err.level === 'agent') agentError = err;
  });

  let sock: Duplex;
  if (target.sock) {
    sock = target.sock;
  } else {
    const tcp = net.connect({ host, port });
    tcp.setNoDelay(true);
    sock = tcp;
  }

  const connection = await new Promise<SshConnection>((resolve, reject) => {
    let settled = false;
    const fail = (err: HoldfastError) => {
      if (settled) return;
      settled = true;
      log.debug('connection failed', { where, user, phase, err });
      clearTimeout(deadline);
      sock.destroy();
      client.end();
      reject(err);
    };

    const onDeadline = () => {
      fail(deadlineError(phase === 'connect' || phase === 'handshake' ? phase : 'auth', where, user, readyTimeoutMs));
    };
    let deadline: NodeJS.Timeout | undefined = setTimeout(onDeadline, readyTimeoutMs);
    deadline.unref?.();
    // While a person types a secret the clock stops; it starts afresh once they answered.
    const asking = async <T>(fn: () => Promise<T>): Promise<T> => {
      clearTimeout(deadline);
      deadline = undefined;
      try {
        return await fn();
      } finally {
        if (!settled) {
          deadline = setTimeout(onDeadline, readyTimeoutMs);
          deadline.unref?.();
        }
      }
    };

    sock.once('connect', () => {
      if (phase === 'connect') phase = 'handshake';
    });

    client.on('error', (err: Error & { level?: string }) => {
      if (settled) return;
      if (hostKey.error) return fail(hostKey.error);
      if (err.level === 'agent') return; // ssh2 goes on; reported with the auth failure if any
      if (err.level === 'client-authentication') return fail(authState.cancelled ?? authFailedError(user, where, auth, authState, agentError, err));
      return fail(connectionError(err, where, Boolean(target.sock)));
    });

    client.on('close', () => {
      const wasReady = phase === 'ready';
      phase = 'closed';
      if (wasReady) log.debug('connection closed', { where, ...(lastError ? { err: lastError } : {}) });
      // A jump chain goes down together: this hop's channel is gone, so is its reason to exist.
      if (target.via) void target.via.close();
      if (!settled) {
        if (hostKey.error) return fail(hostKey.error);
        if (authState.cancelled) return fail(authState.cancelled);
        return fail(closedBeforeLoginError(where));
      }
      if (wasReady) {
        const cbs = [...closeCbs];
        closeCbs.clear();
        for (const cb of cbs) {
          try {
            cb(lastError);
          } catch (err) {
            // a listener's failure must not break the others
            log.debug('close listener failed', { where, err });
          }
        }
      }
    });

    client.on('ready', () => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      phase = 'ready';
      log.debug('authenticated', { where, user, auth: auth.describe, hostKey: hostKey.fingerprint });
      resolve(makeConnection());
    });

    const config: ConnectConfig = {
      sock,
      username: user,
      readyTimeout: 0, // our own deadline above covers connect + handshake + auth
      keepaliveInterval: KEEPALIVE_INTERVAL_MS,
      keepaliveCountMax: KEEPALIVE_COUNT_MAX,
      tryKeyboard: false,
      ...(hostKeyAlgorithms ? { algorithms: { serverHostKey: hostKeyAlgorithms } } : {}),
      hostVerifier: hostVerifier({
        knownHosts: target.knownHosts,
        host,
        port,
        acceptNewHostKey: target.acceptNewHostKey,
        where,
        state: hostKey,
        asking,
        onPresented: () => {
          if (phase === 'handshake' || phase === 'connect') phase = 'handshake';
        },
        onVerified: () => {
          if (phase === 'handshake') phase = 'auth';
        },
      }),
      authHandler: authHandler(target, auth, authState, asking),
    };
    // Never leave a keyboard-interactive round unanswered (ssh2 would wait until the deadline).
    client.on('keyboard-interactive', (_n, _i, _l, _p, finish) => finish([]));
    try {
      client.connect(config);
      if (target.whileHandshaking) setImmediate(target.whileHandshaking);
    } catch (err) {
      fail(new HoldfastError('AUTH_FAILED', `Could not start the SSH connection to ${where}: ${(err as Error).message}.`, { cause: err }));
    }
  });

  return connection;

  function makeConnection(): SshConnection {
    const via = target.via;
    let sftpPromise: Promise<SFTPWrapper> | null = null;
    const tunnels = new Set<Tunnel>();
    const isClosed = () => phase === 'closed';

    const notConnected = (err?: unknown) =>
      new HoldfastError('UNREACHABLE', `The SSH connection to ${where} is closed.`, {
        hint: 'Reconnect to the node.',
        ...(err === undefined ? {} : { cause: err }),
      });

    client.on('close', () => {
      sftpPromise = null;
    });

    const conn: SshConnection = {
      client,
      where,
      via,
      hostKeyFingerprint: hostKey.fingerprint!,
      hostKey: hostKey.keyBlob!,
      login: { host, port, user },
      nativeAuth: nativeLogin(auth, authState),
      get closed() {
        return isClosed();
      },

      exec(argv, opts = {}) {
        const command = shellQuote(argv);
        const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
        return new Promise<ExecResult>((resolve, reject) => {
          if (isClosed()) return reject(notConnected());
          try {
            client.exec(command, (err, ch: ClientChannel) => {
              if (err) {
                return reject(
                  isClosed() || /No response from server/.test(err.message)
                    ? notConnected(err)
                    : new HoldfastError('REFUSED', `${where} refused to run ${argv[0]}: ${err.message.replace(/^\(SSH\) /, '')}.`, { cause: err }),
                );
              }
              const out: Buffer[] = [];
              const errOut: Buffer[] = [];
              let code: number | null = null;
              let signal: string | undefined;
              let timer: NodeJS.Timeout | undefined;
              let timedOut = false;
              const outputLimit = opts.outputLimit ?? 'remote.commandOutputBytes';
              const cap = limit(outputLimit);
              const seen = { stdout: 0, stderr: 0 };
              let overflowed = false;
              const buffer = (into: Buffer[], which: 'stdout' | 'stderr', d: Buffer): void => {
                if (overflowed || timedOut) return;
                seen[which] += d.length;
                if (seen[which] <= cap) {
                  into.push(d);
                  return;
                }
                overflowed = true;
                if (timer) clearTimeout(timer);
                killChannel(ch);
                out.length = 0;
                errOut.length = 0;
                const program = argv[0] === 'sudo' && argv[1] === '-n' ? `sudo -n ${argv[2] ?? ''}` : argv[0];
                reject(
                  limitError(outputLimit, `${program} on ${where} printed more than ${formatLimit(outputLimit)} on ${which}, so it was killed`, 'REFUSED', 'A working node prints a line or two here: check the program on the node.'),
                );
              };
              if (timeoutMs > 0) {
                timer = setTimeout(() => {
                  timedOut = true;
                  killChannel(ch);
                  // Do not wait for the server's CHANNEL_CLOSE: it only comes once the process is gone.
                  reject(
                    new HoldfastError('TIMEOUT', `${argv[0]} did not finish within ${seconds(timeoutMs)} on ${where}.`, {
                      hint: 'The command was signalled (KILL) and its channel closed; retry, or allow it more time.',
                    }),
                  );
                }, timeoutMs);
              }
              ch.on('data', (d: Buffer) => buffer(out, 'stdout', d));
              ch.stderr.on('data', (d: Buffer) => buffer(errOut, 'stderr', d));
              ch.on('exit', (c: number | null, sig?: string) => {
                code = typeof c === 'number' ? c : null;
                if (sig) signal = sig;
              });
              ch.on('error', (e: Error) => {
                /* surfaced through 'close' */
                log.debug('exec channel error (reported at close)', { where, command: argv[0], err: e });
              });
              ch.on('close', () => {
                if (timer) clearTimeout(timer);
                if (timedOut || overflowed) return;
                if (code === null && signal === undefined && isClosed()) return reject(notConnected());
                const result: ExecResult = {
                  code,
                  stdout: Buffer.concat(out).toString('utf8'),
                  stderr: Buffer.concat(errOut).toString('utf8'),
                };
                if (signal !== undefined) result.signal = signal;
                resolve(result);
              });
              if (opts.stdin !== undefined) ch.end(opts.stdin);
              else ch.end();
            });
          } catch (err) {
            reject(notConnected(err));
          }
        });
      },

      spawn(argv) {
        const command = shellQuote(argv);
        return new Promise<ClientChannel>((resolve, reject) => {
          if (isClosed()) return reject(notConnected());
          try {
            client.exec(command, (err, ch) => {
              if (err) {
                return reject(
                  isClosed() || /No response from server/.test(err.message)
                    ? notConnected(err)
                    : new HoldfastError('REFUSED', `${where} refused to run ${argv[0]}: ${err.message.replace(/^\(SSH\) /, '')}.`, { cause: err }),
                );
              }
              resolve(ch);
            });
          } catch (err) {
            reject(notConnected(err));
          }
        });
      },

      sftp() {
        if (sftpPromise) return sftpPromise;
        const p = new Promise<SFTPWrapper>((resolve, reject) => {
          if (isClosed()) return reject(notConnected());
          try {
            client.sftp((err, sftp) => {
              if (err) {
                return reject(
                  isClosed()
                    ? notConnected(err)
                    : new HoldfastError('REFUSED', `${where} refused the SFTP subsystem: ${err.message}.`, {
                        hint: 'Enable "Subsystem sftp" in the node\'s sshd_config.',
                        cause: err,
                      }),
                );
              }
              sftp.on('close', () => {
                if (sftpPromise === p) sftpPromise = null;
              });
              // A request made on it once it ended fails at once instead of never (sftpGuard.ts).
              resolve(
                settlingSftp(sftp, () =>
                  isClosed() ? notConnected() : new HoldfastError('UNREACHABLE', `The SFTP channel to ${where} closed (the node's sftp-server ended).`, { hint: 'Run it again: a new channel is opened.' }),
                ),
              );
            });
          } catch (err) {
            reject(notConnected(err));
          }
        });
        sftpPromise = p;
        p.catch((err: unknown) => {
          log.debug('SFTP subsystem not opened (the caller gets the error)', { where, err });
          if (sftpPromise === p) sftpPromise = null;
        });
        return p;
      },

      async openTunnel(remoteSocketPath, opts) {
        if (isClosed()) throw notConnected();
        const tunnel = await openTunnelOn(client, remoteSocketPath, opts);
        if (isClosed()) {
          await tunnel.close();
          throw notConnected();
        }
        tunnels.add(tunnel);
        return tunnel;
      },

      forwardOut(toHost, toPort) {
        return new Promise<ClientChannel>((resolve, reject) => {
          if (isClosed()) return reject(notConnected());
          try {
            client.forwardOut('127.0.0.1', 0, toHost, toPort, (err, ch) => {
              if (!err) return resolve(ch);
              reject(
                isClosed()
                  ? notConnected(err)
                  : new HoldfastError('UNREACHABLE', `${where} could not open a connection to ${addr(toHost, toPort)}: ${err.message.replace(/^\(SSH\) /, '')}.`, {
                      hint: `Check that ${addr(toHost, toPort)} is reachable from ${where} and that its sshd allows TCP forwarding (AllowTcpForwarding).`,
                      cause: err,
                    }),
              );
            });
          } catch (err) {
            reject(notConnected(err));
          }
        });
      },

      onClose(cb) {
        if (isClosed()) {
          queueMicrotask(() => cb(lastError));
          return () => {};
        }
        closeCbs.add(cb);
        return () => void closeCbs.delete(cb);
      },

      async close() {
        await Promise.all([...tunnels].map((t) => t.close()));
        tunnels.clear();
        if (isClosed()) {
          await via?.close();
          return;
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            sock.destroy();
            resolve();
          }, 2000);
          client.once('close', () => {
            clearTimeout(t);
            resolve();
          });
          client.end();
        });
        await via?.close();
      },
    };
    return conn;
  }
}
