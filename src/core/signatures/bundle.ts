// Sigstore bundles v0.3 (cosign 3's default: an OCI 1.1 referrer, or `cosign sign --bundle`):
// a DSSE envelope over an in-toto statement. @sigstore/bundle validates the bundle and
// @sigstore/verify checks the DSSE signature with a given key as the trusted key material (for
// an Ed25519 key, its signature check is Ed25519ph, as cosign 3 signs); the statement's subjects
// name the digests it signs. A bundle naming a certificate is keyless (keyless.ts).
import { bundleFromJSON, isBundleWithDsseEnvelope, type Bundle } from '@sigstore/bundle';
import { dsse } from '@sigstore/core';
import { toSignedEntity, Verifier, type SignedEntity, type TrustMaterial } from '@sigstore/verify';
import type { SignatureCheck } from '../../shared/signatures';
import { checkKeyless, isKeyless, type KeylessPolicy } from './keyless';
import { signatureShaped, verifyEd25519ph, type GivenKey } from './keys';

export const BUNDLE_MEDIA_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const IN_TOTO = 'application/vnd.in-toto+json';

const BROKEN: SignatureCheck = { format: 'bundle', verifiedBy: null, claimsGivenKey: true, signedDigests: [] };

/** The bundle's DSSE envelope and the digests its in-toto statement names (unverified). */
function parse(raw: Buffer): { bundle: Bundle; subjects: string[] } | null {
  let bundle: Bundle;
  try {
    bundle = bundleFromJSON(JSON.parse(raw.toString('utf8')));
  } catch {
    return null;
  }
  if (!isBundleWithDsseEnvelope(bundle) || bundle.content.dsseEnvelope.payloadType !== IN_TOTO) return null;
  try {
    const statement = JSON.parse(bundle.content.dsseEnvelope.payload.toString('utf8')) as { subject?: { digest?: { sha256?: unknown } }[] };
    const subjects = (statement.subject ?? []).map((s) => s.digest?.sha256).filter((d): d is string => typeof d === 'string');
    return { bundle, subjects: subjects.map((d) => `sha256:${d}`) };
  } catch {
    return { bundle, subjects: [] };
  }
}

/** Key-based trust: the given key is the only key material; no log, CA or timestamp is trusted. */
function trustIn(key: GivenKey): TrustMaterial {
  return {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: () => ({ publicKey: key.key, validFor: () => true }),
  };
}

/**
 * The bundle as @sigstore/verify checks it. With an Ed25519 key only the signature primitive is
 * swapped for Ed25519ph over the same DSSE pre-authentication encoding; every other check stays.
 */
function entityFor(bundle: Bundle, key: GivenKey): SignedEntity {
  const entity = toSignedEntity(bundle);
  if (key.kind !== 'ed25519' || !isBundleWithDsseEnvelope(bundle)) return entity;
  const env = bundle.content.dsseEnvelope;
  const pae = dsse.preAuthEncoding(env.payloadType, env.payload);
  const content = entity.signature;
  const signature = content.signature;
  return {
    ...entity,
    signature: {
      signature,
      compareSignature: (s) => content.compareSignature(s),
      compareDigest: (d) => content.compareDigest(d),
      verifySignature: (k) => content.verifySignature(k) || verifyEd25519ph(key, pae, signature),
    },
  };
}

function verifiesWith(bundle: Bundle, key: GivenKey): boolean {
  try {
    new Verifier(trustIn(key), { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 }).verify(entityFor(bundle, key));
    return true;
  } catch {
    return false;
  }
}

/** The digests a bundle says it signs, before any verification: how a detached bundle finds its image. */
export function bundleSubjects(raw: Buffer): string[] {
  return parse(raw)?.subjects ?? [];
}

/** A keyless bundle against the identity policy; with no policy, a signer nobody named. */
function checkKeylessBundle(bundle: Bundle, subjects: string[], keyless: KeylessPolicy | undefined): SignatureCheck {
  const r = keyless ? checkKeyless(bundle, keyless) : { signer: null, claimsIdentity: false };
  if (r.signer !== null) return { format: 'bundle', verifiedBy: r.signer, keyless: true, claimsGivenKey: true, signedDigests: subjects };
  return { format: 'bundle', verifiedBy: null, keyless: true, claimsGivenKey: r.claimsIdentity, signedDigests: [] };
}

/** Verifies one bundle against every key, or a keyless one against the identity policy. */
export function checkBundle(raw: Buffer, keys: readonly GivenKey[], keyless?: KeylessPolicy): SignatureCheck {
  const parsed = parse(raw);
  if (!parsed) return BROKEN;
  const { bundle, subjects } = parsed;
  if (isKeyless(bundle)) return checkKeylessBundle(bundle, subjects, keyless);
  const by = keys.find((k) => verifiesWith(bundle, k));
  if (by) return { format: 'bundle', verifiedBy: by.fingerprint, claimsGivenKey: true, signedDigests: subjects };
  const hint = bundle.verificationMaterial.content.$case === 'publicKey' ? bundle.verificationMaterial.content.publicKey.hint : undefined;
  const sig = isBundleWithDsseEnvelope(bundle) ? bundle.content.dsseEnvelope.signatures[0]?.sig : undefined;
  const tampered = keys.some((k) => k.hint === hint) || !sig || !signatureShaped(sig);
  return { format: 'bundle', verifiedBy: null, claimsGivenKey: tampered, signedDigests: [] };
}
