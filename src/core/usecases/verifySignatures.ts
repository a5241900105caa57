// Checking the images already on a node against signatures the technician carries (#48 item 6):
// the same keys, bundles and layouts as import, the same binding rule (shared/signatures), the
// verdict recorded as the same provenance labels. Read-only apart from those labels: no pin, no
// image, no file on the node changes.
import { imageName, isImageIdRecord } from '../../shared/imageReference';
import { referenceMismatch, type NodeVerification, type VerifiedImage } from '../../shared/signatures';
import type { NodeSession } from '../node/session';
import { openSignatureLayout } from '../signatures/archive';
import { readPublicKey, type GivenKey } from '../signatures/keys';
import { readBundleFiles, verifyImageSignatures, type SignatureSources } from '../signatures/verify';
import { isSignatureTagName, recordSignatures } from './import/signatures';

/** What the technician carries, read once on this machine for every node checked. */
export interface TrustMaterial {
  keys: GivenKey[];
  sources: SignatureSources;
}

/** Reads the keys, detached bundles and signature layouts (directories or archives); nothing goes on the network. */
export async function readTrustMaterial(o: { keys: readonly string[]; bundles?: readonly string[] | undefined; layouts?: readonly string[] | undefined }): Promise<TrustMaterial> {
  const keys = await Promise.all(o.keys.map((k) => readPublicKey(k)));
  const bundles = await readBundleFiles(o.bundles ?? []);
  const layouts = [];
  for (const p of o.layouts ?? []) layouts.push(await openSignatureLayout(p));
  return { keys, sources: { bundles, layouts } };
}

/** An image on the node to check: its target digest and the references that share it. */
export interface ImageTarget {
  name: string;
  refs: string[];
  digest: string;
}

/**
 * The node's images by target digest, as containerd records them. A legacy `.sig` tag k3s
 * imported is a signature, not an image: left out. An image known only by CRI's sha256:<id>
 * record is checked too, though there is no reference to record the verdict on.
 */
export function imagesToVerify(refs: readonly { name: string; digest: string }[]): ImageTarget[] {
  const byDigest = new Map<string, string[]>();
  for (const r of refs) byDigest.set(r.digest, [...(byDigest.get(r.digest) ?? []), r.name]);
  const out: ImageTarget[] = [];
  for (const [digest, names] of byDigest) {
    const kept = names.filter((n) => !isSignatureTagName(n));
    if (kept.length === 0) continue;
    out.push({ name: imageName(kept, digest), refs: kept.filter((n) => !isImageIdRecord(n)), digest });
  }
  return out;
}

/** Every image on the node judged at `now`; unless `dryRun`, each verdict recorded on its references. */
export async function verifyNodeImages(session: NodeSession, trust: TrustMaterial, o: { dryRun?: boolean | undefined }, now: Date): Promise<NodeVerification> {
  const images: VerifiedImage[] = [];
  for (const t of imagesToVerify(await session.listBaseImages())) {
    const signature = await verifyImageSignatures(t.digest, trust.keys, trust.sources, now);
    const mismatch = signature.verified ? referenceMismatch(t.name, signature.reference, false) : null;
    images.push({ ...t, signature, ...(mismatch ? { warning: mismatch.text } : {}) });
  }
  const dryRun = o.dryRun === true;
  const recorded = dryRun ? 0 : await recordSignatures(session, { images: images.map((i) => ({ name: i.name, digest: i.digest, verdict: i.signature })) });
  return { node: session.def.name, dryRun, images, recorded };
}
