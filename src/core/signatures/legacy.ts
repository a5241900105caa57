// cosign's legacy signatures: a manifest tagged `sha256-<hex>.sig` whose layers are
// simple-signing payloads, each signed in the layer annotation `dev.cosignproject.cosign/signature`
// (base64). Verified with Node's crypto; the payload names the digest it signs.
import { legacySignatureTag, type SignatureCheck } from '../../shared/signatures';
import { signatureShaped, verifyWith, type GivenKey } from './keys';
import { BlobMismatch, capSignatures, type Descriptor, type SignatureLayout } from './layout';

const SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
const SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';

interface SimpleSigning {
  critical?: { identity?: { 'docker-reference'?: unknown }; image?: { 'docker-manifest-digest'?: unknown } };
}

/** One check per signature layer under the image's legacy tag(s). */
export async function legacyChecks(layout: SignatureLayout, digest: string, keys: readonly GivenKey[]): Promise<SignatureCheck[]> {
  const checks: SignatureCheck[] = [];
  const signed: { layer: Descriptor; sig: string }[] = [];
  for (const entry of layout.tagged(legacySignatureTag(digest))) {
    const manifest = await layout.manifest(entry).catch(tampered);
    if (!manifest) checks.push(TAMPERED);
    for (const layer of manifest?.layers ?? []) {
      const sig = layer.annotations?.[SIGNATURE_ANNOTATION];
      if (layer.mediaType === SIMPLE_SIGNING && sig !== undefined) signed.push({ layer, sig });
    }
  }
  // Counted before any payload is read: a manifest of thousands of layers costs no reads.
  capSignatures(digest, signed.length, 'legacy signatures');
  for (const { layer, sig } of signed) {
    const payload = await layout.blob(layer, 'a simple-signing payload').catch(tampered);
    checks.push(payload ? checkPayload(payload, Buffer.from(sig, 'base64'), keys) : TAMPERED);
  }
  return checks;
}

const TAMPERED: SignatureCheck = { format: 'legacy', verifiedBy: null, claimsGivenKey: true, signedDigests: [] };

function tampered(e: unknown): null {
  if (e instanceof BlobMismatch) return null;
  throw e;
}

/** Verifies one simple-signing payload against every key; reads what it names only when it verifies. */
export function checkPayload(payload: Buffer, sig: Buffer, keys: readonly GivenKey[]): SignatureCheck {
  const by = keys.find((k) => verifyWith(k, payload, sig));
  if (!by) return { format: 'legacy', verifiedBy: null, claimsGivenKey: !signatureShaped(sig), signedDigests: [] };
  let doc: SimpleSigning;
  try {
    doc = JSON.parse(payload.toString('utf8')) as SimpleSigning;
  } catch {
    return { format: 'legacy', verifiedBy: by.fingerprint, claimsGivenKey: true, signedDigests: [] };
  }
  const signed = doc.critical?.image?.['docker-manifest-digest'];
  const reference = doc.critical?.identity?.['docker-reference'];
  return {
    format: 'legacy',
    verifiedBy: by.fingerprint,
    claimsGivenKey: true,
    signedDigests: typeof signed === 'string' ? [signed] : [],
    ...(typeof reference === 'string' ? { reference } : {}),
  };
}
