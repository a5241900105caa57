// One small interface for every file operation Holdfast does in a node's images dir, so callers
// (scan, remove, upload, the k3s import cache) never branch on how the node is reached:
//   - sftp: the SSH user (root) reads and writes the images dir directly over SFTP;
//   - sudo: a non-root SSH user; every operation is one `sudo -n <program> … -- <path>` exec,
//     argv-quoted, and uploads go over SFTP into a staging dir the user owns, then are installed
//     root-owned next to the final name, verified as root and moved into place without overwriting.
import type { Readable } from 'node:stream';
import type { UploadTarget } from './paths';

export type RemoteFileType = 'file' | 'dir' | 'symlink' | 'other';

export interface RemoteStat {
  type: RemoteFileType;
  size: number;
  /** Whole seconds since the epoch (SFTP's resolution). */
  mtime: number;
  /** `inode:ctime` when the node's stat tells it (sudo access); see ListedFile.changeId. */
  changeId?: string;
}

/** A regular file (or a symlink to one) under a listed dir. */
export interface ListedFile {
  /** Relative to the listed root, '/'-separated. */
  path: string;
  abs: string;
  size: number;
  /** Whole seconds since the epoch. */
  mtime: number;
  /**
   * `inode:ctime`, when the listing gives it for free (sudo's find): any write or replacement
   * changes it, even one keeping the size and mtime (`cp -p`, `touch -r`). SFTP does not tell it.
   */
  changeId?: string;
}

export interface FreeSpace {
  free: number;
  total: number | null;
}

export interface FileAccess {
  /** local: this machine's own files (`--local`, Holdfast on the node itself; access/local.ts). */
  readonly mode: 'sftp' | 'sudo' | 'local';
  /** stat (follows symlinks) or lstat; null when the path does not exist. */
  stat(path: string, opts?: { lstat?: boolean }): Promise<RemoteStat | null>;
  /**
   * Every regular file under root, as k3s walks the images dir: recursing into real
   * subdirectories (not symlinked ones), following symlinks to files. Sorted as a depth-first
   * walk with each directory's names sorted. A missing root is an empty list.
   */
  listFiles(root: string): Promise<ListedFile[]>;
  /**
   * The sub-second part (nanoseconds) of each regular file's mtime under root, by absolute path,
   * following symlinked files as k3s does; null when the node cannot tell (no GNU find). k3s
   * compares full-precision mtimes with .cache.json's whole seconds (docs/k3s-facts.md, "The
   * import cache (.cache.json)"), and SFTP shows whole seconds only.
   */
  subSecondMtimes(root: string): Promise<ReadonlyMap<string, number> | null>;
  /** The file's bytes [0, size) as a stream (never the whole file in memory). */
  readStream(path: string, opts: { size: number }): Readable;
  /**
   * What tells this version of a listed file from another of the same size and mtime, cheaply:
   * its changeId when the listing has one, else a hash of its first and last 64 KiB (SFTP).
   */
  versionKey(file: ListedFile): Promise<string>;
  /** Hex SHA-256 computed on the node (no bytes cross the link). */
  sha256(path: string, opts?: { timeoutMs?: number }): Promise<string>;
  /** Removes one file; a missing file is not an error. */
  remove(path: string): Promise<void>;
  /** mkdir -p, mode 0755. */
  mkdirp(dir: string): Promise<void>;
  /** Free bytes on the file system holding dir; null when the node cannot tell. */
  freeSpace(dir: string): Promise<FreeSpace | null>;
  /**
   * The canonical path of an existing path, every symlink resolved, as the node sees it (SFTP
   * realpath; `sudo -n realpath -e`); null when it does not exist. Uploads compare it with the
   * images dir's, so a symlinked folder cannot carry a write outside it.
   */
  realpath(path: string): Promise<string | null>;
  /** Where an upload's bytes go and how they are moved into place. */
  uploadArea(target: UploadTarget): Promise<UploadArea>;
}

export interface UploadArea {
  /** Path the SSH user writes over SFTP (resumable). */
  readonly writePath: string;
  /** A dir outside the images dir holds writePath (sudo): its file system needs room too. */
  readonly separateDir: string | null;
  /** Makes writePath's directory (the images dir itself is made by FileAccess.mkdirp). */
  prepare(): Promise<void>;
  statWritten(): Promise<RemoteStat | null>;
  sha256Written(opts?: { timeoutMs?: number }): Promise<string>;
  removeWritten(): Promise<void>;
  /**
   * Puts the written bytes under the staging name next to the final name, owned as the final file
   * will be (sudo: `install -o root -g root -m 0644`); returns that path, to be verified.
   */
  stage(opts?: { timeoutMs?: number }): Promise<string>;
  /** Moves the staged file onto the final name, never replacing one: false if the name was taken. */
  commit(): Promise<boolean>;
  /** Removes the staged file (after a failed verification). */
  discardStaged(): Promise<void>;
}
