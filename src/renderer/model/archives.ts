// The archives panel: what each kind of file in the images dir is, and their order.
import type { ArchiveInfo } from '../../shared/domain/archives';
import { compareText } from '../../shared/compareText';

export const ARCHIVE_KIND_TEXT: Record<ArchiveInfo['kind'], { label: string; description: string }> = {
  archive: { label: 'Archive', description: 'An image archive k3s imports (and pins) at every start.' },
  prepull: { label: 'Pre-pull list', description: 'A .txt list of references k3s pulls through the CRI at start.' },
  ignored: { label: 'Ignored', description: 'k3s skips this file (unsupported extension).' },
};

/** Archives first, then pre-pull lists, then ignored files; by path within each. */
export function sortArchives(items: readonly ArchiveInfo[]): ArchiveInfo[] {
  const rank = { archive: 0, prepull: 1, ignored: 2 } as const;
  return [...items].sort((a, b) => rank[a.kind] - rank[b.kind] || compareText(a.path, b.path));
}
