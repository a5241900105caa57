// What fixes an archive that is not safe to remove, as data (shared/remedy): the CLI prints the
// command, the app names the button (src/renderer/appText.ts). Core's reasons carry it as data
// too (shared/remedy Prose), never its command.
import type { ArchiveInfo, RemovalCheck } from './domain/archives';
import type { ArchiveRemedy } from './remedy';

/**
 * The remedy for a removal check: present images without durable protection, some reference of
 * which lacks a durable pin → pin the archive. (Where every reference is durable already, e.g. a
 * containerd without CRI pinning, pinning changes nothing.)
 */
export function archiveRemedy(check: Pick<RemovalCheck, 'node' | 'path' | 'images'>): ArchiveRemedy | undefined {
  if (!check.images.some((i) => i.present && !i.durable && (i.refs === undefined || i.refs.some((r) => r.pin !== 'durable')))) return undefined;
  return { action: 'pin', node: check.node, archive: check.path };
}

/**
 * Whether a file in the images dir can go, in one short clause (its `reason` is the sentence):
 * what blocks the removal, by the first thing that does. Pure.
 */
export function archiveBrief(a: Pick<ArchiveInfo, 'kind' | 'error' | 'imported' | 'safeToRemove' | 'remedy' | 'removalWarnings'>, who = 'k3s'): string {
  // Allowed, but what the removal sets off is the story (shared/removalVerdict: never "loses nothing" beside it).
  if (a.safeToRemove && a.removalWarnings?.length) return `removable, but ${a.removalWarnings[0]!.brief}`;
  if (a.safeToRemove) return 'safe to remove: removing it loses nothing';
  if (a.kind === 'prepull') return 'a pre-pull list, not an archive: removed only with --force';
  if (a.kind === 'ignored') return `${who} ignores this file: removed only with --force`;
  if (a.error) return 'its index cannot be read';
  if (!a.imported) return `${who} has not imported all it brings: it holds the only copy`;
  if (a.remedy) return 'its images are not durably pinned yet';
  return 'removing it would lose an image or its pin';
}
