// Whether an archive can leave the images dir, as one verdict for every view: the removal check
// (RemovalCheck: what blocks it, and what it sets off without blocking it, such as RKE2 writing its
// own image lists: ./rke2Lists) decides the tone once. A removal with a warning standing is never
// "safe… loses nothing": the app's dialog and Archives tab, the CLI's `archives` table (and its
// JSON), `rm-archive --dry-run`, `explain` and the fleet's HTML report read the same verdict.
import type { ArchiveInfo, RemovalCheck, RemovalWarning } from './domain/archives';
import type { Distro } from './domain/nodes';
import { RKE2_LISTS_REMOVAL_BRIEF, rke2ListsAfterRemoval, rke2ListsRemovalWarning } from './rke2Lists';

/** safe: nothing lost, nothing set off; caution: allowed, but a warning stands; refused: it would lose pins. */
export type RemovalTone = 'safe' | 'caution' | 'refused';

/** Each tone in a few words, inside a line ("apps.tar: safe to remove — …"); the headings say the same. */
export const REMOVAL_TONE_TEXT: Record<RemovalTone, string> = {
  safe: 'safe to remove',
  caution: 'removable, with a warning',
  refused: 'not safe to remove',
};

const heading = (tone: RemovalTone): string => REMOVAL_TONE_TEXT[tone].charAt(0).toUpperCase() + REMOVAL_TONE_TEXT[tone].slice(1);

export interface RemovalVerdict {
  tone: RemovalTone;
  /** The dialog's heading, and the Archives tab's badge. */
  heading: string;
  /** The sentence under the heading (null when refused: the problems say why). */
  detail: string | null;
  /** After the path in the CLI: "apps.tar can be removed safely". */
  clause: string;
  /** A table's SAFE TO REMOVE cell (the CLI's `archives`, the HTML report). */
  cell: 'yes' | 'yes, but' | 'no';
}

export function removalVerdict(check: Pick<RemovalCheck, 'allowed' | 'warnings'>): RemovalVerdict {
  if (!check.allowed) return { tone: 'refused', heading: heading('refused'), detail: null, clause: 'cannot be removed safely', cell: 'no' };
  if (check.warnings?.length) {
    return {
      tone: 'caution',
      heading: heading('caution'),
      detail: 'Every image it brings is in containerd, complete and durably pinned now. But:',
      clause: 'can be removed, but read the warning first',
      cell: 'yes, but',
    };
  }
  return {
    tone: 'safe',
    heading: heading('safe'),
    detail: 'Every image it brings is in containerd, complete and durably pinned: removing the file loses nothing.',
    clause: 'can be removed safely',
    cell: 'yes',
  };
}

/** The verdict on a file as the images dir's listing carries it (its check's outcome and warnings). */
export function archiveVerdict(a: Pick<ArchiveInfo, 'safeToRemove' | 'removalWarnings'>): RemovalVerdict {
  return removalVerdict({ allowed: a.safeToRemove, warnings: a.removalWarnings?.map((w) => w.reason) ?? [] });
}

/**
 * What removing `path` from a node's images dir sets off without blocking it, given every file
 * there ('/'-separated, relative): RKE2 writing its own lists once no archive is left at the top
 * level (./rke2Lists). The removal check and the listing both ask here.
 */
export function removalWarnings(node: string, distro: Distro, files: readonly string[], path: string): RemovalWarning[] {
  return rke2ListsAfterRemoval(distro, files, path) ? [{ brief: RKE2_LISTS_REMOVAL_BRIEF, reason: rke2ListsRemovalWarning(node, path) }] : [];
}
