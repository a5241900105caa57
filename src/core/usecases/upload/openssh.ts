// The bulk bytes of an upload through the machine's own OpenSSH client, when there is one.
// Why: ssh2 frames, encrypts and MACs every 32 KiB packet in JavaScript; for a large archive
// that costs ~5 s of laptop CPU per GiB and held verified uploads at ~0.67× plain `scp`
// (bench/upload). The OpenSSH client does the same work natively. Everything else — the checks
// before, containment, fsync, the comparison of digests and the rename — stays on the ssh2
// connection that is already open and verified; only bytes [0, size) of a fresh staging file go
// this way. A resumed upload (start > 0) keeps the SFTP path: it needs a write at an offset.
// The rules this keeps (host key, no prompt, no shell, memory, no orphans) are on sendWithOpenssh.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { Writable } from 'node:stream';
import path from 'node:path';
import type { SshConnection } from '../../ssh/connect';
import { shellQuote } from '../../ssh/quote';
import { findOnPath, isExecutable } from '../../localTools';
import { logger } from '../../log';
import { opensshSetting } from '../../env';
import { holdfastHome } from '../../config/home';

const log = logger('upload');

/** What a native upload needs to know about the SSH side. */
export interface NativeTarget {
  ssh: Pick<SshConnection, 'hostKey' | 'login' | 'nativeAuth' | 'via'>;
  /** The node's hasher from the probe. */
  hasher: 'openssl' | 'sha256sum';
}

export const OPENSSH_WRITE_SCRIPT = [
  'f=$1; h=$2; want=$3',
  'umask 022',
  // A fresh file: `>` truncates a leftover that did not match (the caller checked it is a file).
  'cat > "$f" || exit 4',
  // Fewer bytes than the file has: the laptop went away mid-way (cancel, dropped link). The
  // bytes stay for a resume; hashing a part would only cost the node time.
  'n=$(wc -c < "$f") || exit 5; n=$((n))',
  'if [ "$n" != "$want" ]; then echo "@@short $n"; exit 6; fi',
  's=; if sync --help 2>/dev/null | grep -q -e --data; then sync -d -- "$f" 2>/dev/null & s=$!; fi',
  'case "$h" in openssl) d=$(openssl dgst -sha256 -r < "$f") ;; *) d=$(sha256sum < "$f") ;; esac || exit 5',
  'if [ -n "$s" ]; then wait "$s"; fi',
  'echo "@@sha256 ${d%% *} $n"',
].join('\n');

/**
 * Runs ssh (`$2…`) so that it cannot outlive this process: ssh reads the local file as its stdin
 * and would go on sending after a `kill -9` of Holdfast (or a crash of the app), finishing an
 * upload nobody is waiting for. The watcher holds the read end of a pipe (fd 3) whose write end
 * only this process has; when it closes — Holdfast ended it (cancel), or Holdfast is gone — the
 * watcher's `read` returns and it stops ssh. A background job's stdin is /dev/null in sh, so the
 * file goes to ssh through fd 4. Fixed text: the program and its arguments are positional.
 */
export const LIFELINE_SCRIPT = [
  'exec 4<&0',
  '"$@" <&4 4<&- 3<&- & s=$!',
  'exec 4<&-',
  '( read -r _ || :; kill "$s" 2>/dev/null ) <&3 >/dev/null 2>&1 & w=$!',
  'exec 3<&-',
  'wait "$s"; r=$?',
  'kill "$w" 2>/dev/null',
  'exit "$r"',
].join('\n');

const POSIX_SH = '/bin/sh';

/** The remote command line: the fixed script, its positional arguments quoted. */
export function opensshWriteCommand(remotePath: string, hasher: 'openssl' | 'sha256sum', size: number): string {
  return shellQuote(['sh', '-c', OPENSSH_WRITE_SCRIPT, 'holdfast-upload', remotePath, hasher, String(size)]);
}

/** Parses the script's last line: the digest (lowercase hex) and the file's size. */
export function parseWriteResult(stdout: string): { sha256: string; size: number } | null {
  const m = /@@sha256 ([0-9a-fA-F]{64})\s+(\d+)\s*$/.exec(stdout.trim());
  return m ? { sha256: m[1]!.toLowerCase(), size: Number(m[2]) } : null;
}

let found: string | null | undefined;

/** The OpenSSH client to use: HOLDFAST_OPENSSH (a path, or `off`), else `ssh` on PATH; null for none. */
export function opensshClient(env: NodeJS.ProcessEnv = process.env): string | null {
  const forced = opensshSetting(env);
  if (forced === 'off') return null;
  if (forced) return isExecutable(forced) ? forced : null;
  if (found === undefined) found = findOnPath('ssh', env);
  return found;
}

/** Why the native path cannot carry this upload (null: it can). */
export function nativeUnfit(t: NativeTarget['ssh'], opts: { sudo: boolean; client: string | null }): string | null {
  if (!opts.client) return 'no OpenSSH client (ssh) on PATH, or HOLDFAST_OPENSSH=off';
  if (!isExecutable(POSIX_SH)) return `no ${POSIX_SH} to tie the OpenSSH client's life to Holdfast's`;
  if (t.via) return 'the node is reached through a jump host';
  if (opts.sudo) return 'the node is written through sudo';
  if (!t.nativeAuth) return 'the login needs a password or a passphrase';
  // ssh would read these as options or as user@host; such names are not worth the doubt.
  if (!/^[A-Za-z0-9._:[\]%-]+$/.test(t.login.host) || t.login.host.startsWith('-')) return `the host name ${JSON.stringify(t.login.host)}`;
  if (!/^[A-Za-z0-9._][A-Za-z0-9._@-]*$/.test(t.login.user)) return `the user name ${JSON.stringify(t.login.user)}`;
  return null;
}

/** The OpenSSH known_hosts line for the verified key, under `alias`. */
export function knownHostsLine(alias: string, keyBlob: Buffer): string {
  const typeLen = keyBlob.readUInt32BE(0);
  const type = keyBlob.subarray(4, 4 + typeLen).toString('latin1');
  if (!/^[a-z0-9@.-]+$/.test(type)) throw new Error(`unexpected host key type ${JSON.stringify(type)}`);
  return `${alias} ${type} ${keyBlob.toString('base64')}\n`;
}

const ALIAS = 'holdfast-verified-node';

/** A path as ssh_config reads it: `%` starts a token there (`%d`, `%h`, …), `%%` is a literal `%`. */
const literal = (p: string) => p.replace(/%/g, '%%');

/** A path as an ssh_config value: quoted where it has a space (macOS homes: "Application Support"). */
const configPath = (p: string) => (/\s/.test(p) ? `"${literal(p)}"` : literal(p));

/** Whether a process with this pid exists (EPERM: it does, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the known_hosts folders (knownHostsDir) of processes that no longer exist. */
export function removeStaleKnownHostsDirs(home: string = holdfastHome()): void {
  const base = path.join(home, 'ssh');
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return; // none yet
  }
  for (const name of names) {
    const pid = Number(/^run-(\d+)-/.exec(name)?.[1] ?? NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(path.join(base, name), { recursive: true, force: true });
  }
}

/**
 * A fresh 0700 folder for the one-line known_hosts: `<home>/ssh/run-<pid>-XXXXXX`. Removed when the
 * upload ends; a Holdfast killed mid-upload (SIGKILL, a crash) cannot remove its own, so the
 * folders of processes that no longer exist are removed here first. No home yet (core used
 * without the CLI or the app), a home whose path ssh_config cannot carry (quotes, backslashes)
 * or that cannot be written: the system's temp dir, as before.
 */
export function knownHostsDir(home: string = holdfastHome()): string {
  const base = path.join(home, 'ssh');
  if (existsSync(home) && !/["'\\\n\r]/.test(base)) {
    try {
      mkdirSync(base, { recursive: true, mode: 0o700 });
      removeStaleKnownHostsDirs(home);
      return mkdtempSync(path.join(base, `run-${process.pid}-`));
    } catch (err) {
      log.debug('no folder for the known_hosts file under Holdfast\'s home; using the temp dir', { base, err });
    }
  }
  return mkdtempSync(path.join(os.tmpdir(), 'holdfast-ssh-'));
}

/** The argv for ssh (after the program), with the remote command last. */
export function opensshArgv(t: NativeTarget['ssh'], knownHostsFile: string, command: string): string[] {
  const typeLen = t.hostKey.readUInt32BE(0);
  const keyType = t.hostKey.subarray(4, 4 + typeLen).toString('latin1');
  const auth = t.nativeAuth!;
  return [
    '-F', process.platform === 'win32' ? 'NUL' : '/dev/null',
    '-o', 'BatchMode=yes',
    '-o', 'StrictHostKeyChecking=yes',
    '-o', `UserKnownHostsFile=${configPath(knownHostsFile)}`,
    '-o', `GlobalKnownHostsFile=${process.platform === 'win32' ? 'NUL' : '/dev/null'}`,
    '-o', `HostKeyAlias=${ALIAS}`,
    '-o', `HostKeyAlgorithms=${keyType === 'ssh-rsa' ? 'rsa-sha2-512,rsa-sha2-256' : keyType}`,
    '-o', 'UpdateHostKeys=no',
    '-o', 'PasswordAuthentication=no',
    '-o', 'KbdInteractiveAuthentication=no',
    '-o', 'ForwardAgent=no',
    '-o', 'ForwardX11=no',
    '-o', 'ClearAllForwardings=yes',
    '-o', 'ControlMaster=no',
    '-o', 'ControlPath=none',
    '-o', 'ConnectTimeout=15',
    '-o', 'ServerAliveInterval=15',
    '-o', 'ServerAliveCountMax=3',
    // AES-GCM first, as ssh2 orders it: on CPUs with AES instructions it costs both ends less
    // than OpenSSH's default chacha20-poly1305 (which stays as the fallback).
    '-o', 'Ciphers=aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr',
    ...('identity' in auth ? ['-o', 'IdentitiesOnly=yes', '-o', 'IdentityAgent=none', '-i', literal(auth.identity)] : ['-o', `IdentityAgent=${literal(auth.agent)}`]),
    '-e', 'none',
    '-T',
    '-p', String(t.login.port),
    '-l', t.login.user,
    '--',
    t.login.host,
    command,
  ];
}

/** ssh failed before the node had any of the file: the caller sends over SFTP instead. */
export class NativeUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NativeUnavailable';
  }
}

/** ssh's own connection ended (exit 255) after bytes landed: a dropped link, resumable. */
export class NativeDropped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NativeDropped';
  }
}

export interface NativeSendOptions {
  client: string;
  target: NativeTarget;
  localPath: string;
  /** The local file's size: what the node's file must hold at the end. */
  size: number;
  remotePath: string;
  signal?: AbortSignal;
  /** Asked every quarter second how far the node's file has grown (the caller stats it over SFTP). */
  poll?: () => Promise<number | null>;
  /**
   * Subscribes to the end of the ssh2 connection the upload belongs to (returns an unsubscribe):
   * without it the upload cannot be checked or renamed, so the transfer stops too.
   */
  onConnectionClosed?: (cb: () => void) => () => void;
  onProgress?: (bytesOnNode: number) => void;
}

/**
 * Sends the whole local file into remotePath; resolves with the node's digest and file size.
 *
 * The rules this keeps:
 *  - Host key: the native client may only talk to the key the ssh2 connection verified. It gets
 *    a known_hosts file of one line (that key, under a fixed alias, in a fresh 0700 folder under
 *    Holdfast's home — knownHostsDir: one a killed Holdfast left is removed by the next upload),
 *    StrictHostKeyChecking=yes, no global known_hosts and -F /dev/null (no user ssh_config: the
 *    host, port, user and key are the ones Holdfast resolved). Any other key: ssh refuses before
 *    authenticating, and the upload goes on over SFTP.
 *  - No prompt, no secret: BatchMode=yes; only an unencrypted identity file or the agent
 *    (connect.ts nativeAuth) — a passphrase never leaves this process.
 *  - Nothing user-supplied in a shell: ssh is spawned with an argv (no local shell); the remote
 *    command is a fixed script whose path and hasher arrive as single-quoted positional
 *    arguments (quote.ts), as every exec channel of Holdfast does.
 *  - Memory: ssh reads the local file itself (its stdin is the open file); this process only
 *    hashes the file alongside, 1 MiB at a time.
 *  - Nothing outlives Holdfast: ssh runs under a small /bin/sh watcher (LIFELINE_SCRIPT) that
 *    stops it when a pipe only this process holds closes — on cancel, or when Holdfast is killed.
 *
 * On the node the script writes stdin into the staging file, flushes it (`sync -d FILE` where
 * coreutils has it) while the probe's hasher reads it back, and prints the digest and size; the
 * laptop compares that digest with its own before the rename, as with every path.
 *
 * When it cannot run (no `ssh` on PATH, HOLDFAST_OPENSSH=off, no /bin/sh as on Windows, a jump
 * host, sudo, a password, an encrypted key, a host name ssh would read as an option), or ssh
 * fails before the node has a byte of the file (exit 255: connect, host key or authentication),
 * the caller falls back to SFTP. Once bytes are written, a failure is the upload's failure
 * (resumable over SFTP).
 */
export async function sendWithOpenssh(o: NativeSendOptions): Promise<{ sha256: string; size: number }> {
  const dir = knownHostsDir();
  const knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, knownHostsLine(ALIAS, o.target.ssh.hostKey), { mode: 0o600 });
  const fd = openSync(o.localPath, 'r');
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const argv = opensshArgv(o.target.ssh, knownHosts, opensshWriteCommand(o.remotePath, o.target.hasher, o.size));
    // Only what ssh needs: no inherited SSH_* settings beyond the agent the argv names.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir(), LANG: 'C' };
    if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
    const c = spawn(POSIX_SH, ['-c', LIFELINE_SCRIPT, 'holdfast-openssh', o.client, ...argv], { stdio: [fd, 'pipe', 'pipe', 'pipe'], env, windowsHide: true });
    const lifeline = c.stdio[3] as Writable;
    lifeline.on('error', () => undefined); // gone with the child
    const stop = () => lifeline.destroy();
    child = c;
    let out = '';
    let err = '';
    // Bounded: the script prints one line; ssh's own messages are short.
    c.stdout!.setEncoding('utf8').on('data', (s: string) => (out = (out + s).slice(-4096)));
    c.stderr!.setEncoding('utf8').on('data', (s: string) => (err = (err + s).slice(-4096)));
    let grown = 0;
    if (o.poll) {
      timer = setInterval(() => {
        o.poll!().then(
          (n) => {
            if (n !== null && n > grown) {
              grown = n;
              o.onProgress?.(n);
            }
          },
          (e: unknown) => log.debug('upload progress not read', { err: e }),
        );
      }, 250);
    }
    const onAbort = () => stop();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let connectionGone = false;
    const unsubscribe = o.onConnectionClosed?.(() => {
      connectionGone = true;
      stop();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      c.once('error', reject);
      c.once('close', (status) => resolve(status));
    }).finally(() => {
      o.signal?.removeEventListener('abort', onAbort);
      unsubscribe?.();
    });
    if (o.signal?.aborted) {
      const e = new Error('the upload was cancelled');
      e.name = 'AbortError';
      throw e;
    }
    if (connectionGone) throw new Error('the SSH connection to the node closed during the transfer');
    return await transferResult(o, { code, out, err, grown });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !child?.pid) throw new NativeUnavailable(`${o.client} could not be started`);
    throw e;
  } finally {
    if (timer) clearInterval(timer);
    (child?.stdio[3] as Writable | undefined)?.destroy();
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the remote script and ssh's exit say: the node's digest and size, or why the transfer failed. */
async function transferResult(o: NativeSendOptions, r: { code: number | null; out: string; err: string; grown: number }): Promise<{ sha256: string; size: number }> {
  const { code, out } = r;
  const result = code === 0 ? parseWriteResult(out) : null;
  if (result) return result;
  const short = /@@short (\d+)/.exec(out);
  if (short) throw new Error(`the OpenSSH client's transfer ended after ${short[1]} of ${o.size} bytes`);
  const why = r.err.trim().split('\n').filter(Boolean).slice(-2).join(' ') || `exit status ${code}`;
  // 255 is ssh's own failure (connect, host key, authentication, a dropped connection). If
  // the node's file has none of this attempt, nothing is there to lose: SFTP takes over.
  // (126/127: the shell could not run the client at all.)
  if (code === 255 || code === 126 || code === 127) {
    const now = o.poll ? await o.poll().catch(() => null) : 0;
    if (!now && !r.grown) throw new NativeUnavailable(why);
    throw new NativeDropped(why);
  }
  throw new Error(`the OpenSSH client's transfer failed (${why})`);
}
