// The node's SHA-256 of an upload's staging file, computed while the file is being written, so
// the verification costs no pass of its own after the transfer (it used to: `sha256sum` at
// ~200 MB/s after sending at ~230 MB/s nearly halved the throughput).
//
// On the node, one exec channel runs a fixed script: `tail -c +1 -f` follows the staging file
// from byte 0 (for a resume: the prefix already there, then the appended bytes, in one pass) into
// a FIFO; `head -c SIZE` takes exactly the file's size from it into the fastest hasher the probe
// found (`openssl dgst -sha256`, else `sha256sum`). What is hashed is what the node reads back
// from its own file — the same bytes a `sha256sum` after the transfer would read — and the digest
// is compared with the laptop's before the rename, as before. The script then prints the file's
// size, so a file that grew past SIZE is not taken as verified.
//
// Cleanup never depends on a signal reaching the node: a watcher waits for EOF on the channel's
// stdin and then stops tail. The laptop ends stdin once it has the digest, on any failure or
// cancel, and a dropped connection closes it too; nothing outlives the upload on the node.
// A failure of this path (no digest, wrong size line) is not a verdict: the caller falls back to
// hashing the complete file afterwards.
//
// Nothing user-supplied is part of the script: the path, the size and the hasher's name (one of
// two fixed words) are positional arguments.
import type { ClientChannel } from 'ssh2';
import type { SshConnection } from '../ssh/connect';
import type { HashTools } from '../node/detect';
import { logger } from '../log';

const log = logger('upload');

export const FOLLOW_HASH_SCRIPT = [
  'f=$1; n=$2; h=$3',
  'd=$(mktemp -d) || exit 3',
  'if ! mkfifo -- "$d/p"; then rm -rf -- "$d"; exit 3; fi',
  'exec 3<&0',
  'tail -c +1 -f -- "$f" >"$d/p" 2>/dev/null </dev/null & t=$!',
  // stdin EOF (the laptop is done, gave up, or the connection dropped): stop following.
  '( cat <&3 >/dev/null 2>&1; kill "$t" 2>/dev/null ) >/dev/null 2>&1 </dev/null & w=$!',
  'exec 3<&-',
  'case "$h" in',
  '  openssl) head -c "$n" <"$d/p" | openssl dgst -sha256 ;;',
  '  *) head -c "$n" <"$d/p" | sha256sum ;;',
  'esac',
  'r=$?',
  'kill "$t" "$w" 2>/dev/null',
  'rm -rf -- "$d"',
  '[ "$r" -eq 0 ] || exit 4',
  'echo "@@size $(wc -c <"$f")"',
].join('\n');

export function followHashArgv(path: string, size: number, hasher: NonNullable<HashTools['hasher']>): string[] {
  return ['sh', '-c', FOLLOW_HASH_SCRIPT, 'holdfast-hash', path, String(size), hasher];
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
  /** Ends the channel's stdin: the node stops following (idempotent). */
  stop(): void;
}

const OUTPUT_CAP = 64 * 1024;

/** Starts hashing `path` on the node as it grows; call after the file was opened for writing. */
export async function startFollowHash(ssh: SshConnection, path: string, size: number, hasher: NonNullable<HashTools['hasher']>): Promise<FollowHash> {
  const ch: ClientChannel = await ssh.spawn(followHashArgv(path, size, hasher));
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
  const result = new Promise<string | null>((resolve) => {
    let out = '';
    let err = '';
    let code: number | null = null;
    ch.on('data', (d: Buffer) => {
      if (out.length < OUTPUT_CAP) out += d.toString('utf8');
    });
    ch.stderr.on('data', (d: Buffer) => {
      if (err.length < OUTPUT_CAP) err += d.toString('utf8');
    });
    ch.on('exit', (c: number | null) => (code = typeof c === 'number' ? c : null));
    ch.on('error', (e: Error) => log.debug('follow hash channel error', { err: e }));
    ch.on('close', () => {
      stop();
      const hex = code === 0 ? parseFollowHash(out, size) : null;
      if (!hex) log.debug('follow hash gave no digest; hashing afterwards', { code, stdout: out.slice(0, 300), stderr: err.slice(0, 300) });
      resolve(hex);
    });
  });
  return { result, stop };
}
