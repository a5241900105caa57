// RKE2's own image lists (docs/k3s-facts.md, "Where things live on a node"): at every start, when
// the top level of its images dir holds no file but `.txt` and `.json` files, RKE2 writes one
// `<component>-image.txt` per image it pulls at start there (its runtime; on a server the control
// plane's). Its check (rke2 pkg/images checkPreloadedImages) takes any top-level file not ending in
// `.txt` or `.json` (case-sensitively) as an archive, and skips subfolders. The lists then pin their
// images at every start, and by the .txt sibling-tag trap (./listTrap) a durable tag sharing an
// image with a listed one becomes RKE2-managed. k3s writes no such lists. Holdfast sees regular
// files (and symlinks to them) only: a dangling symlink or symlinked folder at worst makes it warn.
import { distroProfile } from './distro';
import type { Distro } from './domain/nodes';

/** Whether RKE2's check takes this top-level name for an archive (anything but a list or JSON). */
function preloads(name: string): boolean {
  return !name.endsWith('.txt') && !name.endsWith('.json');
}

/**
 * Whether the node's distro writes its own image lists into the images dir at its next start,
 * given the files in that dir ('/'-separated paths relative to it, subfolders' files included:
 * only the top level counts). Never on k3s, nor on a node whose distro was not detected.
 */
export function rke2WritesLists(distro: Distro, files: readonly string[]): boolean {
  if (!distroProfile(distro).writesOwnImageLists) return false;
  return !files.some((f) => !f.includes('/') && preloads(f));
}

/** Whether removing `removed` from the images dir is what makes RKE2 write its own lists. */
export function rke2ListsAfterRemoval(distro: Distro, files: readonly string[], removed: string): boolean {
  return !rke2WritesLists(distro, files) && rke2WritesLists(distro, files.filter((f) => f !== removed));
}

/** One short clause, beside the images dir's files. */
export const RKE2_LISTS_BRIEF = 'no archive at the top level: RKE2 writes its own image lists here at its next start';

/** What those lists do and what to do about them: the second half of every long form. */
function consequence(where: string): string {
  return (
    'naming the images it pulls at start (its runtime; on a server the control plane\'s). ' +
    'Those lists pin the images they name at every start, and a durable pin on any tag of a listed image becomes RKE2-managed (stripped at the first start after the lists are gone). ' +
    `Keep an archive at the top level of the images dir to stop this, or check which images the lists name, once RKE2 has written them, ${where}.`
  );
}

/**
 * The long form for the images dir as it is now. `where`: where the reader looks at the listed
 * images, as its caller says it (the CLI's command, cli/remedyText imagesWhere; the app's tab).
 */
export function rke2ListsReason(node: string, where: string): string {
  return `The top level of the images dir of ${node} holds no archive (no file but .txt lists and .json), so at every start RKE2 writes its own <component>-image.txt lists there, ${consequence(where)}`;
}

/**
 * Said before (and when) removing the last archive at the top level of an RKE2 node's images dir:
 * short, since it stands beside the removal's own verdict (`archives --why` has the long form).
 */
export function rke2ListsRemovalWarning(node: string, removed: string): string {
  return (
    `Removing ${removed} leaves no archive at the top level of the images dir of ${node}, so at its next start RKE2 writes its own <component>-image.txt lists there; ` +
    'they take over the durable pins of every image they name. Keep an archive at the top level to stop this.'
  );
}

/** One short clause for the same warning, beside the file (a table's row; the long form above with --why). */
export const RKE2_LISTS_REMOVAL_BRIEF = 'the last top-level archive: RKE2 writes its own lists without it';

/** The notice on an RKE2 node's images dir as `archives --json` gives it (null: none). */
export interface Rke2ListsNotice {
  brief: string;
  reason: string;
}

/** The notice for a node's images dir now, or null (k3s, or an archive at the top level). */
export function rke2ListsNotice(node: string, distro: Distro, files: readonly string[], where: string): Rke2ListsNotice | null {
  return rke2WritesLists(distro, files) ? { brief: RKE2_LISTS_BRIEF, reason: rke2ListsReason(node, where) } : null;
}
