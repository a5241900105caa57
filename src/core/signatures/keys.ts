// The public keys a technician gives to verify images with: cosign's ECDSA P-256 PEM (what
// `cosign generate-key-pair` writes), RSA and Ed25519 PEM keys. A key is named by its
// fingerprint, the SHA-256 of its DER public key, as the verdict's `by` shows it. cosign 3 signs
// with Ed25519 keys as Ed25519ph, which Node's crypto lacks: @noble/curves verifies it.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ed25519ph } from '@noble/curves/ed25519';
import { HoldfastError } from '../errors';
import { readBounded } from './read';

export interface GivenKey {
  /** SHA-256 of the DER SubjectPublicKeyInfo, hex. */
  fingerprint: string;
  /** The same digest in base64: how a Sigstore bundle's `publicKey.hint` names its key. */
  hint: string;
  kind: 'ec' | 'rsa' | 'ed25519';
  key: KeyObject;
}

/** A PEM public key; `source` names it in the error when it is not one. */
export function parsePublicKey(pem: Buffer | string, source: string): GivenKey {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (e) {
    throw new HoldfastError('INVALID_INPUT', `${source}: not a PEM public key (${e instanceof Error ? e.message : String(e)}).`, { hint: 'give the .pub file `cosign generate-key-pair` wrote' });
  }
  const kind = key.asymmetricKeyType;
  if (kind !== 'ec' && kind !== 'rsa' && kind !== 'ed25519') {
    throw new HoldfastError('INVALID_INPUT', `${source}: a ${kind ?? 'unknown'} key; Holdfast verifies with ECDSA, RSA and Ed25519 keys.`);
  }
  const der = key.export({ type: 'spki', format: 'der' });
  const digest = createHash('sha256').update(der).digest();
  return { fingerprint: digest.toString('hex'), hint: digest.toString('base64'), kind, key };
}

/** Reads and parses a public key file, bounded by signature.bytes. */
export async function readPublicKey(file: string): Promise<GivenKey> {
  return parsePublicKey(await readBounded(file, 'a public key'), file);
}

/**
 * Whether `sig` has the shape of a signature by any key kind Holdfast verifies with: DER ECDSA,
 * 64 bytes (Ed25519), or 128 to 1024 bytes (RSA, 1024- to 8192-bit). One that has none is
 * tampering whatever the keys; one that has a shape and fails may be another key's (a legacy
 * signature names no signer).
 */
export function signatureShaped(sig: Buffer): boolean {
  return isDerEcdsa(sig) || sig.length === 64 || (sig.length >= 128 && sig.length <= 1024);
}

/** SEQUENCE { INTEGER r, INTEGER s } with exact lengths (short form, or 0x81 for P-521). */
function isDerEcdsa(sig: Buffer): boolean {
  if (sig[0] !== 0x30) return false;
  const long = sig[1] === 0x81;
  const bodyLen = long ? sig[2] : sig[1];
  let i = long ? 3 : 2;
  if (bodyLen === undefined || i + bodyLen !== sig.length) return false;
  for (let n = 0; n < 2; n++) {
    const len = sig[i + 1];
    if (sig[i] !== 0x02 || !len || len > 0x7f || i + 2 + len > sig.length) return false;
    i += 2 + len;
  }
  return i === sig.length;
}

/**
 * Ed25519ph (RFC 8032, SHA-512 pre-hash, empty context) over `data`: what cosign 3 makes with an
 * Ed25519 key, for the legacy payload and for a bundle's DSSE envelope alike.
 */
export function verifyEd25519ph(key: GivenKey, data: Uint8Array, sig: Uint8Array): boolean {
  if (key.kind !== 'ed25519' || sig.length !== 64) return false;
  try {
    // The raw 32-byte key is the end of its DER SubjectPublicKeyInfo.
    return ed25519ph.verify(sig, data, key.key.export({ type: 'spki', format: 'der' }).subarray(-32));
  } catch {
    return false;
  }
}

/** Verifies a legacy cosign signature over `payload`: SHA-256 for ECDSA and RSA; Ed25519 pure or ph. */
export function verifyWith(key: GivenKey, payload: Buffer, sig: Buffer): boolean {
  try {
    if (verify(key.kind === 'ed25519' ? null : 'sha256', payload, key.key, sig)) return true;
  } catch {
    return false;
  }
  return verifyEd25519ph(key, payload, sig);
}
