// Which files in a k3s images dir k3s acts on, matched exactly as k3s does: by case-sensitive
// suffix of the file name (see /work/shared/k3s-image-pinning.md). `foo.TAR` and `foo.tar.xz` are
// ignored by k3s, so they are ignored here too.

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

/** Classifies a path (or bare file name) in the images dir. */
export function classifyImagesDirPath(path: string): ImagesDirEntryKind {
  // Only the last path component counts: a directory called `x.tar/` does not make its files archives.
  const name = path.slice(path.lastIndexOf('/') + 1);
  // First match wins; `.tar.gz` cannot also end in `.tar`, so the order is irrelevant.
  for (const suffix of ARCHIVE_SUFFIXES) {
    if (name.endsWith(suffix)) return { kind: 'archive', compression: COMPRESSION_BY_SUFFIX[suffix] };
  }
  if (name.endsWith(PREPULL_SUFFIX)) return { kind: 'prepull' };
  return { kind: 'ignored' };
}
