// Errors as data: a code, a message, and what lets the user on (a remedy).
import type { Distro } from './nodes';

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

/**
 * What lets Holdfast in when a node refuses it, as data (the CLI words it as the command that
 * works where it is read, the app as its own control): trust-host-key: accept the key with
 * `fingerprint` for the configured `node` (the jump host's, for a hop) once it is checked on the
 * node; sudo: reach containerd and the images dir through the node's sudo option.
 */
export type AccessRemedy = { kind: 'trust-host-key'; node: string; fingerprint: string } | { kind: 'sudo'; node: string };

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  /** How to get in, when the node refused Holdfast (see AccessRemedy). */
  access?: AccessRemedy;
  /** What the user can do about it. */
  hint?: string;
  /** SHA256:… fingerprint of the key the host presented (host key errors). */
  fingerprint?: string;
  /** SHA256:… fingerprint on record (changed host key). */
  expectedFingerprint?: string;
  /** What helps when running the same command again would not; each view words it. */
  remedy?: ErrorRemedy;
}

/**
 * k3s-start-or-direct: k3s's watcher will not import `archive` (relative to the images dir of
 * `node`) again by itself; a start of the node's `distro` imports it, or a direct delivery.
 */
export interface ErrorRemedy {
  kind: 'k3s-start-or-direct';
  node: string;
  archive: string;
  distro: Distro;
}
