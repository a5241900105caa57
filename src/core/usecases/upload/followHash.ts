// The node's SHA-256 of an upload's staging file, computed while the file is being written, so
// the verification costs no pass of its own after the transfer (`sha256sum` at ~200 MB/s after
// sending at ~230 MB/s nearly halves the throughput). What is hashed is what the node reads back
// from its own file, and the digest is compared with the laptop's before the rename. A failure of
// this path (no digest, wrong size line) is not a verdict: the caller falls back to hashing the
// complete file afterwards. How the script follows the file and ends is on FOLLOW_HASH_SCRIPT.
import type { ClientChannel } from 'ssh2';
import type { SessionSsh } from '../../node/session';
import type { HashTools } from '../../node/detect';
import { logger } from '../../log';

const log = logger('upload');

/**
 * On the node, one exec channel runs this fixed script: `tail -c +1 -f` follows the staging file
 * from byte 0 (for a resume: the prefix already there, then the appended bytes, in one pass) into
 * a FIFO that the fastest hasher the probe found (`openssl dgst -sha256`, else `sha256sum`) reads.
 * The script then prints the file's size, so a file that is not exactly SIZE bytes is not taken
 * as verified.
 *
 * How the follow ends, in the one of two modes the script picks (its first output line says which):
 *  - pid (GNU tail): `tail --pid=W` follows until the watcher W ends — W ends when the channel's
 *    stdin does, which the laptop ends once every write is acknowledged (sent()) — then reads what
 *    is left and exits. No process sits between tail and the hasher: measured on the lab's 2-core
 *    box, a `head` in the pipe cost as much CPU as the hasher itself (≈ 0.75 s per 512 MiB, on
 *    the cores that sshd and sftp-server need while sending).
 *  - head (any other tail, e.g. busybox): `head -c SIZE` takes exactly SIZE bytes from the FIFO
 *    into the hasher and stdin stays open until the digest is in; ending stdin here means "give up".
 * Cleanup never depends on a signal reaching the node: on stdin EOF the watcher ends (pid mode:
 * tail follows it; head mode: the watcher kills tail). The laptop ends stdin after sending, on any
 * failure or cancel, and a dropped connection closes it too; nothing outlives the upload on the node.
 *
 * In pid mode the script also writes the staging file back while it arrives (`sync -d` on it
 * every quarter second, where `sync` takes a file): the laptop's fsync before the rename then has
 * little left to flush (350 ms → 15 ms for 512 MiB on the lab; far more on an eMMC or SD card).
 *
 * Nothing user-supplied is part of the script: the path, the size, the hasher's name (one of two
 * fixed words) and the mode wanted ("auto" or "head", fixed words too) are positional arguments.
 */
export const FOLLOW_HASH_SCRIPT = [
  'f=$1; n=$2; h=$3; m=$4',
  'd=$(mktemp -d) || exit 3',
  'if ! mkfifo -- "$d/p"; then rm -rf -- "$d"; exit 3; fi',
  'hash() { case "$h" in openssl) openssl dgst -sha256 ;; *) sha256sum ;; esac; }',
  'exec 3<&0',
  // GNU tail takes --pid (busybox's does not: its usage error picks head mode).
  'if [ "$m" != head ] && tail --pid=$$ -s 0.1 -c 0 /dev/null >/dev/null 2>&1 </dev/null; then',
  '  echo "@@follow pid"',
  // stdin EOF (the laptop sent everything, gave up, or the connection dropped) ends the watcher.
  '  ( cat <&3 >/dev/null 2>&1 ) >/dev/null 2>&1 </dev/null & w=$!',
  '  exec 3<&-',
  '  tail -s 0.1 --pid="$w" -c +1 -f -- "$f" >"$d/p" 2>/dev/null </dev/null & t=$!',
  // Write back what has arrived, a quarter second at a time, while sending: the laptop's fsync
  // after the last write then has little left to flush (see the comment above). Only a `sync`
  // that takes a file (coreutils 8.24+, says --data); an older one would flush every file system.
  '  s=; if sync --help 2>/dev/null | grep -q -e --data; then',
  '    ( while kill -0 "$w" 2>/dev/null; do sleep 0.25; sync -d -- "$f" 2>/dev/null || exit 0; done ) >/dev/null 2>&1 </dev/null & s=$!',
  '  fi',
  '  hash <"$d/p"; r=$?',
  // tail's own status: one that could not read the file has fed the hasher nothing, or a part.
  '  wait "$t" || r=5',
  'else',
  '  echo "@@follow head"',
  '  tail -c +1 -f -- "$f" >"$d/p" 2>/dev/null </dev/null & t=$!',
  // Killed before it opened the FIFO, tail would leave head's open of it waiting for a writer
  // forever (seen under load: 5 runs in 200 hung). So the watcher then opens it as a writer that
  // writes nothing: that open waits for head's, head sees the end at once. If head had already
  // ended, the open waits until the `kill` below ends the watcher.
  '  ( cat <&3 >/dev/null 2>&1; kill "$t" 2>/dev/null; : >"$d/p" ) >/dev/null 2>&1 </dev/null & w=$!',
  '  exec 3<&-',
  '  head -c "$n" <"$d/p" | hash; r=$?',
  'fi',
  'kill "$t" "$w" $s 2>/dev/null',
  'rm -rf -- "$d"',
  '[ "$r" -eq 0 ] || exit 4',
  'echo "@@size $(wc -c <"$f")"',
].join('\n');

/** How the follow ends (see FOLLOW_HASH_SCRIPT); 'head' forces the mode any tail supports. */
export type FollowMode = 'auto' | 'head';

export function followHashArgv(path: string, size: number, hasher: NonNullable<HashTools['hasher']>, mode: FollowMode = 'auto'): string[] {
  return ['sh', '-c', FOLLOW_HASH_SCRIPT, 'holdfast-hash', path, String(size), hasher, mode];
}

/** The digest from the script's output, if it hashed exactly `size` bytes; else null. */
export function parseFollowHash(stdout: string, size: number): string | null {
  const hex = /(?:^|[\s=])([0-9a-f]{64})(?:\s|$)/m.exec(stdout)?.[1];
  const got = /^@@size\s+(\d+)\s*$/m.exec(stdout)?.[1];
  if (!hex || got === undefined || Number(got) !== size) return null;
  return hex;
}

export interface FollowHash {
  /** The node's digest of the file's first `size` bytes, or null when this path failed. */
  readonly result: Promise<string | null>;
  /**
   * Every byte is written and acknowledged: in pid mode the node reads what is left and hashes it
   * (stdin ends); in head mode nothing to do, the digest comes at SIZE bytes (idempotent; call it
   * before waiting for `result`, which in pid mode never comes without it or stop()).
   */
  sent(): void;
  /** Ends the channel's stdin: the node stops following (idempotent). */
  stop(): void;
  /** The mode the node's script picked; null until its first line arrived. */
  mode(): 'pid' | 'head' | null;
}

const OUTPUT_CAP = 64 * 1024;

/** Starts hashing `path` on the node as it grows; call after the file was opened for writing. */
export async function startFollowHash(
  ssh: Pick<SessionSsh, 'spawn'>,
  path: string,
  size: number,
  hasher: NonNullable<HashTools['hasher']>,
  mode: FollowMode = 'auto',
): Promise<FollowHash> {
  const ch: ClientChannel = await ssh.spawn(followHashArgv(path, size, hasher, mode));
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      ch.end();
    } catch (err) {
      log.debug('follow hash: stdin not ended', { err });
    }
  };
  // The script's first line names its mode; sent() before that line arrived acts on its arrival.
  let followMode: 'pid' | 'head' | null = null;
  let sentCalled = false;
  const sent = () => {
    sentCalled = true;
    if (followMode === 'pid') stop();
  };
  const result = new Promise<string | null>((resolve) => {
    let out = '';
    let err = '';
    let code: number | null = null;
    ch.on('data', (d: Buffer) => {
      if (out.length < OUTPUT_CAP) out += d.toString('utf8');
      if (followMode === null) {
        const m = /^@@follow (pid|head)\n/.exec(out);
        if (m) {
          followMode = m[1] as 'pid' | 'head';
          if (sentCalled) sent();
        }
      }
    });
    ch.stderr.on('data', (d: Buffer) => {
      if (err.length < OUTPUT_CAP) err += d.toString('utf8');
    });
    ch.on('exit', (c: number | null) => (code = typeof c === 'number' ? c : null));
    ch.on('error', (e: Error) => log.debug('follow hash channel error', { err: e }));
    ch.on('close', () => {
      stop();
      const hex = code === 0 ? parseFollowHash(out, size) : null;
      if (!hex) log.debug('follow hash gave no digest; hashing afterwards', { code, mode: followMode, stdout: out.slice(0, 300), stderr: err.slice(0, 300) });
      resolve(hex);
    });
  });
  return { result, sent, stop, mode: () => followMode };
}
