// One authenticated, host-key-verified SSH connection to a node, with exec, SFTP and tunnels.
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
import type { Client, ClientChannel, ConnectConfig, ServerHostKeyAlgorithm, SFTPWrapper } from 'ssh2';
import { HoldfastError } from '../errors';
import { formatLimit, limit, limitError } from '../limits';
import { authFailedError, authHandler, nativeLogin, newAuthState, planAuth, type AuthPlan, type AuthState, type AuthTarget } from './auth';
import { addr, closedBeforeLoginError, connectionError, deadlineError, seconds } from './errors';
import type { AcceptNewHostKey } from './hostKey';
import { hostKeyAlgorithmsFor } from './hostKeyAlgorithms';
import { hostVerifier, newHostKeyState, type HostKeyState } from './hostKeyCheck';
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
type Phase = 'connect' | 'handshake' | 'auth' | 'ready' | 'closed';

/** What connectSsh's steps share: the client and its socket, and where the connection stands. */
interface Link {
  readonly target: SshTarget;
  readonly where: string;
  readonly client: Client;
  readonly sock: Duplex;
  readonly auth: AuthPlan;
  readonly authState: AuthState;
  readonly hostKey: HostKeyState;
  phase: Phase;
  lastError: Error | undefined;
  agentError: Error | null;
  /** The onClose listeners, called once a ready connection closes. */
  readonly closeCbs: Set<(err?: Error) => void>;
}

/** One connection attempt under one deadline: settled once, by the first failure or by 'ready'. */
interface Attempt {
  readonly settled: boolean;
  fail(err: HoldfastError): void;
  succeed(): void;
  /** Runs a question to a person with the deadline paused. */
  asking<T>(fn: () => Promise<T>): Promise<T>;
}

// The steps, in order: check the target and plan the login (before any socket opens, so a bad
// key file fails without touching the network) → open the socket → handshake (host key, then
// authentication, under one deadline) → the connection's exec, SFTP, tunnels and close.
export async function connectSsh(target: SshTarget): Promise<SshConnection> {
  const { host, port, user } = target;
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535 || !user) {
    throw new HoldfastError('INVALID_INPUT', `Invalid SSH target ${user}@${host}:${port}.`);
  }
  const where = target.label ?? addr(host, port);
  const auth = await planAuth(target);
  log.debug('connecting', { where, user, auth: auth.describe, via: target.via?.where ?? null });
  // Offer the key types known_hosts records for this host first, as OpenSSH does.
  const hostKeyAlgorithms = await hostKeyAlgorithmsFor(target.knownHosts, host, port);
  const link = openLink(target, where, auth);
  return handshake(link, hostKeyAlgorithms, target.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
}

/** The client and its socket: a TCP connection of our own, or the jump host's channel. */
function openLink(target: SshTarget, where: string, auth: AuthPlan): Link {
  const link: Link = {
    target,
    where,
    client: new ssh2.Client(),
    sock: target.sock ?? openTcp(target.host, target.port),
    auth,
    authState: newAuthState(),
    hostKey: newHostKeyState(),
    phase: target.sock ? 'handshake' : 'connect',
    lastError: undefined,
    agentError: null,
    closeCbs: new Set(),
  };
  // Persistent: ssh2 may emit 'error' more than once (e.g. twice for one failed authentication),
  // and an 'error' without a listener would crash the process. Registered before the socket can
  // report anything, and before handshake's listener, so lastError is set when that one runs.
  link.client.on('error', (err: Error & { level?: string }) => {
    link.lastError = err;
    if (err.level === 'agent') link.agentError = err;
  });
  return link;
}

function openTcp(host: string, port: number): Duplex {
  const tcp = net.connect({ host, port });
  tcp.setNoDelay(true);
  return tcp;
}

/**
 * Host key, then authentication, under one deadline. The listeners are all in place before
 * client.connect(): ssh2 may report the first failure synchronously from the socket.
 */
function handshake(link: Link, hostKeyAlgorithms: ServerHostKeyAlgorithm[] | null, readyTimeoutMs: number): Promise<SshConnection> {
  const { client, target, where } = link;
  return new Promise<SshConnection>((resolve, reject) => {
    const attempt = startAttempt(link, readyTimeoutMs, reject);
    link.sock.once('connect', () => {
      if (link.phase === 'connect') link.phase = 'handshake';
    });
    client.on('error', (err: Error & { level?: string }) => onClientError(link, attempt, err));
    client.on('close', () => onClientClose(link, attempt));
    client.on('ready', () => {
      if (attempt.settled) return;
      attempt.succeed();
      link.phase = 'ready';
      log.debug('authenticated', { where, user: target.user, auth: link.auth.describe, hostKey: link.hostKey.fingerprint });
      resolve(makeConnection(link));
    });
    const config = connectConfig(link, hostKeyAlgorithms, attempt);
    // Never leave a keyboard-interactive round unanswered (ssh2 would wait until the deadline).
    client.on('keyboard-interactive', (_n, _i, _l, _p, finish) => finish([]));
    try {
      client.connect(config);
      if (target.whileHandshaking) setImmediate(target.whileHandshaking);
    } catch (err) {
      attempt.fail(new HoldfastError('AUTH_FAILED', `Could not start the SSH connection to ${where}: ${(err as Error).message}.`, { cause: err }));
    }
  });
}

/** The deadline of one attempt; a failure closes the socket and the client, once. */
function startAttempt(link: Link, readyTimeoutMs: number, reject: (err: HoldfastError) => void): Attempt {
  let settled = false;
  let deadline: NodeJS.Timeout | undefined;
  const arm = () => {
    deadline = setTimeout(() => attempt.fail(deadlineError(link.phase === 'connect' || link.phase === 'handshake' ? link.phase : 'auth', link.where, link.target.user, readyTimeoutMs)), readyTimeoutMs);
    deadline.unref?.();
  };
  const attempt: Attempt = {
    get settled() {
      return settled;
    },
    fail(err) {
      if (settled) return;
      settled = true;
      log.debug('connection failed', { where: link.where, user: link.target.user, phase: link.phase, err });
      clearTimeout(deadline);
      link.sock.destroy();
      link.client.end();
      reject(err);
    },
    succeed() {
      settled = true;
      clearTimeout(deadline);
    },
    // While a person types a secret the clock stops; it starts afresh once they answered.
    async asking<T>(fn: () => Promise<T>): Promise<T> {
      clearTimeout(deadline);
      deadline = undefined;
      try {
        return await fn();
      } finally {
        if (!settled) arm();
      }
    },
  };
  arm();
  return attempt;
}

/** A failure before login: the host key's verdict first, then authentication's, then the network's. */
function onClientError(link: Link, attempt: Attempt, err: Error & { level?: string }): void {
  if (attempt.settled) return;
  if (link.hostKey.error) return attempt.fail(link.hostKey.error);
  if (err.level === 'agent') return; // ssh2 goes on; reported with the auth failure if any
  const { user } = link.target;
  if (err.level === 'client-authentication') return attempt.fail(link.authState.cancelled ?? authFailedError(user, link.where, link.auth, link.authState, link.agentError, err));
  return attempt.fail(connectionError(err, link.where, Boolean(link.target.sock)));
}

/** Closed: before login a failure (why, if known), after it the onClose listeners are called. */
function onClientClose(link: Link, attempt: Attempt): void {
  const wasReady = link.phase === 'ready';
  link.phase = 'closed';
  if (wasReady) log.debug('connection closed', { where: link.where, ...(link.lastError ? { err: link.lastError } : {}) });
  // A jump chain goes down together: this hop's channel is gone, so is its reason to exist.
  if (link.target.via) void link.target.via.close();
  if (!attempt.settled) {
    if (link.hostKey.error) return attempt.fail(link.hostKey.error);
    if (link.authState.cancelled) return attempt.fail(link.authState.cancelled);
    return attempt.fail(closedBeforeLoginError(link.where));
  }
  if (!wasReady) return;
  const cbs = [...link.closeCbs];
  link.closeCbs.clear();
  for (const cb of cbs) {
    try {
      cb(link.lastError);
    } catch (err) {
      // a listener's failure must not break the others
      log.debug('close listener failed', { where: link.where, err });
    }
  }
}

/** ssh2's settings: our socket, our deadline, the host key check and the login plan. */
function connectConfig(link: Link, hostKeyAlgorithms: ServerHostKeyAlgorithm[] | null, attempt: Attempt): ConnectConfig {
  const { target, where } = link;
  const asking = <T>(fn: () => Promise<T>) => attempt.asking(fn);
  return {
    sock: link.sock,
    username: target.user,
    readyTimeout: 0, // our own deadline (startAttempt) covers connect + handshake + auth
    keepaliveInterval: KEEPALIVE_INTERVAL_MS,
    keepaliveCountMax: KEEPALIVE_COUNT_MAX,
    tryKeyboard: false,
    ...(hostKeyAlgorithms ? { algorithms: { serverHostKey: hostKeyAlgorithms } } : {}),
    hostVerifier: hostVerifier({
      knownHosts: target.knownHosts,
      host: target.host,
      port: target.port,
      acceptNewHostKey: target.acceptNewHostKey,
      where,
      state: link.hostKey,
      asking,
      onPresented: () => {
        if (link.phase === 'handshake' || link.phase === 'connect') link.phase = 'handshake';
      },
      onVerified: () => {
        if (link.phase === 'handshake') link.phase = 'auth';
      },
    }),
    authHandler: authHandler(target, link.auth, link.authState, asking),
  };
}

const notConnected = (where: string, err?: unknown) =>
  new HoldfastError('UNREACHABLE', `The SSH connection to ${where} is closed.`, {
    hint: 'Reconnect to the node.',
    ...(err === undefined ? {} : { cause: err }),
  });

/** Why the server would not start argv: the connection is gone, or it refused. */
const execError = (link: Link, argv: string[], err: Error) =>
  link.phase === 'closed' || /No response from server/.test(err.message)
    ? notConnected(link.where, err)
    : new HoldfastError('REFUSED', `${link.where} refused to run ${argv[0]}: ${err.message.replace(/^\(SSH\) /, '')}.`, { cause: err });

/** A request on the client that answers through a callback, failing at once when the connection is closed. */
function request<T>(link: Link, start: (resolve: (v: T) => void, reject: (err: unknown) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (link.phase === 'closed') return reject(notConnected(link.where));
    try {
      start(resolve, reject);
    } catch (err) {
      reject(notConnected(link.where, err));
    }
  });
}

function makeConnection(link: Link): SshConnection {
  const { client, where, target } = link;
  const via = target.via;
  const tunnels = new Set<Tunnel>();
  const isClosed = () => link.phase === 'closed';
  const sftp = sftpOpener(link);
  return {
    client,
    where,
    via,
    hostKeyFingerprint: link.hostKey.fingerprint!,
    hostKey: link.hostKey.keyBlob!,
    login: { host: target.host, port: target.port, user: target.user },
    nativeAuth: nativeLogin(link.auth, link.authState),
    get closed() {
      return isClosed();
    },
    // The command is quoted first: arguments it cannot quote throw INVALID_INPUT, not a rejection.
    exec(argv, opts = {}) {
      const command = shellQuote(argv);
      return request<ExecResult>(link, (resolve, reject) => client.exec(command, (err, ch) => (err ? reject(execError(link, argv, err)) : collectExec(link, argv, opts, ch, resolve, reject))));
    },
    spawn(argv) {
      const command = shellQuote(argv);
      return request<ClientChannel>(link, (resolve, reject) => client.exec(command, (err, ch) => (err ? reject(execError(link, argv, err)) : resolve(ch))));
    },
    sftp,
    async openTunnel(remoteSocketPath, opts) {
      if (isClosed()) throw notConnected(where);
      const tunnel = await openTunnelOn(client, remoteSocketPath, opts);
      if (isClosed()) {
        await tunnel.close();
        throw notConnected(where);
      }
      tunnels.add(tunnel);
      return tunnel;
    },
    forwardOut: (toHost, toPort) => forwardOut(link, toHost, toPort),
    onClose(cb) {
      if (isClosed()) {
        queueMicrotask(() => cb(link.lastError));
        return () => {};
      }
      link.closeCbs.add(cb);
      return () => void link.closeCbs.delete(cb);
    },
    async close() {
      await Promise.all([...tunnels].map((t) => t.close()));
      tunnels.clear();
      if (!isClosed()) await endClient(link);
      await via?.close();
    },
  };
}

/** Ends the client and waits for its close (at most 2 s, then the socket is destroyed). */
function endClient(link: Link): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      link.sock.destroy();
      resolve();
    }, 2000);
    link.client.once('close', () => {
      clearTimeout(t);
      resolve();
    });
    link.client.end();
  });
}

/**
 * exec's channel: stdout and stderr buffered up to their limit, the exit status, a timeout. Past
 * the limit or the timeout the command is killed and the promise rejected at once, without
 * waiting for the server's CHANNEL_CLOSE (it only comes once the process is gone).
 */
function collectExec(link: Link, argv: string[], opts: ExecOptions, ch: ClientChannel, resolve: (r: ExecResult) => void, reject: (err: unknown) => void): void {
  const { where } = link;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
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
    reject(limitError(outputLimit, `${program} on ${where} printed more than ${formatLimit(outputLimit)} on ${which}, so it was killed`, 'REFUSED', 'A working node prints a line or two here: check the program on the node.'));
  };
  if (timeoutMs > 0) {
    timer = setTimeout(() => {
      timedOut = true;
      killChannel(ch);
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
    if (code === null && signal === undefined && link.phase === 'closed') return reject(notConnected(where));
    const result: ExecResult = { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') };
    if (signal !== undefined) result.signal = signal;
    resolve(result);
  });
  if (opts.stdin !== undefined) ch.end(opts.stdin);
  else ch.end();
}

/** sftp(): one SFTP channel per connection, opened on first use and again once it closed. */
function sftpOpener(link: Link): () => Promise<SFTPWrapper> {
  const { client, where } = link;
  let sftpPromise: Promise<SFTPWrapper> | null = null;
  client.on('close', () => {
    sftpPromise = null;
  });
  const closedError = () =>
    link.phase === 'closed'
      ? notConnected(where)
      : new HoldfastError('UNREACHABLE', `The SFTP channel to ${where} closed (the node's sftp-server ended).`, { hint: 'Run it again: a new channel is opened.' });
  return () => {
    if (sftpPromise) return sftpPromise;
    const p = request<SFTPWrapper>(link, (resolve, reject) =>
      client.sftp((err, sftp) => {
        if (err) {
          return reject(
            link.phase === 'closed'
              ? notConnected(where, err)
              : new HoldfastError('REFUSED', `${where} refused the SFTP subsystem: ${err.message}.`, { hint: 'Enable "Subsystem sftp" in the node\'s sshd_config.', cause: err }),
          );
        }
        sftp.on('close', () => {
          if (sftpPromise === p) sftpPromise = null;
        });
        // A request made on it once it ended fails at once instead of never (sftpGuard.ts).
        resolve(settlingSftp(sftp, closedError));
      }),
    );
    sftpPromise = p;
    p.catch((err: unknown) => {
      log.debug('SFTP subsystem not opened (the caller gets the error)', { where, err });
      if (sftpPromise === p) sftpPromise = null;
    });
    return p;
  };
}

/** A direct-tcpip channel from the server to host:port (the next hop of a jump chain). */
function forwardOut(link: Link, toHost: string, toPort: number): Promise<ClientChannel> {
  const { where } = link;
  return request<ClientChannel>(link, (resolve, reject) =>
    link.client.forwardOut('127.0.0.1', 0, toHost, toPort, (err, ch) => {
      if (!err) return resolve(ch);
      reject(
        link.phase === 'closed'
          ? notConnected(where, err)
          : new HoldfastError('UNREACHABLE', `${where} could not open a connection to ${addr(toHost, toPort)}: ${err.message.replace(/^\(SSH\) /, '')}.`, {
              hint: `Check that ${addr(toHost, toPort)} is reachable from ${where} and that its sshd allows TCP forwarding (AllowTcpForwarding).`,
              cause: err,
            }),
      );
    }),
  );
}
