// Where a node's guard records its last run, and the bounded read of it over the node's own file
// access (SFTP as root, `sudo -n` otherwise; this machine's files with --local). The record is the
// node's: what it may hold and how it is judged is shared/guardState.ts. Guard writes it in
// $HOLDFAST_HOME, which deploy/'s DaemonSet and systemd unit set to NODE_HOLDFAST_HOME.
import path from 'node:path';
import { guardStateTooLarge, parseGuardState, type GuardStateRead } from '../../shared/guardState';
import { readAll } from '../access/common';
import type { FileAccess } from '../access';
import { limit } from '../limits';
import { logger } from '../log';

const log = logger('guard');

export const GUARD_STATE_FILE = 'guard-state.json';
/** Holdfast's home on a node, as deploy/guard.yaml and holdfast-guard.service set it. */
export const NODE_HOLDFAST_HOME = '/var/lib/holdfast';
export const NODE_GUARD_STATE = path.posix.join(NODE_HOLDFAST_HOME, GUARD_STATE_FILE);

/** The node's guard record: absent, unreadable (with why) or read. Never throws. */
export async function readGuardState(files: FileAccess, file = NODE_GUARD_STATE): Promise<GuardStateRead> {
  const max = limit('remote.guardStateBytes');
  try {
    const st = await files.stat(file);
    if (!st) return { found: 'absent' };
    // A FIFO or device would block the read: never open one.
    if (st.type !== 'file') return { found: 'unreadable', why: `${file} is not a regular file` };
    if (st.size > max) return guardStateTooLarge(st.size, max);
    const text = (await readAll(files.readStream(file, { size: st.size }), st.size)).toString('utf8');
    return parseGuardState(text, max);
  } catch (err) {
    log.debug('guard state not read', { file, err });
    return { found: 'unreadable', why: `${file} could not be read (${err instanceof Error ? err.message.split('\n')[0]!.slice(0, 120) : String(err)})` };
  }
}
