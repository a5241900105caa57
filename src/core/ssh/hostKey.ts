// Host key verification policy: what ssh does with StrictHostKeyChecking=yes, plus an explicit,
// fingerprint-bound "accept new" step (the cases are on verifyHostKey). Holdfast is stricter than
// OpenSSH, which offers to add a key of a type not yet on record: a host on record that presents a
// key we have never seen is treated as changed. That is safe because the connection offers the
// recorded key types first (hostKeyAlgorithms.ts), as OpenSSH does, so a server holding the
// recorded key presents it.
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
import { shellLine } from '../../shared/shellQuote';

/** The key an unknown host presented, as a person is asked to confirm it. */
export interface PresentedHostKey {
  host: string;
  port: number;
  keyType: string;
  /** SHA256:… */
  fingerprint: string;
  knownHostsFile: string;
  /** How messages name the server (e.g. "jump host bastion (10.0.0.1:22)"), if the caller said. */
  label?: string;
}

/**
 * Whether to record an unknown host's key:
 *   - a fingerprint, or several (one per hop of a jump chain): only a key with one of them;
 *   - a function: asked with the presented key (e.g. a y/N question on a terminal); it may also
 *     throw a HoldfastError to refuse with its own words;
 *   - true: any key (only for callers that verified the key some other way).
 */
export type AcceptNewHostKey = boolean | string | readonly string[] | ((key: PresentedHostKey) => Promise<boolean>);

export interface VerifyHostKeyInput {
  knownHostsFile: string;
  host: string;
  port: number;
  /** Raw public key blob the server presented. */
  keyBlob: Buffer;
  acceptNew: AcceptNewHostKey;
  /** For messages and the confirmation question. */
  label?: string;
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

/** Whether s reads as an OpenSSH SHA-256 fingerprint (43 base64 characters, optional prefix/padding). */
export function isFingerprint(s: string): boolean {
  return /^(SHA256:)?[A-Za-z0-9+/]{43}=?$/i.test(s.trim());
}

/**
 * The hint of a host key refused as unknown. How to trust it is the caller's to say, where it is
 * read (the CLI's command, the app's button): the error's fingerprint and `access` carry it.
 */
export const CHECK_BEFORE_TRUST = 'Check the fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub) before you trust it.';

/** The exact flag that accepts this key, as the CLI takes it. */
export function acceptFlagFor(fingerprint: string): string {
  return `${ACCEPT_NEW_HINT_FLAG}=${fingerprint}`;
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

/**
 *   - key on record for this host            -> ok
 *   - key on record as @revoked              -> refused (REFUSED), whatever acceptNew says
 *   - host on record with any other key      -> refused (HOST_KEY_CHANGED), whatever acceptNew says
 *   - host not on record                     -> refused (HOST_KEY_UNKNOWN) unless acceptNew says
 *                                               yes for this very key: one of the fingerprints the
 *                                               user checked, or a person confirmed it when asked;
 *                                               then the key is appended to the known_hosts file.
 */
export async function verifyHostKey(input: VerifyHostKeyInput): Promise<HostKeyVerdict> {
  const { knownHostsFile, host, port, keyBlob, acceptNew } = input;
  const fingerprint = hostKeyFingerprint(keyBlob);
  const keyType = blobKeyType(keyBlob);
  if (keyType === null) {
    throw new HoldfastError('REFUSED', `${where(host, port)} presented a malformed host key.`, { fingerprint });
  }

  type Pending = { ask: (k: PresentedHostKey) => Promise<boolean>; presented: PresentedHostKey };
  return withFileLock(knownHostsFile, async (): Promise<HostKeyVerdict | Pending> => {
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
            `only then remove the old entry at ${knownHostsFile} line ${lines} (${shellLine(['ssh-keygen', '-R', formatHostForHint(host, port), '-f', knownHostsFile])}) and trust the new key.`,
        },
      );
    }

    const presented: PresentedHostKey = { host, port, keyType, fingerprint, knownHostsFile, ...(input.label ? { label: input.label } : {}) };
    const given = typeof acceptNew === 'string' ? [acceptNew] : Array.isArray(acceptNew) ? (acceptNew as readonly string[]) : [];
    const listed = given.some((fp) => fp !== '' && normalizeFingerprint(fp) === fingerprint);
    if (acceptNew === true || listed) return record(presented, keyBlob);
    if (typeof acceptNew === 'function') return { ask: acceptNew, presented };
    throw unknownHost(presented, given.filter((fp) => fp !== ''));
  }).then(async (v) => {
    if (!('ask' in v)) return v;
    // A person is asked outside the file's lock (they may take their time), then the file is
    // read again: the host may have been recorded meanwhile, even with another key.
    if (!(await v.ask(v.presented))) {
      throw new HoldfastError('HOST_KEY_UNKNOWN', `${describe(v.presented)} presented host key ${keyType} ${fingerprint}, which was not accepted.`, {
        fingerprint,
        hint: CHECK_BEFORE_TRUST,
      });
    }
    return verifyHostKey({ ...input, acceptNew: [fingerprint] });
  });
}

// Messages name host:port: a jump hop's error is prefixed with the hop by its caller.
function describe(k: PresentedHostKey): string {
  return where(k.host, k.port);
}

async function record(k: PresentedHostKey, keyBlob: Buffer): Promise<HostKeyVerdict> {
  await appendKnownHost(k.knownHostsFile, formatKnownHostsLine(k.host, k.port, k.keyType, keyBlob));
  return { status: 'recorded', fingerprint: k.fingerprint, keyType: k.keyType, line: null };
}

/** The refusal of a host not on record whose key has none of the `given` fingerprints. */
export function unknownHost(k: PresentedHostKey, given: readonly string[]): HoldfastError {
  const { fingerprint, keyType, knownHostsFile } = k;
  if (given.length > 0) {
    // The fingerprints may be meant for other hosts of a jump chain (one per new hop).
    const list = given.map(normalizeFingerprint).join(', ');
    return new HoldfastError('HOST_KEY_UNKNOWN', `${describe(k)} is not in ${knownHostsFile}; it presented host key ${keyType} ${fingerprint}, not ${given.length === 1 ? 'the fingerprint' : 'any of the fingerprints'} you accepted (${list}).`, {
      fingerprint,
      hint:
        `If you meant ${given.length === 1 ? 'it' : 'one of them'} for this host, do not connect: its key is another. ` +
        `If not (another host of a jump chain), check this host's fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub) before you trust it too.`,
    });
  }
  return new HoldfastError('HOST_KEY_UNKNOWN', `${describe(k)} is not in ${knownHostsFile}; it presented host key ${keyType} ${fingerprint}.`, {
    fingerprint,
    hint: CHECK_BEFORE_TRUST,
  });
}

function formatHostForHint(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}
