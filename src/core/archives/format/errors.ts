// The one error type the archive readers throw. `reason` is for code (UI treatment, exit codes);
// `message` is one sentence a technician can act on, starting with the reason in plain words.

export type ArchiveErrorReason =
  | 'corrupt'
  | 'truncated'
  | 'not-an-image-archive'
  | 'unsupported'
  | 'unsafe-path'
  | 'missing-blob';

export class ArchiveError extends Error {
  readonly reason: ArchiveErrorReason;
  /** Tar member the error is about, when there is one. */
  readonly member?: string;

  constructor(reason: ArchiveErrorReason, message: string, extra: { member?: string; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ArchiveError';
    this.reason = reason;
    if (extra.member !== undefined) this.member = extra.member;
  }
}

export const isArchiveError = (e: unknown): e is ArchiveError => e instanceof ArchiveError;
