// How core asks a person for a secret while it connects: the CLI answers on the TTY (no echo),
// the app asks in its UI. Core never stores, logs or puts in an error what a callback returns.
//
// A callback may reject (e.g. the user pressed Cancel): the connection then fails with
// AUTH_FAILED "… was cancelled". While a callback runs, the connection deadline is paused, so a
// person can take their time (the server's own LoginGraceTime still applies).

export interface KeyboardInteractivePrompt {
  /** The server's question, e.g. "Password: " or "Verification code: ". */
  prompt: string;
  /** Whether the answer may be shown while typed (false for passwords and codes). */
  echo: boolean;
}

export interface KeyboardInteractiveContext {
  user: string;
  host: string;
  port: number;
  /** The server's name and instructions for this round (often empty). */
  name: string;
  instructions: string;
}

export interface CredentialsProvider {
  /** The passphrase of an encrypted private key file (asked again, up to 3 times, if wrong). */
  passphrase?(keyPath: string): Promise<string>;
  /** The login password of user@host (asked again, up to 3 times, if refused). */
  password?(user: string, host: string): Promise<string>;
  /** One answer per prompt, in order. Without it, a round whose only prompt hides the answer is given password(). */
  keyboardInteractive?(prompts: KeyboardInteractivePrompt[], context: KeyboardInteractiveContext): Promise<string[]>;
}

/** Attempts per secret, as OpenSSH's NumberOfPasswordPrompts. */
export const CREDENTIAL_ATTEMPTS = 3;
