// One error type for everything the core reports to a user. `code` drives exit codes and UI
// treatment; `message` is one clear sentence; `hint` says what to do next in plain words, and
// `remedy` is that as data (no command line in core: the CLI and the app word it).
import type { ErrorCode, ErrorInfo } from '../shared/domain/errors';
import type { AccessRemedy, Remedy } from '../shared/remedy';

export class HoldfastError extends Error {
  readonly code: ErrorCode;
  /** How to get in (data, see AccessRemedy); set by whoever knows the node (NodeSession.open). */
  access?: AccessRemedy;
  readonly hint?: string;
  readonly fingerprint?: string;
  readonly expectedFingerprint?: string;
  /** What helps, as data (shared/remedy): the CLI words it as a command, the app as a sentence. */
  readonly remedy?: Remedy;
  /** One line each under the message, item by item (ErrorInfo.details). */
  readonly details?: string[];

  constructor(
    code: ErrorCode,
    message: string,
    extra: { hint?: string; fingerprint?: string; expectedFingerprint?: string; remedy?: Remedy; details?: string[]; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'HoldfastError';
    this.code = code;
    if (extra.hint !== undefined) this.hint = extra.hint;
    if (extra.fingerprint !== undefined) this.fingerprint = extra.fingerprint;
    if (extra.expectedFingerprint !== undefined) this.expectedFingerprint = extra.expectedFingerprint;
    if (extra.remedy !== undefined) this.remedy = extra.remedy;
    if (extra.details?.length) this.details = extra.details;
  }

  toInfo(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message };
    if (this.hint) info.hint = this.hint;
    if (this.fingerprint) info.fingerprint = this.fingerprint;
    if (this.expectedFingerprint) info.expectedFingerprint = this.expectedFingerprint;
    if (this.access) info.access = this.access;
    if (this.remedy) info.remedy = this.remedy;
    if (this.details) info.details = this.details;
    return info;
  }
}

/** Any thrown value as an ErrorInfo fit for the envelope (never leaks a stack). */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof HoldfastError) return err.toInfo();
  if (err && typeof err === 'object' && 'issues' in err && Array.isArray((err as { issues: unknown[] }).issues)) {
    const issues = (err as { issues: { path: PropertyKey[]; message: string }[] }).issues;
    const first = issues[0];
    const where = first && first.path.length ? `${first.path.map(String).join('.')}: ` : '';
    return { code: 'INVALID_INPUT', message: `Invalid input: ${where}${first?.message ?? 'rejected'}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL', message };
}

const ERRNO_CLAUSES: Record<string, string> = {
  ENOENT: 'it does not exist',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is not a directory',
  ELOOP: 'it is a loop of symbolic links',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EFBIG: 'the file is too large',
  EIO: 'an input/output error',
};

/** A local file operation's failure as one short clause ("it is a directory"), for messages that name the file. */
export function errnoClause(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (code && ERRNO_CLAUSES[code]) ?? (err instanceof Error ? err.message : String(err));
}
