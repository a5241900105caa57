// Pure helpers for uploads: where the bytes go, the staging name k3s ignores, and parsing of
// the two remote commands we run (sha256sum, df). No I/O here, so every rule is unit-tested.
import path from 'node:path';
import { classifyImagesDirPath } from '../../shared/archiveSuffixes';
import { HoldfastError } from '../errors';

/** Suffix of the staging file; neither an archive suffix nor `.txt`, so k3s never imports it. */
export const PARTIAL_SUFFIX = '.holdfast-partial';

export interface UploadTarget {
  /** Path relative to the images dir, `/`-separated (e.g. `apps/web.tar.zst`). */
  relPath: string;
  /** Absolute final path on the node. */
  remotePath: string;
  /** Absolute staging path on the node: `<dir>/.<name>.holdfast-partial`. */
  stagingPath: string;
  /** Absolute directory holding both. */
  remoteDir: string;
}

/**
 * Resolves `remoteName` (relative to imagesDir, may contain subdirectories) to the final and
 * staging paths. Refuses absolute names, `.`/`..`/empty segments, NUL bytes and backslashes (a
 * name means the same thing on every node, and can never escape the images dir).
 */
export function uploadTarget(imagesDir: string, remoteName: string): UploadTarget {
  const bad = (why: string) =>
    new HoldfastError('INVALID_INPUT', `Invalid remote name ${JSON.stringify(remoteName)}: ${why}.`, {
      hint: 'Give a file name relative to the images dir, e.g. "app.tar.zst" or "apps/app.tar.zst".',
    });
  if (!path.posix.isAbsolute(imagesDir)) throw new HoldfastError('INVALID_INPUT', `The images dir ${imagesDir} is not an absolute path.`);
  if (typeof remoteName !== 'string' || remoteName.length === 0) throw bad('it is empty');
  if (remoteName.includes('\0')) throw bad('it contains a NUL byte');
  if (remoteName.includes('\\')) throw bad('it contains a backslash');
  if (remoteName.startsWith('/')) throw bad('it must be relative to the images dir');
  const segments = remoteName.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw bad('it has an empty, "." or ".." path segment');
  }
  const name = segments[segments.length - 1]!;
  if (name.endsWith(PARTIAL_SUFFIX)) throw bad(`names ending in ${PARTIAL_SUFFIX} are Holdfast's staging files`);
  const base = imagesDir.replace(/\/+$/, '') || '/';
  const remotePath = path.posix.join(base, ...segments);
  const remoteDir = path.posix.dirname(remotePath);
  const stagingPath = path.posix.join(remoteDir, stagingName(name));
  return { relPath: segments.join('/'), remotePath, stagingPath, remoteDir };
}

/** Whether the absolute, canonical path p is root itself or lies below it. */
export function isInside(root: string, p: string): boolean {
  if (root === '/') return p.startsWith('/');
  return p === root || p.startsWith(`${root}/`);
}

/** `.<name>.holdfast-partial`; asserted to be a name k3s ignores. */
export function stagingName(name: string): string {
  const staging = `.${name}${PARTIAL_SUFFIX}`;
  // The whole point of the staging name: k3s must never import (or even consider) it.
  if (classifyImagesDirPath(staging).kind !== 'ignored') {
    throw new HoldfastError('INTERNAL', `The staging name ${staging} would not be ignored by k3s.`);
  }
  return staging;
}

/**
 * The hex digest from `sha256sum -- FILE` output. GNU sha256sum escapes unusual names and then
 * prefixes the line with a backslash; the digest itself is always the first 64 hex characters.
 */
export function parseSha256sum(stdout: string): string | null {
  const m = /^\\?([0-9a-f]{64})[ \t]/.exec(stdout);
  return m ? m[1]! : null;
}

/**
 * Available bytes from `df -Pk -- DIR` (POSIX format, 1024-byte units, one line per file system,
 * never wrapped). Parsed from the numeric columns so file-system names with spaces do no harm.
 */
export function parseDfAvailable(stdout: string): number | null {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const line = lines[1];
  if (!line) return null;
  const m = /\s(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s/.exec(line + ' ');
  if (!m) return null;
  return Number(m[3]) * 1024;
}

/** Normalises a user-given expected digest (`sha256:hex` or bare hex) to lowercase hex. */
export function normaliseSha256(d: string): string {
  const hex = d.trim().toLowerCase().replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new HoldfastError('INVALID_INPUT', `${JSON.stringify(d)} is not a SHA-256 digest (64 hex characters, optionally prefixed by "sha256:").`);
  }
  return hex;
}

/**
 * Free space to keep on top of the bytes to send: 1 % of the file system, at least 64 MiB and at
 * most 1 GiB (the node still has to unpack the images, and kubelet evicts on low disk).
 */
export function safetyMargin(fsTotalBytes: number | null): number {
  const floor = 64 * 1024 * 1024;
  const ceiling = 1024 * 1024 * 1024;
  if (!fsTotalBytes || fsTotalBytes <= 0) return floor;
  return Math.min(ceiling, Math.max(floor, Math.ceil(fsTotalBytes / 100)));
}

/** Sizes in messages: the one formatter (shared/format). */
export { formatBytes } from '../../shared/format';
