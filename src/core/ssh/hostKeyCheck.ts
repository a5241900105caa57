// ssh2's hostVerifier for one connection: the presented host key checked against known_hosts by
// verifyHostKey (hostKey.ts), a first-contact question paused on the connection deadline, and a
// re-key with a different key refused. Separate from connect.ts because ssh2 accepts ANY host key
// unless this runs, so the one place that decides it should be short enough to read in one go;
// hostKey.ts holds the known_hosts rules, this file wires them into a live handshake.
import { HoldfastError } from '../errors';
import { logger } from '../log';
import { verifyHostKey, type AcceptNewHostKey } from './hostKey';
import { hostKeyFingerprint } from './knownHosts';

const log = logger('ssh');

/** What the verifier learnt; the connection reads it (fingerprint once ready, error when it fails). */
export interface HostKeyState {
  /** SHA256:… of the key verified at login. */
  fingerprint: string | null;
  /** The verified key itself (SSH wire format): what a second, native client must be shown. */
  keyBlob: Buffer | null;
  /** Why the key was refused: reported instead of ssh2's own error. */
  error: HoldfastError | null;
}

export function newHostKeyState(): HostKeyState {
  return { fingerprint: null, keyBlob: null, error: null };
}

export interface HostVerifierOptions {
  knownHosts: string;
  host: string;
  port: number;
  acceptNewHostKey?: AcceptNewHostKey;
  /** How messages name the server. */
  where: string;
  state: HostKeyState;
  /** Runs a question to a person with the connection deadline paused. */
  asking: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Called when a key is presented (the handshake is under way). */
  onPresented(): void;
  /** Called once the key is verified (authentication comes next). */
  onVerified(): void;
}

/** An async ssh2 hostVerifier: ssh2 waits for verify(); anything but an explicit ok refuses the key. */
export function hostVerifier(o: HostVerifierOptions): (key: Buffer, verify: (ok: boolean) => void) => void {
  const { state, where } = o;
  return (key, verify) => {
    o.onPresented();
    const presented = hostKeyFingerprint(key);
    if (state.fingerprint !== null && presented !== state.fingerprint) {
      // Re-key with a different host key than the one verified at login.
      state.error = new HoldfastError('HOST_KEY_CHANGED', `${where} switched to another host key (${presented}) during the session.`, {
        fingerprint: presented,
        expectedFingerprint: state.fingerprint,
      });
      verify(false);
      return;
    }
    const acceptNew = o.acceptNewHostKey ?? false;
    verifyHostKey({
      knownHostsFile: o.knownHosts,
      host: o.host,
      port: o.port,
      keyBlob: key,
      // While a person looks at the fingerprint the clock stops, as for passwords.
      acceptNew: typeof acceptNew === 'function' ? (k) => o.asking(() => acceptNew(k)) : acceptNew,
      label: where,
    }).then(
      (verdict) => {
        state.fingerprint = verdict.fingerprint;
        state.keyBlob = Buffer.from(key);
        log.debug('host key verified', { where, fingerprint: verdict.fingerprint });
        o.onVerified();
        verify(true);
      },
      (err: unknown) => {
        state.error =
          err instanceof HoldfastError
            ? err
            : new HoldfastError('INTERNAL', `Host key check for ${where} failed: ${(err as Error)?.message ?? String(err)}.`, { cause: err });
        verify(false);
      },
    );
  };
}
