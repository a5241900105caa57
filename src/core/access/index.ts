// File access to a node's images dir: SFTP as the SSH user (root), or sudo -n over exec.
import type { SshConnection } from '../ssh/connect';
import { SftpFileAccess } from './sftp';
import { SudoFileAccess } from './sudo';
import type { FileAccess } from './types';

export type { FileAccess, FreeSpace, ListedFile, RemoteFileType, RemoteStat, UploadArea } from './types';
export { SftpFileAccess } from './sftp';
export { SudoFileAccess, STAGING_DIR, parseFindOutput, parseStatLine } from './sudo';

/** `node`: the node's name, for messages. */
export function createFileAccess(ssh: SshConnection, opts: { sudo: boolean; user: string; node: string }): FileAccess {
  return opts.sudo ? new SudoFileAccess(ssh, opts.user) : new SftpFileAccess(ssh, opts.user, opts.node);
}
