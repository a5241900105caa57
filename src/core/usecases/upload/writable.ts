// May the SSH user write where an upload goes? Asked on the node before a byte is sent, so a
// non-root user without sudo (or a root-only images dir) is told so, not a network or free-space
// problem once the bytes are under way. One exec of a fixed script (`test -w`: access(2), so
// modes, ACLs and a read-only mount all count) over the folders from the target's own up to `/`:
// the deepest one that exists must be writable, since mkdirp creates the rest below it. A folder
// the user may not even look into (a 0700 images dir) counts as missing, so its parent — or
// itself — is the one reported. Under sudo the bytes go to the user's own staging dir and are
// installed as root: nothing to ask.
import path from 'node:path';
import { HoldfastError } from '../../errors';
import type { SshConnection } from '../../ssh/connect';
import { logger } from '../../log';

const log = logger('upload');

/** Exit 0: the deepest existing folder is writable; 1: it is not (printed); 2: none exists. */
export const WRITABLE_SCRIPT = 'for d in "$@"; do if [ -e "$d" ]; then [ -w "$d" ] && exit 0; printf "%s" "$d"; exit 1; fi; done; exit 2';

/** The folders from `dir` up to `/`, deepest first. */
export function foldersUp(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = path.posix.dirname(d)) {
    out.push(d);
    if (path.posix.dirname(d) === d) return out;
  }
}

/**
 * The folder the SSH user may not write in on the way to `dir` (an upload's folder: itself, the
 * images dir or an ancestor mkdirp would create them in), or null: writable, or the node could
 * not tell (the write itself then says what went wrong).
 */
export async function unwritableFolder(ssh: Pick<SshConnection, 'exec'>, dir: string): Promise<string | null> {
  try {
    const r = await ssh.exec(['sh', '-c', WRITABLE_SCRIPT, 'holdfast-writable', ...foldersUp(dir)], { timeoutMs: 30_000 });
    if (r.code === 1 && r.stdout.startsWith('/')) return r.stdout;
    if (r.code !== 0) log.debug('write access not told; the write will say', { code: r.code, stderr: r.stderr });
    return null;
  } catch (err) {
    if (err instanceof HoldfastError && err.code === 'UNREACHABLE') throw err;
    log.debug('write access not asked; the write will say', { err });
    return null;
  }
}
