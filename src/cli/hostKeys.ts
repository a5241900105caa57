// --accept-new-host-key[=SHA256:…]: first contact trusts only the key the user checked.
//   - with fingerprints (the flag repeated, one per new host of a jump chain): a host not yet in
//     known_hosts is recorded only if it presents one of them;
//   - bare: each new host's fingerprint is shown and the person at the terminal answers y/N;
//     without a terminal nothing is recorded and the error names the exact flag to pass (exit 3).
// A key that is on record is verified as always; a changed key is refused whatever the flag says.
import { InvalidArgumentError, Option } from 'commander';
import { HoldfastError } from '../core/errors';
import { CHECK_BEFORE_TRUST, isFingerprint, normalizeFingerprint, unknownHost, type AcceptNewHostKey, type PresentedHostKey } from '../core/ssh/hostKey';
import { hostKeyFingerprint } from '../core/ssh/knownHosts';
import type { SshConnection } from '../core/ssh/connect';
import { readLine, type PromptStreams } from './prompt';
import { terminalSafe } from './format';
import { wrapLine } from './fit';
import { logger } from '../core/log';

const log = logger('cli');

export interface HostKeyAcceptance {
  /** The bare flag was given: ask for every new host that presents none of the fingerprints. */
  ask: boolean;
  fingerprints: string[];
}

// What commander passes for the bare flag (it runs the preset through the parser too).
const BARE = '';

function collect(value: string, prev: HostKeyAcceptance | undefined): HostKeyAcceptance {
  const acc = prev ?? { ask: false, fingerprints: [] };
  if (value === BARE) return { ...acc, ask: true };
  if (!isFingerprint(value)) {
    throw new InvalidArgumentError(
      'expected a SHA256 fingerprint as ssh-keygen -lf prints it (SHA256: and 43 characters); put the flag after the node name, or write --accept-new-host-key=SHA256:….',
    );
  }
  return { ...acc, fingerprints: [...acc.fingerprints, normalizeFingerprint(value)] };
}

/** The option as node add and node edit take it. */
export function acceptNewHostKeyOption(): Option {
  return new Option(
    '--accept-new-host-key [fingerprint]',
    // The long form (one flag per new host of a --jump chain, the terminal question) is in the
    // notes of node add's and node edit's help.
    'trust a new host key with this SHA256 fingerprint; bare: ask',
  )
    .preset(BARE)
    .argParser(collect);
}

/**
 * What the SSH layer gets for the parsed option (undefined: record nothing new). It is asked
 * only about hosts not yet on record, and says on stderr which host (which hop) each key it
 * accepts belongs to.
 */
export function hostKeyAcceptance(o: HostKeyAcceptance | undefined, io: PromptStreams = { input: process.stdin, output: process.stderr }): ((key: PresentedHostKey) => Promise<boolean>) | undefined {
  if (!o) return undefined;
  const listed = new Set(o.fingerprints);
  return async (key) => {
    const yes = listed.has(key.fingerprint) || (o.ask ? await confirmOnTerminal(key, io) : false);
    if (!yes && !o.ask) throw unknownHost(key, o.fingerprints);
    if (yes) io.output.write(`${fitted(io, `recording host key ${key.keyType} ${key.fingerprint} of ${terminalSafe(key.label ?? `${key.host}:${key.port}`)} in ${key.knownHostsFile}`)}\n`);
    return yes;
  };
}

/** A line for stderr: wrapped at words on a terminal (its width), as it is elsewhere (a log). */
function fitted(io: PromptStreams, line: string): string {
  const columns = (io.output as NodeJS.WritableStream & { isTTY?: boolean; columns?: number }).columns;
  return typeof columns === 'number' && columns > 0 ? wrapLine(line, columns) : line;
}

function terminal(io: PromptStreams): boolean {
  return Boolean(io.input.isTTY && typeof io.input.setRawMode === 'function');
}

async function confirmOnTerminal(key: PresentedHostKey, io: PromptStreams): Promise<boolean> {
  const who = terminalSafe(key.label ?? `${key.host}:${key.port}`);
  if (!terminal(io)) {
    throw new HoldfastError('HOST_KEY_UNKNOWN', `${who} is not in ${key.knownHostsFile}; it presented host key ${key.keyType} ${key.fingerprint}, and there is no terminal to confirm it on.`, {
      fingerprint: key.fingerprint,
      // The flag to re-run with is added where the error is read (accessText), as for any unknown key.
      hint: CHECK_BEFORE_TRUST,
    });
  }
  io.output.write(
    `The authenticity of ${who} can't be established.\n` +
      `${key.keyType} key fingerprint is ${key.fingerprint}.\n` +
      `It is not in ${key.knownHostsFile} (OpenSSH trusts that file too).\n`,
  );
  const answer = await readLine('Record this key and connect? [y/N] ', { echo: true }, io).catch((err: unknown) => (log.debug('no answer to the host key question: refused', { err }), ''));
  return /^(y|yes)$/i.test(answer.trim());
}

/**
 * The acceptance of hostKeyAcceptance, and afterwards the fingerprints it recorded: node edit
 * says whether the flag trusted a key or found it on record already.
 */
export function trackedAcceptance(o: HostKeyAcceptance | undefined, io?: PromptStreams): { accept: AcceptNewHostKey | undefined; recorded: string[] } {
  const recorded: string[] = [];
  const accept = hostKeyAcceptance(o, io);
  if (!accept) return { accept, recorded };
  return {
    recorded,
    accept: async (key) => {
      const yes = await accept(key);
      if (yes) recorded.push(key.fingerprint);
      return yes;
    },
  };
}

/** The host keys a connection verified: the node's, then each jump host's on its way. */
export function verifiedKeys(ssh: Pick<SshConnection, 'hostKey' | 'via'>): string[] {
  const keys = [hostKeyFingerprint(ssh.hostKey)];
  for (let hop = ssh.via; hop; hop = hop.via) keys.push(hop.hostKeyFingerprint);
  return keys;
}

/**
 * --accept-new-host-key=FP where every key was on record already: FP must be one of them, or the
 * key the person checked is not the one the node offers (nothing is saved then).
 */
export function refuseUnmatched(o: HostKeyAcceptance, node: string, keys: readonly string[], recorded: readonly string[]): void {
  if (recorded.length > 0 || o.fingerprints.length === 0 || o.fingerprints.some((fp) => keys.includes(fp))) return;
  const given = o.fingerprints.join(', ');
  throw new HoldfastError('REFUSED', `${node} offers host key ${keys[0]}, already on record, not ${o.fingerprints.length === 1 ? 'the fingerprint' : 'any of the fingerprints'} you gave (${given}): nothing was recorded or saved.`, {
    fingerprint: keys[0]!,
    hint: `Check the fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub): if it is ${keys[0]}, the key on record is the node's and there is nothing to trust.`,
  });
}
