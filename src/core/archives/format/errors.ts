// The one error type the archive readers throw. `reason` is for code (UI treatment, exit codes);
// `message` is one sentence a technician can act on, starting with the reason in plain words.
import { nameLimit, type LimitName } from '../../limits';

export type ArchiveErrorReason =
  | 'corrupt'
  | 'truncated'
  | 'not-an-image-archive'
  | 'unsupported'
  | 'unsafe-path'
  | 'missing-blob'
  /** Over one of Holdfast's bounds on untrusted input (src/core/limits.ts); `limit` names it. */
  | 'over-limit';

/**
 * Why k3s would import nothing from an archive that is otherwise well-formed (today: a zstd
 * frame needing a window over k3s's 32 MiB, see zstdFrames.ts). Plain data: it is cached with
 * archive indexes and may be shown in the UI.
 */
export interface K3sImportRefusal {
  cause: 'zstd-window';
  /** One sentence, starting "k3s cannot import it: …". */
  message: string;
  /** The window the archive needs, and the most k3s decodes (bytes). */
  windowBytes: number;
  limitBytes: number;
  /** 1-based zstd frame that needs it, and that frame's byte offset in the file. */
  frame: number;
  offset: number;
}

export class ArchiveError extends Error {
  readonly reason: ArchiveErrorReason;
  /** Tar member the error is about, when there is one. */
  readonly member?: string;
  /** Set when the archive is refused because k3s could not import it (reason 'unsupported'). */
  readonly refusal?: K3sImportRefusal;
  /** Set with reason 'over-limit': which limit. */
  readonly limit?: LimitName;

  constructor(
    reason: ArchiveErrorReason,
    message: string,
    extra: { member?: string; cause?: unknown; refusal?: K3sImportRefusal; limit?: LimitName } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ArchiveError';
    this.reason = reason;
    if (extra.member !== undefined) this.member = extra.member;
    if (extra.refusal !== undefined) this.refusal = extra.refusal;
    if (extra.limit !== undefined) this.limit = extra.limit;
  }
}

/** "too large: <what was found>, over the limit <name> (<value>)": an archive over a bound. */
export function overLimit(limit: LimitName, found: string, extra: { member?: string } = {}): ArchiveError {
  return new ArchiveError('over-limit', `too large: ${found.replace(/\.$/, '')}, over ${nameLimit(limit)}`, { ...extra, limit });
}

export const isArchiveError = (e: unknown): e is ArchiveError => e instanceof ArchiveError;
