// One image's signatures, gathered from an OCI layout (legacy `.sig` tags and OCI 1.1
// referrers) and from detached bundles, and judged by the binding rule (src/shared/signatures.ts).
// Nothing here touches the network: keys and bundles come from files the technician carries.
import { bindSignatures, type SignatureCheck, type SignatureOutcome } from '../../shared/signatures';
import { BUNDLE_MEDIA_TYPE, bundleSubjects, checkBundle } from './bundle';
import type { KeylessPolicy } from './keyless';
import type { GivenKey } from './keys';
import { BlobMismatch, capSignatures, type SignatureLayout } from './layout';
import { legacyChecks } from './legacy';
import { readBounded } from './read';

export interface SignatureSources {
  /** The OCI layout the image came in, if any. */
  layout?: SignatureLayout;
  /** More layouts carried beside it (`verify --signatures`): each searched the same way. */
  layouts?: readonly SignatureLayout[];
  /** Detached bundles (`cosign sign --bundle` output), each matched by the digest it signs. */
  bundles?: readonly Buffer[];
}

/** Reads detached bundle files, each bounded by signature.bytes. */
export async function readBundleFiles(files: readonly string[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const f of files) out.push(await readBounded(f, 'a Sigstore bundle'));
  return out;
}

async function referrerChecks(layout: SignatureLayout, digest: string, keys: readonly GivenKey[], keyless: KeylessPolicy | undefined): Promise<SignatureCheck[]> {
  const layers = (await layout.referrersOf(digest)).flatMap(({ manifest }) => (manifest.layers ?? []).filter((l) => l.mediaType === BUNDLE_MEDIA_TYPE));
  capSignatures(digest, layers.length, 'referrer bundles');
  const checks: SignatureCheck[] = [];
  for (const layer of layers) {
    const raw = await layout.blob(layer, 'a Sigstore bundle').catch((e: unknown) => {
      if (e instanceof BlobMismatch) return null;
      throw e;
    });
    checks.push(raw ? checkBundle(raw, keys, keyless) : { format: 'bundle', verifiedBy: null, claimsGivenKey: true, signedDigests: [] });
  }
  return checks;
}

/** The verdict for the image (manifest or index) `digest`, verified at `now` with the keys and the keyless policy. */
export async function verifyImageSignatures(digest: string, keys: readonly GivenKey[], sources: SignatureSources, now = new Date(), keyless?: KeylessPolicy): Promise<SignatureOutcome> {
  const checks: SignatureCheck[] = [];
  for (const layout of [...(sources.layout ? [sources.layout] : []), ...(sources.layouts ?? [])]) {
    checks.push(...(await legacyChecks(layout, digest, keys)));
    checks.push(...(await referrerChecks(layout, digest, keys, keyless)));
  }
  for (const raw of sources.bundles ?? []) {
    if (bundleSubjects(raw).includes(digest)) checks.push(checkBundle(raw, keys, keyless));
  }
  return bindSignatures(digest, checks, now.toISOString());
}
