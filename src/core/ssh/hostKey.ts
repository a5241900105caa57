// Host key verification policy (what ssh does with StrictHostKeyChecking=yes, plus an explicit,
// fingerprint-bound "accept new" step):
//   - key on record for this host            -> ok
//   - key on record as @revoked              -> refused (REFUSED), whatever acceptNew says
//   - host on record with any other key      -> refused (HOST_KEY_CHANGED), whatever acceptNew says
//   - host not on record                     -> refused (HOST_KEY_UNKNOWN) unless acceptNew is
//                                               true or the fingerprint the user confirmed; then
//                                               the key is appended to the known_hosts file.
// OpenSSH itself only calls it "changed" when a recorded key has the presented type; when only
// keys of other types are on record it offers to add the new one. Holdfast is stricter: a host
// that is on record but presents a key we have never seen is treated as changed.
import { promises as fsp } from 'node:fs';
import { HoldfastError } from '../errors';
import {
  appendKnownHost,
  blobKeyType,
  formatKnownHostsLine,
  hostKeyFingerprint,
  lookupHostKeys,
  type KnownHostEntry,
} from './knownHosts';

export interface VerifyHostKeyInput {
  knownHostsFile: string;
  host: string;
  port: number;
  /** Raw public key blob the server presented. */
  keyBlob: Buffer;
  /** true: record an unknown host's key; a string: record it only if it is this fingerprint. */
  acceptNew: boolean | string;
}

export interface HostKeyVerdict {
  /** known: the key was on record. recorded: the host was new and its key was just added. */
  status: 'known' | 'recorded';
  fingerprint: string;
  keyType: string;
  /** Line of the known_hosts file that holds (or now holds) the key; null when just appended. */
  line: number | null;
}

export const ACCEPT_NEW_HINT_FLAG = '--accept-new-host-key';

/** Accepts `SHA256:abc`, `abc`, and padded base64, so users can paste what they were shown. */
export function normalizeFingerprint(fp: string): string {
  const s = fp.trim().replace(/^SHA256:/i, '').replace(/=+$/, '');
  return `SHA256:${s}`;
}

// Serialise verify+append per file inside this process, so two parallel first connections to
// the same new host do not both append it.
const fileLocks = new Map<string, Promise<unknown>>();
async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const prev = fileLocks.get(file) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  fileLocks.set(file, settled);
  try {
    return await run;
  } finally {
    if (fileLocks.get(file) === settled) fileLocks.delete(file);
  }
}

async function readKnownHosts(file: string): Promise<string> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new HoldfastError('INVALID_INPUT', `Cannot read the known_hosts file ${file}: ${(err as Error).message}.`, {
      hint: 'Check the file exists and is readable by this user.',
      cause: err,
    });
  }
}

function where(host: string, port: number): string {
  return port === 22 ? host : `${host}:${port}`;
}

export async function verifyHostKey(input: VerifyHostKeyInput): Promise<HostKeyVerdict> {
  const { knownHostsFile, host, port, keyBlob, acceptNew } = input;
  const fingerprint = hostKeyFingerprint(keyBlob);
  const keyType = blobKeyType(keyBlob);
  if (keyType === null) {
    throw new HoldfastError('REFUSED', `${where(host, port)} presented a malformed host key.`, { fingerprint });
  }

  return withFileLock(knownHostsFile, async () => {
    const entries = lookupHostKeys(await readKnownHosts(knownHostsFile), host, port);
    const same = (e: KnownHostEntry) => e.keyBlob.equals(keyBlob);

    const revoked = entries.find((e) => e.marker === 'revoked' && same(e));
    if (revoked) {
      throw new HoldfastError(
        'REFUSED',
        `The host key ${fingerprint} presented by ${where(host, port)} is marked @revoked in ${knownHostsFile}.`,
        {
          fingerprint,
          hint: `The key was revoked on purpose (line ${revoked.line} of ${knownHostsFile}); do not connect until the node has a new host key.`,
        },
      );
    }

    const recorded = entries.filter((e) => e.marker === null);
    const match = recorded.find(same);
    if (match) return { status: 'known', fingerprint, keyType, line: match.line };

    if (recorded.length > 0) {
      const ref = recorded.find((e) => e.keyType === keyType) ?? recorded[0]!;
      const lines = recorded.map((e) => e.line).join(', ');
      throw new HoldfastError(
        'HOST_KEY_CHANGED',
        `The host key of ${where(host, port)} has changed: it now presents ${keyType} ${fingerprint}, ` +
          `but ${knownHostsFile} records ${ref.keyType} ${hostKeyFingerprint(ref.keyBlob)}.`,
        {
          fingerprint,
          expectedFingerprint: hostKeyFingerprint(ref.keyBlob),
          hint:
            `This can mean someone is intercepting the connection, or the node was reinstalled. ` +
            `Confirm the new fingerprint on the node itself (ssh-keygen -lf /etc/ssh/ssh_host_${keyType.replace(/^ssh-|-.*$/g, '')}_key.pub); ` +
            `only then remove the old entry at ${knownHostsFile} line ${lines} (ssh-keygen -R '${formatHostForHint(host, port)}' -f ${knownHostsFile}) and connect again.`,
        },
      );
    }

    const accepted =
      acceptNew === true || (typeof acceptNew === 'string' && normalizeFingerprint(acceptNew) === fingerprint);
    if (!accepted) {
      const mismatch = typeof acceptNew === 'string' && acceptNew !== '';
      throw new HoldfastError(
        'HOST_KEY_UNKNOWN',
        mismatch
          ? `${where(host, port)} presented host key ${keyType} ${fingerprint}, not the fingerprint you accepted (${normalizeFingerprint(acceptNew)}).`
          : `${where(host, port)} is not in ${knownHostsFile}; it presented host key ${keyType} ${fingerprint}.`,
        {
          fingerprint,
          hint: mismatch
            ? `Do not connect: check the fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub).`
            : `Check the fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub), then re-run with ${ACCEPT_NEW_HINT_FLAG} ${fingerprint}.`,
        },
      );
    }

    await appendKnownHost(knownHostsFile, formatKnownHostsLine(host, port, keyType, keyBlob));
    return { status: 'recorded', fingerprint, keyType, line: null };
  });
}

function formatHostForHint(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}
