// Which host key algorithms to offer, in which order: the ones whose keys known_hosts records for
// this host first, as OpenSSH orders them (sshconnect2.c, order_hostkeyalgs). A server picks the
// first algorithm of the client's list it has a key for; with ssh2's fixed order (ed25519 first)
// a node that also has the ECDSA key OpenSSH recorded years ago would present ed25519, and the
// recorded ECDSA entry would make that look like a changed key — a false MITM alarm.
import { promises as fsp } from 'node:fs';
import type { ServerHostKeyAlgorithm } from 'ssh2';
import { lookupHostKeys } from './knownHosts';
import { logger } from '../log';

const log = logger('ssh');

/**
 * ssh2's default host key algorithms, in its order (ssh2 lib/protocol/constants.js,
 * DEFAULT_SERVER_HOST_KEY, with Ed25519 available as on every Node 20).
 */
export const SSH2_DEFAULT_HOST_KEY_ALGORITHMS: readonly ServerHostKeyAlgorithm[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** The key type (as known_hosts writes it) that an algorithm's signature uses. */
function keyTypeOf(algorithm: string): string {
  return algorithm === 'rsa-sha2-512' || algorithm === 'rsa-sha2-256' ? 'ssh-rsa' : algorithm;
}

/**
 * The algorithms to offer given the key types recorded for the host: those whose type is
 * recorded first, then the rest, each group in ssh2's default order. null when nothing is
 * recorded (ssh2's own default then applies unchanged).
 */
export function orderHostKeyAlgorithms(recordedTypes: Iterable<string>): ServerHostKeyAlgorithm[] | null {
  const types = new Set(recordedTypes);
  const first = SSH2_DEFAULT_HOST_KEY_ALGORITHMS.filter((a) => types.has(keyTypeOf(a)));
  if (first.length === 0) return null;
  return [...first, ...SSH2_DEFAULT_HOST_KEY_ALGORITHMS.filter((a) => !types.has(keyTypeOf(a)))];
}

/** orderHostKeyAlgorithms for host:port from the known_hosts file (missing or unreadable: null). */
export async function hostKeyAlgorithmsFor(knownHostsFile: string, host: string, port: number): Promise<ServerHostKeyAlgorithm[] | null> {
  let text: string;
  try {
    text = await fsp.readFile(knownHostsFile, 'utf8');
  } catch (err) {
    // verifyHostKey reads the file again and reports what is wrong with it.
    log.debug('known_hosts not read for key type order; ssh2 defaults', { knownHostsFile, err });
    return null;
  }
  // Revoked keys are no reason to prefer their type; cert authorities are not looked up.
  const recorded = lookupHostKeys(text, host, port).filter((e) => e.marker === null);
  return orderHostKeyAlgorithms(recorded.map((e) => e.keyType));
}
