// --accept-new-host-key[=SHA256:…]: first contact trusts only the key the user checked.
//   - with fingerprints (the flag repeated, one per new host of a jump chain): a host not yet in
//     known_hosts is recorded only if it presents one of them;
//   - bare: each new host's fingerprint is shown and the person at the terminal answers y/N;
//     without a terminal nothing is recorded and the error names the exact flag to pass (exit 3).
// A key that is on record is verified as always; a changed key is refused whatever the flag says.
import { InvalidArgumentError, Option } from 'commander';
import { HoldfastError } from '../core/errors';
import { acceptFlagFor, isFingerprint, normalizeFingerprint, unknownHost, type AcceptNewHostKey, type PresentedHostKey } from '../core/ssh/hostKey';
import { readLine, type PromptStreams } from './prompt';
import { terminalSafe } from './format';
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
export function hostKeyAcceptance(o: HostKeyAcceptance | undefined, io: PromptStreams = { input: process.stdin, output: process.stderr }): AcceptNewHostKey | undefined {
  if (!o) return undefined;
  const listed = new Set(o.fingerprints);
  return async (key) => {
    const yes = listed.has(key.fingerprint) || (o.ask ? await confirmOnTerminal(key, io) : false);
    if (!yes && !o.ask) throw unknownHost(key, o.fingerprints);
    if (yes) io.output.write(`recording host key ${key.keyType} ${key.fingerprint} of ${terminalSafe(key.label ?? `${key.host}:${key.port}`)} in ${key.knownHostsFile}\n`);
    return yes;
  };
}

function terminal(io: PromptStreams): boolean {
  return Boolean(io.input.isTTY && typeof io.input.setRawMode === 'function');
}

async function confirmOnTerminal(key: PresentedHostKey, io: PromptStreams): Promise<boolean> {
  const who = terminalSafe(key.label ?? `${key.host}:${key.port}`);
  if (!terminal(io)) {
    throw new HoldfastError('HOST_KEY_UNKNOWN', `${who} is not in ${key.knownHostsFile}; it presented host key ${key.keyType} ${key.fingerprint}, and there is no terminal to confirm it on.`, {
      fingerprint: key.fingerprint,
      hint: `Check the fingerprint on the node (ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub), then re-run with ${acceptFlagFor(key.fingerprint)}.`,
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
