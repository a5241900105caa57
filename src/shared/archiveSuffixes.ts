// Which files in a k3s images dir k3s acts on, matched exactly as the node's k3s release does
// (docs/k3s-facts.md, "What k3s does to images at every start"). Releases since k3s PR #12237
// (v1.30.13, v1.31.9, v1.32.5, v1.33.1 on) walk subfolders and match the suffix
// case-sensitively, so `foo.TAR` and `foo.tar.xz` are ignored; older releases read only the top
// level and matched case-insensitively, so there `foo.TAR` is imported and `sub/foo.tar` is not.
// The walk comes from shared/versions.
import type { StartupWalk } from './versions';

export type ArchiveCompression = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'lz4';

export type ImagesDirEntryKind =
  | { kind: 'archive'; compression: ArchiveCompression }
  | { kind: 'prepull' }
  | { kind: 'ignored' };

/** The archive suffixes k3s imports, in the order k3s lists them. */
export const ARCHIVE_SUFFIXES = ['.tar', '.tar.lz4', '.tar.bz2', '.tbz', '.tar.gz', '.tgz', '.tar.zst', '.tzst'] as const;

/** Suffix of a pre-pull list (one image reference per line, pulled through CRI). */
export const PREPULL_SUFFIX = '.txt';

export const COMPRESSION_BY_SUFFIX: Readonly<Record<(typeof ARCHIVE_SUFFIXES)[number], ArchiveCompression>> = {
  '.tar': 'none',
  '.tar.lz4': 'lz4',
  '.tar.bz2': 'bzip2',
  '.tbz': 'bzip2',
  '.tar.gz': 'gzip',
  '.tgz': 'gzip',
  '.tar.zst': 'zstd',
  '.tzst': 'zstd',
};

/**
 * Classifies a path in the images dir (or a bare file name) as the given start-up walk does; the
 * default is the walk of current releases. For the older top-level walk, `path` must be relative
 * to the images dir: anything in a subfolder is ignored there.
 */
export function classifyImagesDirPath(path: string, walk: StartupWalk = 'recursive-case-sensitive'): ImagesDirEntryKind {
  const slash = path.lastIndexOf('/');
  if (walk === 'top-level-case-insensitive' && slash >= 0) return { kind: 'ignored' };
  // Only the last path component counts: a directory called `x.tar/` does not make its files archives.
  const raw = path.slice(slash + 1);
  const name = walk === 'top-level-case-insensitive' ? raw.toLowerCase() : raw;
  // First match wins; `.tar.gz` cannot also end in `.tar`, so the order is irrelevant.
  for (const suffix of ARCHIVE_SUFFIXES) {
    if (name.endsWith(suffix)) return { kind: 'archive', compression: COMPRESSION_BY_SUFFIX[suffix] };
  }
  if (name.endsWith(PREPULL_SUFFIX)) return { kind: 'prepull' };
  return { kind: 'ignored' };
}
