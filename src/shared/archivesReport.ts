// `holdfast archives NODE --json`: the files of a node's images dir, with the health of k3s's
// import cache said once for the node. Every ArchiveInfo carries that health (the app's Archives
// tab reads it from the list it has), which made the JSON repeat it for every file; the report
// lifts it out, and each file keeps every other field as before. The fleet report (shared/fleet)
// carries each node's files and health the same way.
// Each file also says its removal's tone (shared/removalVerdict: safe, caution or refused), beside
// `safeToRemove` (still true when a warning stands: the removal is allowed).
import type { ArchiveInfo } from './domain/archives';
import type { ImportCacheHealth } from './importCacheHealth';
import { proseText, type Prose, type RemedyWording } from './remedy';
import { archiveVerdict, type RemovalTone } from './removalVerdict';

/**
 * One file of the images dir, as `archives --json` gives it: an ArchiveInfo without the node's
 * cache health, with its removal's tone.
 */
export type ArchiveFile = Omit<ArchiveInfo, 'importCache'> & { removalTone: RemovalTone };

export interface ArchivesReport {
  node: string;
  /** The node's `.cache.json` health (shared/importCacheHealth); null when the images dir is empty. */
  importCache: ImportCacheHealth | null;
  archives: ArchiveFile[];
}

export function archivesReport(node: string, list: readonly ArchiveInfo[]): ArchivesReport {
  return {
    node,
    importCache: list.find((a) => a.importCache)?.importCache ?? null,
    archives: list.map(({ importCache: _health, ...file }) => ({ ...file, removalTone: archiveVerdict(file).tone })),
  };
}

/** The files with every reason in words (`word`: how a remedy in one is said, shared/remedy proseText; none: the prose alone). */
export function archivesInWords<T extends { reason: Prose }>(list: readonly T[], word?: RemedyWording): (T & { reason: string })[] {
  return list.map((a) => ({ ...a, reason: proseText(a.reason, word) }));
}
