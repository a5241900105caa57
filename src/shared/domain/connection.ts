// A node's connection as the views see it, and the secrets asked for while connecting.
import type { ErrorInfo } from './errors';
import type { NodeInfo } from './nodes';

export type NodeConnState = 'unknown' | 'connecting' | 'connected' | 'error';

export interface NodeStatus {
  name: string;
  state: NodeConnState;
  info?: NodeInfo;
  error?: ErrorInfo;
}

/** A secret the app must ask the person for while connecting (answered once, never shown again). */
export interface CredentialRequest {
  id: string;
  kind: 'passphrase' | 'password' | 'keyboard-interactive';
  /** What is asked for: the key file, or user@host. */
  subject: string;
  prompts: { prompt: string; echo: boolean }[];
  instructions?: string;
}
