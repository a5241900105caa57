// What fixes an archive that is not safe to remove, as data: the CLI prints the command, the app
// names the button (src/renderer/appText.ts). Core's reason sentences quote the same command.
import type { ArchiveRemedy, RemovalCheck } from './domain';

export type { ArchiveRemedy };

/** The command core quotes in an archive's reasons (src/core/node/inspect.ts). */
export const pinArchiveCommand = (node: string, archive: string): string => `holdfast pin ${node} --archive ${archive}`;

/**
 * The remedy for a removal check: present images without durable protection, some reference of
 * which lacks a durable pin → pin the archive. (Where every reference is durable already, e.g. a
 * containerd without CRI pinning, pinning changes nothing.)
 */
export function archiveRemedy(check: Pick<RemovalCheck, 'node' | 'path' | 'images'>): ArchiveRemedy | undefined {
  if (!check.images.some((i) => i.present && !i.durable && (i.refs === undefined || i.refs.some((r) => r.pin !== 'durable')))) return undefined;
  return { kind: 'pin-archive', archive: check.path, command: pinArchiveCommand(check.node, check.path) };
}
