// A local unix socket that reaches a unix socket on the node, through one SSH connection.
//
// grpc-js cannot run over a caller-supplied stream, so it dials `unix:<localPath>`: a net.Server
// in a fresh 0700 directory (the directory, not the socket's mode, keeps other local users out).
// Each accepted connection gets its own SSH channel: `direct-streamlocal@openssh.com`
// (openssh_forwardOutStreamLocal) when the server allows it, else an exec channel running
// `socat - UNIX-CONNECT:<socket>` (optionally under `sudo -n`, for a root-only socket and a
// non-root SSH user). The choice is made once, when the tunnel opens, by a probe.
import { promises as fsp, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { HoldfastError } from '../errors';
import { shellQuote } from './quote';

export type TunnelMode = 'streamlocal' | 'exec';

export interface Tunnel {
  /** Unix socket path; grpc dials it as `unix:<localPath>`. */
  readonly localPath: string;
  /** How connections reach the remote socket. */
  readonly mode: TunnelMode;
  /** Connections currently piped. */
  readonly activeConnections: number;
  /** True once close() ran or the SSH connection went away. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export interface TunnelOptions {
  /** auto (default): streamlocal, falling back to exec when the server refuses the channel. */
  mode?: 'auto' | TunnelMode;
  /** Run the exec bridge as `sudo -n socat …` (implies exec mode). */
  sudo?: boolean;
}

// socat parses its address argument itself (`,` starts options, `:` separates fields, quotes
// and `!!` mean things), so the exec bridge only takes plain absolute paths.
const SOCAT_SAFE_PATH = /^\/[A-Za-z0-9_.@+/-]+$/;

function bridgeArgv(remoteSocketPath: string, sudo: boolean): string[] {
  const argv = ['socat', '-', `UNIX-CONNECT:${remoteSocketPath}`];
  return sudo ? ['sudo', '-n', ...argv] : argv;
}

/** Exit codes of the exec-mode probe script. */
const PROBE_NO_SOCAT = 65;
const PROBE_NO_SOCKET = 66;

// Socket directories of open tunnels, removed synchronously if the process exits without
// closing them (a CLI calling process.exit, for instance).
const liveDirs = new Set<string>();
let exitHookInstalled = false;
function trackDir(dir: string): void {
  liveDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const d of liveDirs) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  });
}

async function makeSocketDir(): Promise<string> {
  // Prefer os.tmpdir(); fall back to /tmp if it would make the socket path too long
  // (Node silently truncates unix socket paths beyond 107 bytes).
  let base = os.tmpdir();
  if (Buffer.byteLength(path.join(base, 'hf-XXXXXX', 'grpc.sock')) >= 100 && process.platform !== 'win32') base = '/tmp';
  const dir = await fsp.mkdtemp(path.join(base, 'hf-'));
  await fsp.chmod(dir, 0o700);
  return dir;
}

function openStreamLocal(client: Client, remoteSocketPath: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      client.openssh_forwardOutStreamLocal(remoteSocketPath, (err, ch) => (err ? reject(err) : resolve(ch)));
    } catch (err) {
      reject(err); // "Not connected" is thrown synchronously on a closed client
    }
  });
}

function openExec(client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      client.exec(command, (err, ch) => (err ? reject(err) : resolve(ch)));
    } catch (err) {
      reject(err);
    }
  });
}

function notConnected(err: unknown): HoldfastError {
  return new HoldfastError('UNREACHABLE', 'The SSH connection closed before the tunnel could open.', { cause: err });
}

/** Run the probe script for exec mode: is socat there, is the socket there? */
async function probeExec(client: Client, remoteSocketPath: string, sudo: boolean): Promise<void> {
  const script =
    `command -v socat >/dev/null 2>&1 || exit ${PROBE_NO_SOCAT}; ` + `test -S "$1" || exit ${PROBE_NO_SOCKET}`;
  const argv = [...(sudo ? ['sudo', '-n'] : []), 'sh', '-c', script, 'holdfast-probe', remoteSocketPath];
  let ch: ClientChannel;
  try {
    ch = await openExec(client, shellQuote(argv));
  } catch (err) {
    throw notConnected(err);
  }
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    let code: number | null = null;
    let stderr = '';
    ch.on('exit', (c: number | null) => (code = c));
    ch.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    ch.on('data', () => {});
    ch.on('close', () => resolve({ code, stderr }));
    ch.end();
  });
  if (code === 0) return;
  if (code === PROBE_NO_SOCAT) {
    throw new HoldfastError('CONTAINERD_UNAVAILABLE', 'The node does not allow socket forwarding and has no socat to bridge to containerd.', {
      hint: 'Install socat on the node, or set AllowStreamLocalForwarding yes in its sshd_config.',
    });
  }
  if (code === PROBE_NO_SOCKET) {
    throw new HoldfastError('CONTAINERD_UNAVAILABLE', `There is no unix socket at ${remoteSocketPath} on the node.`, {
      hint: 'Check that k3s (containerd) is running on the node and the socket path is right.',
    });
  }
  const detail = stderr.trim().split('\n').pop() ?? '';
  throw new HoldfastError(
    'CONTAINERD_UNAVAILABLE',
    `Could not reach ${remoteSocketPath} on the node (probe exited with ${code ?? 'a signal'}${detail ? `: ${detail}` : ''}).`,
    { hint: sudo ? 'Check that the SSH user may run sudo without a password (sudo -n).' : 'Check the socket path and the SSH user\'s permissions on it.' },
  );
}

// sshd turns on TCP_NODELAY for a connection only when its first session (exec, shell or
// subsystem) starts (OpenSSH's ssh_packet_set_interactive); direct-streamlocal channels never
// trigger it. Measured on OpenSSH 9.2: a server answering in several small writes (as gRPC
// servers do: headers, data, trailers) took 6-18 ms per round trip over a streamlocal-only
// connection (Nagle on sshd's side meets our delayed ACK) and 0.4 ms once one `true` had been
// exec'd on the same connection. So run one trivial session per connection, best effort.
const primed = new WeakSet<Client>();
async function primeServerNoDelay(client: Client): Promise<void> {
  if (primed.has(client)) return;
  primed.add(client);
  try {
    const ch = await openExec(client, shellQuote(['true']));
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        ch.destroy();
        resolve();
      }, 3000);
      ch.on('close', () => {
        clearTimeout(t);
        resolve();
      });
      ch.on('error', () => {});
      ch.resume();
      ch.stderr.resume();
      ch.end();
    });
  } catch {
    // e.g. a forced command or no exec allowed: the tunnel still works, only slower
  }
}

/**
 * Open a tunnel to `remoteSocketPath` over an authenticated ssh2 Client. Resolves once the mode is
 * known and the remote socket answered (streamlocal) or exists (exec); rejects with a HoldfastError.
 */
export async function openTunnel(client: Client, remoteSocketPath: string, opts: TunnelOptions = {}): Promise<Tunnel> {
  if (!remoteSocketPath.startsWith('/') || remoteSocketPath.includes('\0')) {
    throw new HoldfastError('INVALID_INPUT', `The remote socket path must be absolute, got "${remoteSocketPath}".`);
  }
  const sudo = opts.sudo === true;
  let mode: TunnelMode;
  const wanted = sudo ? 'exec' : (opts.mode ?? 'auto');
  if (wanted === 'exec') {
    mode = 'exec';
  } else {
    // Probe streamlocal with one real channel: it tells whether forwarding is allowed and whether
    // something listens on the socket.
    try {
      const ch = await openStreamLocal(client, remoteSocketPath);
      ch.destroy();
      mode = 'streamlocal';
      await primeServerNoDelay(client);
    } catch (err) {
      if (!(err instanceof Error) || !/Channel open failure/.test(err.message)) throw notConnected(err);
      if (wanted === 'streamlocal') {
        throw new HoldfastError('CONTAINERD_UNAVAILABLE', `The node refused to forward ${remoteSocketPath}: ${err.message.replace(/^\(SSH\) /, '')}.`, {
          hint: 'The socket may be missing, or sshd forbids it (AllowStreamLocalForwarding).',
          cause: err,
        });
      }
      mode = 'exec';
    }
  }
  if (mode === 'exec') {
    if (!SOCAT_SAFE_PATH.test(remoteSocketPath)) {
      throw new HoldfastError('INVALID_INPUT', `The socket path "${remoteSocketPath}" cannot be bridged with socat (only letters, digits and _ . @ + / - are allowed).`);
    }
    await probeExec(client, remoteSocketPath, sudo);
  }
  const bridgeCommand = shellQuote(bridgeArgv(remoteSocketPath, sudo));

  const dir = await makeSocketDir();
  trackDir(dir);
  const localPath = path.join(dir, 'grpc.sock');
  const pairs = new Set<{ local: net.Socket; remote?: Duplex }>();
  let closed = false;
  let closing: Promise<void> | null = null;

  const server = net.createServer({ pauseOnConnect: true }, (local) => {
    const pair: { local: net.Socket; remote?: Duplex } = { local };
    if (closed) {
      local.destroy();
      return;
    }
    pairs.add(pair);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      pairs.delete(pair);
      local.destroy();
      pair.remote?.destroy();
    };
    local.on('error', finish);
    local.on('close', finish);

    const opening = mode === 'streamlocal' ? openStreamLocal(client, remoteSocketPath) : openExec(client, bridgeCommand);
    opening.then(
      (remote) => {
        if (done) {
          remote.destroy();
          return;
        }
        pair.remote = remote;
        remote.on('error', finish);
        remote.on('close', finish);
        if (mode === 'exec') {
          // socat's complaints go to stderr; drain it so the channel window never stalls.
          (remote as ClientChannel).stderr.resume();
          (remote as ClientChannel).on('exit', () => remote.end());
        }
        local.pipe(remote);
        remote.pipe(local);
        local.resume();
      },
      () => finish(),
    );
  });

  const onClientGone = () => void close();

  async function close(): Promise<void> {
    if (closing) return closing;
    closed = true;
    closing = (async () => {
      client.removeListener('close', onClientGone);
      for (const p of [...pairs]) {
        p.local.destroy();
        p.remote?.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fsp.rm(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    })();
    return closing;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(localPath, () => {
      server.removeListener('error', reject);
      resolve();
    });
  }).catch(async (err) => {
    await fsp.rm(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    throw new HoldfastError('INTERNAL', `Could not listen on the local socket ${localPath}: ${(err as Error).message}.`, { cause: err });
  });
  server.on('error', () => void close());
  // When the SSH connection drops, drop every local socket at once so grpc reports UNAVAILABLE
  // immediately, and stop listening (new dials fail fast with ENOENT/ECONNREFUSED).
  client.on('close', onClientGone);

  return {
    localPath,
    get mode() {
      return mode;
    },
    get activeConnections() {
      return pairs.size;
    },
    get closed() {
      return closed;
    },
    close,
  };
}
