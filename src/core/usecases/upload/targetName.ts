// Is this a name k3s (or RKE2) imports an archive under? Checked before a byte is sent, for `upload --as`,
// the import's chosen name and the app alike: a suffix k3s takes as an archive (the ONE
// classification in archives/format/extensions, as the node's release walks the images dir), a
// compression that matches what the archive really is, and no hidden path segment. Path escapes
// (absolute names, `..`, NUL, backslashes) are refused by uploadTarget. The rules are pure; the
// two helpers at the end read what they need (the node's versions, the file's first bytes).
import type { FileHandle } from 'node:fs/promises';
import { firstReleases, K3S_RELEASES, startupWalk, watcherImports, type StartupWalk, type Support } from '../../../shared/versions';
import type { RemoteStat } from '../../access';
import { sniffFormat } from '../../archives/format/decompress';
import { ARCHIVE_SUFFIXES, classifyImagesDirPath, type ArchiveCompression } from '../../../shared/archiveSuffixes';
import { distroDisplayName } from '../../../shared/distro';
import { HoldfastError } from '../../errors';
import { logger } from '../../log';
import type { NodeSession } from '../../node/session';

const log = logger('upload');

const WALK_SINCE = firstReleases(K3S_RELEASES.importCache);
const SUFFIXES = ARCHIVE_SUFFIXES.join(' ');
const COMPRESSION_NAME: Record<ArchiveCompression, string> = { none: 'an uncompressed tar', gzip: 'gzip', zstd: 'zstd', bzip2: 'bzip2', lz4: 'lz4' };
const SUFFIX_FOR: Record<ArchiveCompression, string> = { none: '.tar', gzip: '.tar.gz', zstd: '.tar.zst', bzip2: '.tar.bz2', lz4: '.tar.lz4' };

export interface NameContext {
  /** How the node's release walks the images dir; 'unknown': both walks must take the name. */
  walk: StartupWalk | 'unknown';
  /** What the archive's bytes are, when known (sniffed or inspected locally). */
  compression?: ArchiveCompression | null;
  /** The node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName); k3s when not given. */
  who?: string;
}

/** `app.tar.gz` → `app.tar` with the suffix that names `compression`: the fix a refusal suggests. */
export function renamedFor(relPath: string, compression: ArchiveCompression): string {
  const slash = relPath.lastIndexOf('/');
  const base = relPath.slice(slash + 1);
  const suffix = ARCHIVE_SUFFIXES.find((s) => base.endsWith(s));
  // `y.tar.xz` → `y`, `x.txt` → `x`: drop a tar-like or last extension k3s does not take.
  const stem = suffix ? base.slice(0, -suffix.length) : base.replace(/\.tar(\.[^.]*)?$|\.[^.]*$/, '');
  return `${relPath.slice(0, slash + 1)}${stem || 'archive'}${SUFFIX_FOR[compression]}`;
}

/**
 * Throws REFUSED, saying why and what name would do, unless k3s imports an archive under
 * `relPath`. Returns warnings for what only the node's (unknown) release decides.
 */
export function checkArchiveName(relPath: string, ctx: NameContext): string[] {
  const who = ctx.who ?? 'k3s';
  const refuse = (why: string, better?: string) =>
    new HoldfastError('REFUSED', `${relPath} is not a name ${who} imports this archive under: ${why}. Nothing was sent.`, {
      hint: better ? `Upload it as ${better} (--as ${better}).` : `Name it with a suffix ${who} imports: ${SUFFIXES} (case-sensitive).`,
    });
  const segments = relPath.split('/');
  const fix = ctx.compression ? renamedFor(segments[segments.length - 1]!, ctx.compression) : undefined;
  if (segments.some((s) => s.startsWith('.'))) {
    throw refuse('a name or folder starting with "." is hidden — RKE2 skips such files, and Holdfast stages uploads under hidden names', fix);
  }
  // The suffix as current releases match it (case-sensitively); an unknown release is held to it too.
  const kind = classifyImagesDirPath(relPath, ctx.walk === 'top-level-case-insensitive' ? ctx.walk : 'recursive-case-sensitive');
  if (kind.kind === 'prepull') throw refuse(`${who} reads a .txt file as a list of image references to pull (and pin), not as an archive`, fix);
  if (kind.kind === 'ignored') {
    if (ctx.walk === 'top-level-case-insensitive' && segments.length > 1) {
      throw refuse(`this ${who} release reads only the top level of the images dir (subfolders from ${WALK_SINCE} on)`, fix);
    }
    const why =
      classifyImagesDirPath(relPath.toLowerCase()).kind === 'archive'
        ? `${who} matches archive suffixes case-sensitively since ${WALK_SINCE}`
        : `${who} ignores it (it imports only ${SUFFIXES})`;
    throw refuse(why, fix);
  }
  if (ctx.compression && kind.compression !== ctx.compression) {
    throw refuse(`the name says ${COMPRESSION_NAME[kind.compression]}, but the archive is ${COMPRESSION_NAME[ctx.compression]}: ${who} would fail to read it`, fix);
  }
  if (ctx.walk === 'unknown' && segments.length > 1) {
    return [`${relPath} is in a subfolder: ${who} releases before ${WALK_SINCE} read only the top level of the images dir, and this node's release is unknown.`];
  }
  return [];
}

/** The node's release (what its walk takes) and the local file's first bytes (what it really is). */
export async function checkUploadName(session: NodeSession, fh: FileHandle, relPath: string): Promise<string[]> {
  const info = await session.info().catch((err: unknown) => (log.debug('node versions unknown; name checked for any release', { node: session.def.name, err }), null));
  const head = Buffer.alloc(512);
  const { bytesRead } = await fh.read(head, 0, head.length, 0);
  const sniffed = sniffFormat(head.subarray(0, bytesRead));
  return checkArchiveName(relPath, { walk: startupWalk(info?.distroVersion), compression: sniffed === 'tar' ? 'none' : sniffed, who: distroDisplayName(info?.distro ?? 'unknown') });
}

/** What k3s would do with a replacement under an existing name (shared/versions watcherImports). */
const replacedText = (who: string): Record<Support, string> => ({
  no: `Even replaced, this ${who} release would never import the new file under that name: it keeps its record of the name and re-imports a changed file only if its size changed and its mtime is newer (a same-size replacement is skipped until k3s #14284).`,
  unknown: `A replacement under that name might never be imported: ${who} keeps its record of the name and re-imports a changed file only when its size and mtime say so, which depends on its release.`,
  yes: `${who} would re-import a replacement, but the images the old archive brought may be in use.`,
});

/** Why a new build must not go under an existing archive's name, for the refusal's hint. */
export async function replacementHint(session: NodeSession, existing: Pick<RemoteStat, 'size' | 'mtime'>, size: number): Promise<string> {
  const info = await session.info().catch(() => null);
  return replacedText(distroDisplayName(info?.distro ?? 'unknown'))[watcherImports({ size: existing.size, mtime: existing.mtime }, { size, mtime: Date.now() / 1000 }, info?.distroVersion)];
}
