// The name an import puts its archive under. Its own file name, unless k3s might never import
// a new file there: another file already holds that name (Holdfast never overwrites one, and k3s
// keeps its record of a name: its watcher re-imports a changed file only if its size changed and
// its mtime is newer — a same-size replacement was skipped until k3s #14284), or k3s's
// .cache.json still records the name from an earlier file, so a start without the watcher
// compares the new file with that record. Then a fresh name derived from the archive's SHA-256,
// the same on every run, so a re-run finds what an earlier one uploaded. Pure.
import path from 'node:path';
import { watcherImports, type FileStamp } from '../../../shared/versions';
import { cacheVerdict } from '../../../shared/importCache';
import { ARCHIVE_SUFFIXES } from '../../../shared/archiveSuffixes';
import { distroDisplayName } from '../../../shared/distro';
import type { Distro } from '../../../shared/domain/nodes';
import type { K3sImportCache, ScannedFile } from '../../archives/scan';

export interface NameChoice {
  relPath: string;
  /** Why not the archive's own name (one sentence), when it is not. */
  renamed?: string;
}

/** `bundle.tar.gz` + sha → `bundle.0123456789ab.tar.gz`: a name no other build of it takes. */
export function freshName(base: string, sha256: string): string {
  const suffix = ARCHIVE_SUFFIXES.filter((s) => base.endsWith(s)).sort((a, b) => b.length - a.length)[0] ?? '';
  return `${base.slice(0, base.length - suffix.length)}.${sha256.slice(0, 12)}${suffix}`;
}

export function chooseRemoteName(
  archive: { path: string; size: number; sha256: string },
  node: { imagesDir: string; files: Pick<ScannedFile, 'path' | 'size' | 'mtime'>[]; importCache: K3sImportCache; distroVersion: string | null; distro?: Distro },
  now = Date.now() / 1000,
): NameChoice {
  const who = distroDisplayName(node.distro ?? 'unknown');
  const own = path.basename(archive.path);
  const fresh = freshName(own, archive.sha256);
  const stamp: FileStamp = { size: archive.size, mtime: now };
  const taken = node.files.find((f) => f.path === own);
  if (taken && taken.size !== archive.size) {
    const replaced = watcherImports({ size: taken.size, mtime: taken.mtime }, stamp, node.distroVersion);
    return {
      relPath: fresh,
      renamed: `${own} on the node is another file${replaced === 'yes' ? '' : `, and ${who} keeps its record of that name (a replacement might never be imported)`}: uploaded as ${fresh}`,
    };
  }
  // Same size: maybe this very archive from an earlier run (the upload compares SHA-256s).
  if (taken) return { relPath: own };
  const abs = `${node.imagesDir.replace(/\/+$/, '')}/${own}`;
  const entry = node.importCache.enabled ? node.importCache.entries.get(abs) : undefined;
  if (entry !== undefined) {
    // The new file as the next start compares it with that entry (shared/importCache).
    const file = { abs, size: archive.size, mtime: Math.floor(now), mtimeNanos: Math.round((now % 1) * 1e9) };
    const atStart = cacheVerdict(node.importCache, file, node.distroVersion);
    if (atStart.skipped && watcherImports(null, stamp, node.distroVersion) !== 'yes') {
      return { relPath: fresh, renamed: `${who}'s .cache.json still records an earlier ${own}, which the next ${who} start would compare this file with: uploaded as ${fresh}` };
    }
  }
  return { relPath: own };
}
