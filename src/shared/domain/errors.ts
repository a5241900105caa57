// Errors as data: a code, a message, and what lets the user on (a remedy).
import type { AccessRemedy, Remedy } from '../remedy';

export type ErrorCode =
  | 'HOST_KEY_UNKNOWN'
  | 'HOST_KEY_CHANGED'
  | 'AUTH_FAILED'
  | 'UNREACHABLE'
  | 'TIMEOUT'
  | 'CONTAINERD_UNAVAILABLE'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'INVALID_INPUT'
  | 'REFUSED'
  | 'INTERNAL';

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  /** How to get in, when the node refused Holdfast (see AccessRemedy). */
  access?: AccessRemedy;
  /** What the user can do about it, in plain words (no command line: `remedy` is the data). */
  hint?: string;
  /** SHA256:… fingerprint of the key the host presented (host key errors). */
  fingerprint?: string;
  /** SHA256:… fingerprint on record (changed host key). */
  expectedFingerprint?: string;
  /** What helps, as data (shared/remedy): the CLI words it as a command, the app as a sentence. */
  remedy?: Remedy;
  /** One line each under the message, item by item (a refused archive's images and why). */
  details?: string[];
}
