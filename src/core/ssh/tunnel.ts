// A local unix socket that reaches a unix socket on the node, through one SSH connection.
// grpc-js cannot run over a caller-supplied stream, so it dials `unix:<localPath>`: a net.Server
// in a fresh 0700 directory (the directory, not the socket's mode, keeps other local users out).
// Each accepted connection gets its own SSH channel: `direct-streamlocal@openssh.com`
// (openssh_forwardOutStreamLocal) when the server allows it, else an exec channel running
// a stdio-to-socket bridge — `socat - UNIX-CONNECT:<socket>`, else a fixed python3 or perl
// program — optionally under `sudo -n`, for a root-only socket and a non-root SSH user. The choice
// is made once, when the tunnel opens, by one probe round trip.
import { promises as fsp, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { shellLine } from '../../shared/shellQuote';
import type { ClientChannel } from 'ssh2';
import { HoldfastError } from '../errors';
import { shellQuote } from './quote';
import { logger } from '../log';

const log = logger('tunnel');

export type TunnelMode = 'streamlocal' | 'exec';

/** The stdio-to-socket program an exec tunnel runs on the node. */
export type BridgeKind = 'socat' | 'python3' | 'perl';

export interface Tunnel {
  /** Unix socket path; grpc dials it as `unix:<localPath>`. */
  readonly localPath: string;
  /** How connections reach the remote socket. */
  readonly mode: TunnelMode;
  /** The bridge program of an exec tunnel (undefined for streamlocal). */
  readonly bridge: BridgeKind | undefined;
  /** Connections currently piped. */
  readonly activeConnections: number;
  /** True once close() ran or the SSH connection went away. */
  readonly closed: boolean;
  close(): Promise<void>;
}

/** The parts of an ssh2 channel the tunnel uses: a duplex with its stderr (and an 'exit' event). */
export type TunnelChannel = Duplex & Pick<ClientChannel, 'stderr'>;

/**
 * The parts of an ssh2 `Client` the tunnel uses; a real `Client` satisfies it (its callbacks hand
 * over a `ClientChannel`, which is a `TunnelChannel`).
 */
export interface TunnelClient {
  openssh_forwardOutStreamLocal(socketPath: string, callback: (err: Error | undefined, channel: TunnelChannel) => void): unknown;
  exec(command: string, callback: (err: Error | undefined, channel: TunnelChannel) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

export interface TunnelOptions {
  /** auto (default): streamlocal, falling back to exec when the server refuses the channel. */
  mode?: 'auto' | TunnelMode;
  /** Run the exec bridge under `sudo -n` (implies exec mode): a root-only socket, a non-root user. */
  sudo?: boolean;
  /** The SSH user, for the sudoers line an error suggests. */
  user?: string;
  /** The node's name, for messages. */
  node?: string;
  /**
   * false: the caller starts a session (exec) on the connection itself right away, which turns
   * sshd's TCP_NODELAY on as well (see primeServerNoDelay), so no extra `true` is run.
   */
  primeNoDelay?: boolean;
}

// socat parses its address argument itself (`,` starts options, `:` separates fields, quotes
// and `!!` mean things), so the socat bridge only takes plain absolute paths. The python3 and
// perl bridges get the path as an argv entry and take any path.
const SOCAT_SAFE_PATH = /^\/[A-Za-z0-9_.@+/-]+$/;

// Fallback bridges for nodes without socat: fixed programs, the socket path arrives as their
// first argument (never inside the program text). Both copy stdin to the socket and the socket
// to stdout until either side closes; a half-close from our side is passed on (SHUT_WR).
const PYTHON_BRIDGE = [
  'import os,socket,sys,threading',
  's=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM)',
  's.connect(sys.argv[1])',
  'def up():',
  '  while True:',
  '    d=os.read(0,65536)',
  '    if not d: break',
  '    s.sendall(d)',
  '  try: s.shutdown(socket.SHUT_WR)',
  '  except OSError: pass',
  'threading.Thread(target=up,daemon=True).start()',
  'while True:',
  '  d=s.recv(65536)',
  '  if not d: break',
  '  while d:',
  '    n=os.write(1,d)',
  '    d=d[n:]',
  'os._exit(0)',
].join('\n');

const PERL_BRIDGE = [
  'use strict; use IO::Socket::UNIX; use Socket;',
  'my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect $ARGV[0]: $!\\n";',
  'sub put { my ($fh, $b) = @_; my $o = 0; while ($o < length $b) { my $n = syswrite($fh, $b, length($b) - $o, $o); return 0 unless defined $n; $o += $n } 1 }',
  'my $pid = fork(); die "fork: $!\\n" unless defined $pid;',
  'if ($pid == 0) { my $b; while (sysread(STDIN, $b, 65536)) { last unless put($s, $b) } shutdown($s, 1); exit 0 }',
  'my $b; while (sysread($s, $b, 65536)) { last unless put(\\*STDOUT, $b) }',
  'kill "TERM", $pid; exit 0;',
].join('\n');

export function bridgeArgv(kind: BridgeKind, remoteSocketPath: string, sudo: boolean): string[] {
  const argv =
    kind === 'socat'
      ? ['socat', '-', `UNIX-CONNECT:${remoteSocketPath}`]
      : kind === 'python3'
        ? ['python3', '-c', PYTHON_BRIDGE, remoteSocketPath]
        : ['perl', '-e', PERL_BRIDGE, remoteSocketPath];
  return sudo ? ['sudo', '-n', ...argv] : argv;
}

/** Exit codes of the exec-mode probe script. */
const PROBE_NO_BRIDGE = 65;
const PROBE_NO_SOCKET = 66;
const PROBE_NO_SUDO = 67;
const PROBE_SUDO_REFUSED = 68;
/** The socket is there, but the (non-sudo) user may not open it: its mode is printed on stderr. */
const PROBE_NO_ACCESS = 69;
const PROBE_VERDICT = 'holdfast-probe-exit:';

/**
 * How the probe ended: its exit status, else the verdict line it printed (when sshd closed the
 * channel without the status), else null; and the bridges it found (code 0).
 */
export function probeOutcome(status: number | null, stdout: string): { code: number | null; found: string[] } {
  const lines = stdout.split('\n').map((l) => l.trim());
  const verdict = lines.find((l) => l.startsWith(PROBE_VERDICT));
  const code = status ?? (verdict !== undefined && /^\d+$/.test(verdict.slice(PROBE_VERDICT.length)) ? Number(verdict.slice(PROBE_VERDICT.length)) : null);
  const found = lines.filter((l) => l && !l.startsWith(PROBE_VERDICT)).join(' ').split(/\s+/).filter(Boolean);
  return { code, found };
}

/**
 * Why the probe never ran, when the login's shell refused it: sshd runs every command through
 * the user's login shell (`$SHELL -c`), and nologin prints "This account is currently not
 * available." (false prints nothing) and exits 1 without running it. The probe prints a verdict
 * on every path, so no verdict and that answer mean the script never started. sshd's "Could not
 * chdir to home directory" (a home that does not exist, as for system users) is only a warning,
 * never the cause (docs/k3s-facts.md, "SSH, the tunnel and uploads"). Null when the probe ran,
 * or its end says nothing of the kind.
 */
export function loginShellRefusal(status: number | null, stdout: string, stderr: string): { said: string | null; home: string | null } | null {
  if (stdout.includes(PROBE_VERDICT)) return null;
  const home = /Could not chdir to home directory ([^:\n]+)/.exec(stderr)?.[1] ?? null;
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('Could not chdir to home directory'));
  const said = lines.find((l) => /account is (currently )?not available/i.test(l)) ?? null;
  if (said !== null) return { said, home };
  // false, or another shell that refuses quietly: exit 1 and not a word.
  return status === 1 && lines.length === 0 ? { said: null, home } : null;
}

// One round trip finds out everything exec mode needs: is sudo there and does it work without a
// password, is the socket there (as the user that will open it), and which bridges run. Each
// check runs the real program (`socat -V`), so a program that is on PATH but broken or hidden
// does not count. Under sudo every check is its own `sudo -n`, so a sudoers file that allows
// only the needed commands works too. Fixed text: the socket path is $1, "sudo" or "" is $2.
export const BRIDGE_PROBE_SCRIPT = [
  // Each verdict is also printed: sshd sometimes closes the channel without its exit status
  // (seen here about once in 100 probes with four connections at once on a busy box).
  `end() { echo "${PROBE_VERDICT}$1"; exit "$1"; }`,
  'p=',
  'if [ "$2" = sudo ]; then',
  `  command -v sudo >/dev/null 2>&1 || end ${PROBE_NO_SUDO}`,
  '  p="sudo -n"',
  'fi',
  'err=$($p test -S "$1" 2>&1); rc=$?',
  'if [ "$rc" -ne 0 ]; then',
  `  if [ -n "$err" ]; then printf '%s\\n' "$err" >&2; end ${PROBE_SUDO_REFUSED}; fi`,
  `  end ${PROBE_NO_SOCKET}`,
  'fi',
  // connect(2) on a unix socket needs write permission on it: k3s's is srw-rw---- root:root.
  `if [ -z "$p" ] && ! [ -w "$1" ]; then ls -lL "$1" >&2; end ${PROBE_NO_ACCESS}; fi`,
  'found=',
  '$p socat -V >/dev/null 2>&1 && found="$found socat"',
  '$p python3 -c "import socket,threading" >/dev/null 2>&1 && found="$found python3"',
  '$p perl -MIO::Socket::UNIX -e 1 >/dev/null 2>&1 && found="$found perl"',
  `[ -n "$found" ] || end ${PROBE_NO_BRIDGE}`,
  'echo $found',
  `echo "${PROBE_VERDICT}0"`,
].join('\n');

/** The bridge to use: socat when it is there and can take the path, else python3, else perl. */
export function chooseBridge(found: readonly string[], remoteSocketPath: string): BridgeKind | null {
  if (found.includes('socat') && SOCAT_SAFE_PATH.test(remoteSocketPath)) return 'socat';
  if (found.includes('python3')) return 'python3';
  if (found.includes('perl')) return 'perl';
  return null;
}

export function sudoersHint(user: string | undefined): string {
  return `${user && /^[A-Za-z0-9._-]+$/.test(user) ? user : '<user>'} ALL=(root) NOPASSWD: ALL`;
}

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
      } catch (err) {
        // best effort
        log.debug('tunnel socket dir not removed at exit', { dir: d, err });
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

function openStreamLocal(client: TunnelClient, remoteSocketPath: string): Promise<TunnelChannel> {
  return new Promise((resolve, reject) => {
    try {
      client.openssh_forwardOutStreamLocal(remoteSocketPath, (err, ch) => (err ? reject(err) : resolve(ch)));
    } catch (err) {
      reject(err); // "Not connected" is thrown synchronously on a closed client
    }
  });
}

function openExec(client: TunnelClient, command: string): Promise<TunnelChannel> {
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

/** Who and what the exec-mode probe is about, for what its errors say. */
interface ProbeContext {
  remoteSocketPath: string;
  sudo: boolean;
  user: string | undefined;
  node: string | undefined;
}

/** Run the probe script for exec mode: sudo, the socket, the bridges — one round trip. */
async function probeExec(client: TunnelClient, p: ProbeContext): Promise<BridgeKind> {
  const argv = ['sh', '-c', BRIDGE_PROBE_SCRIPT, 'holdfast-probe', p.remoteSocketPath, p.sudo ? 'sudo' : ''];
  let ch: TunnelChannel;
  try {
    ch = await openExec(client, shellQuote(argv));
  } catch (err) {
    throw notConnected(err);
  }
  const { status, stdout, stderr } = await probeAnswer(ch);
  const { code, found } = probeOutcome(status, stdout);
  const refusal = loginShellRefusal(status, stdout, stderr);
  if (refusal) throw loginShellError(refusal, status, p);
  if (code === 0) {
    const bridge = chooseBridge(found, p.remoteSocketPath);
    if (bridge) return bridge;
    throw new HoldfastError('INVALID_INPUT', `The socket path "${p.remoteSocketPath}" cannot be bridged with socat (only letters, digits and _ . @ + / - are allowed), and the node has neither python3 nor perl.`, {
      hint: 'Use a plain socket path, or install python3 on the node.',
    });
  }
  throw probeFailure(code, stderr.trim().split('\n').pop() ?? '', p);
}

/** The probe's exit status and its output (the first 4 KiB of each stream), once the channel closed. */
function probeAnswer(ch: TunnelChannel): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let status: number | null = null;
    let stdout = '';
    let stderr = '';
    ch.on('exit', (c: number | null) => (status = c));
    ch.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    ch.on('data', (d: Buffer) => {
      if (stdout.length < 4096) stdout += d.toString('utf8');
    });
    ch.on('close', () => resolve({ status, stdout, stderr }));
    ch.end();
  });
}

function loginShellError(refusal: { said: string | null; home: string | null }, status: number | null, p: ProbeContext): HoldfastError {
  const who = p.user ?? 'the SSH user';
  const said = refusal.said ? `nologin: "${refusal.said}"` : `it exited ${status} and printed nothing`;
  return new HoldfastError('REFUSED', `The login shell of ${who} on ${p.node ?? 'the node'} refuses to run commands (${said}), and sshd runs every command through it.`, {
    hint:
      `Give ${who} a shell that runs commands (on the node: ${shellLine(['usermod', '-s', '/bin/sh', p.user ?? 'USER'])}), or log in as another user.` +
      (refusal.home ? ` Its home directory ${refusal.home} is missing too (harmless by itself).` : ''),
  });
}

/** What a probe that found no way to the socket says, by its exit code; `detail` is its last stderr line. */
function probeFailure(code: number | null, detail: string, p: ProbeContext): HoldfastError {
  const { remoteSocketPath, sudo, user, node } = p;
  const sudoers = sudoersHint(user);
  // The sudo option as data (access): the CLI words the command that sets it where it is read.
  const viaSudo = (e: HoldfastError): HoldfastError => {
    if (node !== undefined && !sudo && user !== 'root') e.access = { action: 'sudo', node };
    return e;
  };
  if (code === PROBE_NO_BRIDGE) {
    return new HoldfastError(
      'CONTAINERD_UNAVAILABLE',
      sudo
        ? 'The node has no program Holdfast can use to bridge to the containerd socket through sudo: none of socat, python3, perl runs there.'
        : 'The node does not allow socket forwarding and has no program to bridge to containerd: none of socat, python3, perl runs there.',
      { hint: sudo ? 'Install socat on the node (apt-get install socat / dnf install socat).' : 'Install socat on the node, or set AllowStreamLocalForwarding yes in its sshd_config.' },
    );
  }
  if (code === PROBE_NO_SOCKET) {
    return viaSudo(
      new HoldfastError('CONTAINERD_UNAVAILABLE', `There is no unix socket at ${remoteSocketPath} on the node${sudo ? '' : ' (or this user may not see it)'}.`, {
        hint: sudo
          ? 'Check that k3s or RKE2 (its containerd) is running on the node and the socket path is right.'
          : "Check that k3s or RKE2 (its containerd) is running and the socket path is right; a non-root user needs the node's sudo option.",
      }),
    );
  }
  if (code === PROBE_NO_ACCESS) {
    // Not "containerd is not answering": it is there, only closed to this login.
    const ls = /^(s[rwxsStT-]{9})\S*\s+\d+\s+(\S+)\s+(\S+)/.exec(detail);
    const who = user ?? 'the SSH user';
    const why = ls ? `it is there (${ls[1]} ${ls[2]}:${ls[3]}), but only ${ls[2]} and the group ${ls[3]} may connect` : `it is there, but ${who} may not connect`;
    return viaSudo(
      new HoldfastError('REFUSED', `${who} may not open the containerd socket ${remoteSocketPath} on ${node ?? 'the node'}: ${why}`, {
        hint: "Reach containerd through the node's sudo option (the user needs password-less sudo), which opens the socket as root, or connect as root.",
      }),
    );
  }
  if (code === PROBE_NO_SUDO) {
    return new HoldfastError('CONTAINERD_UNAVAILABLE', 'The node is set to use sudo, but sudo is not installed there.', {
      hint: `Install sudo on the node and allow the SSH user to run it without a password (sudoers: ${sudoers}), or connect as root.`,
    });
  }
  if (code === PROBE_SUDO_REFUSED) {
    return new HoldfastError('REFUSED', `sudo refused to run without a password on the node${detail ? ` (${detail})` : ''}.`, {
      hint: `Allow the SSH user to use sudo without a password: a file in /etc/sudoers.d with the line "${sudoers}" (edit it with visudo).`,
    });
  }
  return new HoldfastError(
    'CONTAINERD_UNAVAILABLE',
    `Could not reach ${remoteSocketPath} on the node (probe exited with ${code ?? 'a signal'}${detail ? `: ${detail}` : ''}).`,
    { hint: sudo ? `Check that the SSH user may run sudo without a password (sudoers: ${sudoers}).` : 'Check the socket path and the SSH user\'s permissions on it.' },
  );
}

// sshd turns on TCP_NODELAY for a connection only when its first session (exec, shell or
// subsystem) starts (OpenSSH's ssh_packet_set_interactive); direct-streamlocal channels never
// trigger it. Measured on OpenSSH 9.2: a server answering in several small writes (as gRPC
// servers do: headers, data, trailers) took 6-18 ms per round trip over a streamlocal-only
// connection (Nagle on sshd's side meets our delayed ACK) and 0.4 ms once one `true` had been
// exec'd on the same connection. So run one trivial session per connection, best effort, and
// without waiting for it: the tunnel works meanwhile (a node's shell may take a while to start),
// its first round trips only slower.
const primed = new WeakSet<TunnelClient>();
async function primeServerNoDelay(client: TunnelClient): Promise<void> {
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
      ch.on('error', (err: Error) => log.debug('priming exec channel failed', { err }));
      ch.resume();
      ch.stderr.resume();
      ch.end();
    });
  } catch (err) {
    // e.g. a forced command or no exec allowed: the tunnel still works, only slower
    log.debug('exec channel not primed; the tunnel works, only slower', { err });
  }
}

/** The probe's open channel, until a connection takes it (streamlocal) or the tunnel closes. */
interface SpareChannel {
  channel: TunnelChannel | undefined;
}

/**
 * streamlocal or exec. Probe streamlocal with one real channel: it tells whether forwarding is
 * allowed and whether something listens on the socket. The channel is then the first
 * connection's (grpc dials once, right away): one round trip fewer before the first call, 200 ms
 * on a slow site link.
 */
async function chooseMode(client: TunnelClient, remoteSocketPath: string, opts: TunnelOptions, spare: SpareChannel): Promise<TunnelMode> {
  const wanted = opts.sudo === true ? 'exec' : (opts.mode ?? 'auto');
  if (wanted === 'exec') return 'exec';
  try {
    const ch = await openStreamLocal(client, remoteSocketPath);
    spare.channel = ch;
    ch.once('close', () => {
      if (spare.channel === ch) spare.channel = undefined;
    });
    ch.on('error', (err: Error) => {
      if (spare.channel === ch) log.debug('unused streamlocal channel failed', { err }); // once taken, its connection handles errors
    });
    if (opts.primeNoDelay !== false) void primeServerNoDelay(client);
    return 'streamlocal';
  } catch (err) {
    if (!(err instanceof Error) || !/Channel open failure/.test(err.message)) throw notConnected(err);
    if (wanted === 'streamlocal') {
      throw new HoldfastError('CONTAINERD_UNAVAILABLE', `The node refused to forward ${remoteSocketPath}: ${err.message.replace(/^\(SSH\) /, '')}.`, {
        hint: 'The socket may be missing, or sshd forbids it (AllowStreamLocalForwarding).',
        cause: err,
      });
    }
    return 'exec';
  }
}

interface Pair {
  local: net.Socket;
  remote?: Duplex;
}

/** What each accepted connection needs of its tunnel. */
interface Piping {
  pairs: Set<Pair>;
  closed(): boolean;
  spare: SpareChannel;
  /** A new channel to the remote socket. */
  openRemote(): Promise<TunnelChannel>;
  exec: boolean;
}

/** Pipes one accepted local connection to its own channel (the spare one, if still there). */
function pipeConnection(local: net.Socket, t: Piping): void {
  const pair: Pair = { local };
  if (t.closed()) {
    local.destroy();
    return;
  }
  t.pairs.add(pair);
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    t.pairs.delete(pair);
    local.destroy();
    pair.remote?.destroy();
  };
  local.on('error', finish);
  local.on('close', finish);

  const taken = t.spare.channel;
  t.spare.channel = undefined;
  const opening = taken ? Promise.resolve(taken) : t.openRemote();
  opening.then(
    (remote) => {
      if (done) {
        remote.destroy();
        return;
      }
      pair.remote = remote;
      remote.on('error', finish);
      remote.on('close', finish);
      if (t.exec) {
        // socat's complaints go to stderr; drain it so the channel window never stalls.
        remote.stderr.resume();
        remote.on('exit', () => remote.end());
      }
      local.pipe(remote);
      remote.pipe(local);
      local.resume();
    },
    () => finish(),
  );
}

async function removeSocketDir(dir: string): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
  liveDirs.delete(dir);
}

function listen(server: net.Server, localPath: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(localPath, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

/**
 * Open a tunnel to `remoteSocketPath` over an authenticated ssh2 Client (any TunnelClient).
 * Resolves once the mode is known and the remote socket answered (streamlocal) or exists (exec);
 * rejects with a HoldfastError.
 */
export async function openTunnel(client: TunnelClient, remoteSocketPath: string, opts: TunnelOptions = {}): Promise<Tunnel> {
  if (!remoteSocketPath.startsWith('/') || remoteSocketPath.includes('\0')) {
    throw new HoldfastError('INVALID_INPUT', `The remote socket path must be absolute, got "${remoteSocketPath}".`);
  }
  const sudo = opts.sudo === true;
  const spare: SpareChannel = { channel: undefined };
  const mode = await chooseMode(client, remoteSocketPath, opts, spare);
  let bridge: BridgeKind | undefined;
  if (mode === 'exec') bridge = await probeExec(client, { remoteSocketPath, sudo, user: opts.user, node: opts.node });
  const bridgeCommand = bridge ? shellQuote(bridgeArgv(bridge, remoteSocketPath, sudo)) : '';

  let dir: string;
  try {
    dir = await makeSocketDir();
  } catch (err) {
    spare.channel?.destroy();
    throw err;
  }
  trackDir(dir);
  const localPath = path.join(dir, 'grpc.sock');
  const pairs = new Set<Pair>();
  let closed = false;
  let closing: Promise<void> | null = null;
  const server = net.createServer({ pauseOnConnect: true }, (local) =>
    pipeConnection(local, {
      pairs,
      closed: () => closed,
      spare,
      openRemote: () => (mode === 'streamlocal' ? openStreamLocal(client, remoteSocketPath) : openExec(client, bridgeCommand)),
      exec: mode === 'exec',
    }),
  );

  const onClientGone = () => void close();

  async function close(): Promise<void> {
    if (closing) return closing;
    closed = true;
    closing = (async () => {
      client.removeListener('close', onClientGone);
      spare.channel?.destroy();
      spare.channel = undefined;
      for (const p of [...pairs]) {
        p.local.destroy();
        p.remote?.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await removeSocketDir(dir);
    })();
    return closing;
  }

  await listen(server, localPath).catch(async (err) => {
    spare.channel?.destroy();
    await removeSocketDir(dir);
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
    get bridge() {
      return bridge;
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
