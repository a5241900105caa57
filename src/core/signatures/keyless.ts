// Keyless signatures (#48): a bundle whose verification material is a Fulcio-style certificate.
// @sigstore/verify does every check against a trusted_root.json the technician carries: the
// chain to a CA valid at signing time, the SCTs, transparency-log entries and RFC 3161
// timestamps inside the bundle, the DSSE signature, and the identity policy. Nothing is fetched.
// Holdfast only bounds the chains it hands over and words the verdict.
import type { Bundle } from '@sigstore/bundle';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { PolicyError, toSignedEntity, toTrustMaterial, Verifier, VerificationError, type SignedEntity, type TrustMaterial, type VerificationPolicy } from '@sigstore/verify';
import type { CertificateIdentity } from '../../shared/importOptions';
import { keylessSigner } from '../../shared/signatures';
import { HoldfastError } from '../errors';
import { limit, limitError } from '../limits';
import { readBounded } from './read';

/** Whose keyless signatures count (any one identity suffices), and the trust to check them with. */
export interface KeylessPolicy {
  identities: readonly CertificateIdentity[];
  trust: TrustMaterial;
}

/** What a keyless bundle proved: its signer, or why not (`claimsIdentity`: a trusted, matching signer whose evidence fails). */
export type KeylessResult = { signer: string } | { signer: null; claimsIdentity: boolean };

const TRUSTED_ROOT_MEDIA = /^application\/vnd\.dev\.sigstore\.trustedroot(\.v0\.\d+)?\+json/;

/** Refuses a certificate chain over signature.chain before any path is built from it. */
export function capChain(count: number, what: string): void {
  if (count > limit('signature.chain')) throw limitError('signature.chain', `${what} has a certificate chain of ${count.toLocaleString('en-US')} certificates`);
}

/** A Sigstore trusted root (trusted_root.json) as @sigstore/verify's trust material; `source` names it in errors. */
export function parseTrustedRoot(raw: Buffer, source: string): TrustMaterial {
  const bad = (why: string) =>
    new HoldfastError('INVALID_INPUT', `${source}: not a Sigstore trusted root (${why}).`, { hint: 'give the trusted_root.json of the Sigstore instance the images were signed with' });
  let json: { mediaType?: unknown };
  try {
    json = JSON.parse(raw.toString('utf8')) as { mediaType?: unknown };
  } catch (e) {
    throw bad(e instanceof Error ? e.message : String(e));
  }
  if (typeof json !== 'object' || json === null || typeof json.mediaType !== 'string' || !TRUSTED_ROOT_MEDIA.test(json.mediaType)) throw bad('no trusted root mediaType');
  let root: TrustedRoot;
  try {
    root = TrustedRoot.fromJSON(json);
  } catch (e) {
    throw bad(e instanceof Error ? e.message : String(e));
  }
  for (const [i, ca] of root.certificateAuthorities.entries()) capChain(ca.certChain?.certificates.length ?? 0, `${source}: certificate authority ${i + 1}`);
  for (const [i, ca] of root.timestampAuthorities.entries()) capChain(ca.certChain?.certificates.length ?? 0, `${source}: timestamp authority ${i + 1}`);
  if (root.certificateAuthorities.length === 0) throw bad('it names no certificate authority');
  try {
    return toTrustMaterial(root);
  } catch (e) {
    throw bad(e instanceof Error ? e.message : String(e));
  }
}

/** Reads and parses a trusted root file, bounded by signature.bytes. */
export async function readTrustedRoot(file: string): Promise<TrustMaterial> {
  return parseTrustedRoot(await readBounded(file, 'a Sigstore trusted root'), file);
}

/** Whether the bundle names a certificate (or chain) rather than a key: a keyless signature. */
export const isKeyless = (bundle: Bundle): boolean => bundle.verificationMaterial.content.$case !== 'publicKey';

/** The policy as @sigstore/verify applies it: its SAN check is a regular expression, so an exact identity is anchored and escaped. */
function verificationPolicy(p: CertificateIdentity): VerificationPolicy {
  const san = p.identityRegexp ?? `^${(p.identity ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  return { subjectAlternativeName: san, extensions: { issuer: p.issuer } };
}

/**
 * Any timestamp in the bundle is checked; at least one must be there, or the short-lived
 * certificate's validity cannot be judged. SCTs in the certificate are checked when present.
 */
const verifier = (trust: TrustMaterial): Verifier => new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 });

/** The same entity with its signature taken as valid: whether everything else (chain, evidence, identity) holds. */
function withSignatureAssumed(entity: SignedEntity): SignedEntity {
  const content = entity.signature;
  return { ...entity, signature: { signature: content.signature, compareSignature: (s) => content.compareSignature(s), compareDigest: (d) => content.compareDigest(d), verifySignature: () => true } };
}

/** Verifies one keyless bundle against the policy: the first identity it verifies for, or the most telling failure. */
export function checkKeyless(bundle: Bundle, p: KeylessPolicy): KeylessResult {
  if (bundle.verificationMaterial.content.$case === 'x509CertificateChain') capChain(bundle.verificationMaterial.content.x509CertificateChain.certificates.length, 'a Sigstore bundle');
  let entity: SignedEntity;
  try {
    entity = toSignedEntity(bundle);
  } catch {
    return { signer: null, claimsIdentity: true };
  }
  if (entity.timestamps.length === 0) return { signer: null, claimsIdentity: true };
  let claimsIdentity = false;
  for (const id of p.identities) {
    const r = checkIdentity(entity, id, p.trust);
    if (r.signer !== null) return r;
    claimsIdentity ||= r.claimsIdentity;
  }
  return { signer: null, claimsIdentity };
}

function checkIdentity(entity: SignedEntity, id: CertificateIdentity, trust: TrustMaterial): KeylessResult {
  const policy = verificationPolicy(id);
  try {
    const signer = verifier(trust).verify(entity, policy);
    return { signer: keylessSigner(signer.identity?.subjectAlternativeName ?? '', id.issuer) };
  } catch (e) {
    // Another CA or another identity is someone else's signature; a trusted, matching signer
    // whose signature or evidence fails is tampering.
    if (e instanceof PolicyError) return { signer: null, claimsIdentity: false };
    if (e instanceof VerificationError && e.code === 'CERTIFICATE_ERROR') return { signer: null, claimsIdentity: false };
    if (e instanceof VerificationError && e.code === 'SIGNATURE_ERROR') return { signer: null, claimsIdentity: matchesWithoutSignature(entity, trust, policy) };
    return { signer: null, claimsIdentity: true };
  }
}

function matchesWithoutSignature(entity: SignedEntity, trust: TrustMaterial, policy: VerificationPolicy): boolean {
  try {
    verifier(trust).verify(withSignatureAssumed(entity), policy);
    return true;
  } catch {
    return false;
  }
}
