// Long work (imports, uploads) with per-node progress, results and options.
import type { ImportOptions, ImportTuning } from '../importOptions';
import type { LocalArchive } from './archives';
import type { ErrorInfo } from './errors';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export type ImportPhase = 'queued' | 'checking' | 'uploading' | 'verifying' | 'importing' | 'pinning' | 'removing' | 'done';

/** One node's part of a job. */
export interface JobNodeProgress {
  node: string;
  state: JobState;
  phase: ImportPhase;
  bytesDone: number;
  bytesTotal: number;
  /** Bytes per second over the last few seconds. */
  rate: number;
  /** Seconds left for this node's upload, null when unknown. */
  eta: number | null;
  message: string;
  /** Something about this node's run to tell the person, once: e.g. why a partial upload was not resumed. */
  notice?: string;
  error?: ErrorInfo;
  /** What the run did on this node, once it succeeded. */
  result?: JobNodeResult;
}

/** One node's outcome of a job that succeeded there (what the upload and import commands print). */
export interface JobNodeResult {
  /** Where the archive is in the images dir. */
  relPath: string;
  sha256: string;
  /** false: the archive was already there (or, for an import, nothing needed doing). */
  uploaded: boolean;
  /** Bytes an earlier run had already sent (0: none, or started over). */
  resumedFrom: number;
  /** One sentence: what was done ("uploaded and imported, 4 references pinned durably…"). */
  summary: string;
  /** Why the archive went under another name than its own. */
  renamed?: string;
  /** What the node makes of the result (e.g. a containerd that ignores every pin), one sentence each. */
  warnings?: string[];
}

/** How a job was asked for: the import's options, and how the CLI tuned it (parallel, timeout: an import's, see importOptions.ts). */
export interface JobOptions extends ImportOptions, ImportTuning {
  /** The name in the images dir (an upload; default the file's name). */
  as?: string;
}

/** Long work owned by main (or the server), with progress and cancel; survives the UI leaving. */
export interface Job {
  id: string;
  /** import: the guided import (the app's wizard, the import command); upload: the upload command, one node, no import. */
  kind: 'import' | 'upload';
  title: string;
  state: JobState;
  createdAt: string;
  finishedAt: string | null;
  /** 0..1 across all nodes. */
  progress: number;
  nodes: JobNodeProgress[];
  /** The archive as inspected before the job started (format, compression, images: when the service inspected it). */
  archive: { path: string; size: number; sha256: string | null; format?: LocalArchive['format']; compression?: LocalArchive['compression']; images?: number };
  options: JobOptions;
}
