// Whether an image's signatures vouch for it: the verdict and the binding rule (#48). A
// signature counts only if it verifies with a given key or identity AND what it signs is exactly
// the digest that will be written to the node. Reading and checking signatures is core's; this decides.
import { compareText } from './compareText';
import type { ErrorInfo } from './domain/errors';
import { SIGNATURE_LABELS } from './domain/labels';
import { isImageIdRecord, parseReference } from './imageReference';
import { protectionKey } from './protection';

export type SignatureFormat = 'bundle' | 'legacy';

/** How a verdict names a keyless signer: the certificate's identity (SAN) and its OIDC issuer. */
export const keylessSigner = (identity: string, issuer: string): string => `${identity} (${issuer})`;

/** Whether a verdict's `by` is a keyless signer rather than a key fingerprint. */
export const isKeylessSigner = (by: string): boolean => / \(.+\)$/.test(by);

/** cosign's legacy signature tag for an image digest: sha256:abc… → sha256-abc….sig. */
export const legacySignatureTag = (digest: string): string => digest.replace(':', '-') + '.sig';

/** Whether an OCI ref name is a legacy signature tag (alone or ending a full reference). */
export const isLegacySignatureTag = (refName: string): boolean => /(?:^|:)sha256-[0-9a-f]{64}\.sig$/.test(refName);

/** The reasons an image is refused, worded as the CLI and the app show them. */
export type SignatureRefusal =
  | { kind: 'no-signature' }
  | { kind: 'other-key' }
  | { kind: 'other-identity' }
  | { kind: 'does-not-verify' }
  | { kind: 'other-image'; signedDigest: string };

export type SignatureOutcome =
  | {
      verified: true;
      /** The given key's fingerprint (SHA-256 of its public key, hex), or a keyless signer (keylessSigner). */
      by: string;
      format: SignatureFormat;
      /** When it was verified (ISO 8601). */
      at: string;
      /** The reference a legacy payload names (`docker-reference`), shown, never trusted. */
      reference?: string;
    }
  | { verified: false; refusal: SignatureRefusal; reason: string; at: string };

/** What core found out about one signature of an image. */
export interface SignatureCheck {
  format: SignatureFormat;
  /** The fingerprint of the given key it verifies with, or its keyless signer; null when neither. */
  verifiedBy: string | null;
  /** Its signer is a certificate's identity, not a key (a keyless bundle). */
  keyless?: boolean;
  /**
   * Why a signature that verifies with no given key is tampering rather than another key's: it
   * is malformed, or it names its signer (a bundle's key hint) and that signer is a given key.
   */
  claimsGivenKey: boolean;
  /** The digests the signed payload names (the in-toto subjects, the simple-signing digest). */
  signedDigests: string[];
  reference?: string;
}

/** One clause per refusal: what the import command prints after the image's name. */
export function refusalText(r: SignatureRefusal): string {
  switch (r.kind) {
    case 'no-signature':
      return 'no signature';
    case 'other-key':
      return 'signed, but not by any given key';
    case 'other-identity':
      return 'signed, but not by a given identity';
    case 'does-not-verify':
      return 'signature does not verify';
    case 'other-image':
      return `signature is for ${r.signedDigest} not for this image`;
  }
}

const refuse = (refusal: SignatureRefusal, at: string): SignatureOutcome => ({ verified: false, refusal, reason: refusalText(refusal), at });

/**
 * The binding rule. Verified when one signature verifies with a given key and signs exactly
 * `digest` (bundles first, then by fingerprint, so the verdict does not depend on file order).
 * Otherwise the most telling refusal: a valid signature for another digest, then tampering, then
 * another key's signature, then none at all.
 */
export function bindSignatures(digest: string, checks: readonly SignatureCheck[], at: string): SignatureOutcome {
  const valid = checks.filter((c) => c.verifiedBy !== null);
  const bound = valid
    .filter((c) => c.signedDigests.includes(digest))
    .sort((a, b) => compareText(a.format, b.format) || compareText(a.verifiedBy!, b.verifiedBy!));
  const best = bound[0];
  if (best) return { verified: true, by: best.verifiedBy!, format: best.format, at, ...(best.reference === undefined ? {} : { reference: best.reference }) };
  const elsewhere = valid.find((c) => c.signedDigests.length > 0);
  if (elsewhere) return refuse({ kind: 'other-image', signedDigest: elsewhere.signedDigests[0]! }, at);
  if (valid.length > 0 || checks.some((c) => c.claimsGivenKey)) return refuse({ kind: 'does-not-verify' }, at);
  if (checks.length > 0) return refuse(checks.every((c) => c.keyless) ? { kind: 'other-identity' } : { kind: 'other-key' }, at);
  return refuse({ kind: 'no-signature' }, at);
}

/**
 * A legacy payload names the repository it was signed as (`docker-reference`). Mirrors rename
 * images, so a different name is a warning, or an error when the technician asks for strict
 * references. null when the names agree or the payload names none. Only the digest binds.
 */
export function referenceMismatch(imported: string, signed: string | undefined, strict: boolean): { level: 'warning' | 'error'; text: string } | null {
  if (signed === undefined || sameRepository(imported, signed)) return null;
  return { level: strict ? 'error' : 'warning', text: `signed as ${signed}, imported as ${imported}` };
}

function sameRepository(a: string, b: string): boolean {
  try {
    const [pa, pb] = [parseReference(a), parseReference(b)];
    return pa.domain === pb.domain && pa.path === pb.path;
  } catch {
    return false;
  }
}

/** What a reference's labels say Holdfast verified at import (images --json `signature`). */
export type SignatureRecord = { verified: true; by: string; format: SignatureFormat; at: string } | { verified: false; reason: string; at: string };

/** The labels that record a verdict on the image: every key set, or removed when it does not apply. */
export function signatureLabels(v: SignatureOutcome): Record<string, string | null> {
  const L = SIGNATURE_LABELS;
  if (v.verified) return { [L.verified]: 'true', [L.by]: v.by, [L.format]: v.format, [L.at]: v.at, [L.reason]: null };
  return { [L.verified]: 'false', [L.by]: null, [L.format]: null, [L.at]: v.at, [L.reason]: v.reason };
}

/** The record a reference's labels make; null when Holdfast never verified it (or the labels are not its own). */
export function signatureRecord(labels: Readonly<Record<string, string>>): SignatureRecord | null {
  const L = SIGNATURE_LABELS;
  const at = labels[L.at];
  if (at === undefined) return null;
  const format = labels[L.format];
  const by = labels[L.by];
  if (labels[L.verified] === 'true' && by && (format === 'bundle' || format === 'legacy')) return { verified: true, by, format, at };
  if (labels[L.verified] === 'false') return { verified: false, reason: labels[L.reason] ?? 'not verified', at };
  return null;
}

/** A table cell: "key 3f1c2a4b (bundle)", "ops@example.org (bundle)", "NOT VERIFIED", or "-" when never verified. */
export function signatureBrief(r: SignatureRecord | null | undefined): string {
  if (!r) return '-';
  if (!r.verified) return 'NOT VERIFIED';
  if (!isKeylessSigner(r.by)) return `key ${r.by.slice(0, 8)} (${r.format})`;
  const identity = r.by.slice(0, r.by.lastIndexOf(' ('));
  return `${identity.length > 32 ? identity.slice(0, 31) + '…' : identity} (${r.format})`;
}

/**
 * The plain-words form every view shows (explain, inspect, the app): "signed by key 3f1c2a4b…,
 * verified 2026-12-08", "not verified: no signature", "never verified". A `by` that is not a key
 * fingerprint (a keyless identity) is shown whole.
 */
export function signatureSentence(r: SignatureRecord | null | undefined): string {
  if (!r) return 'never verified';
  const day = r.at.slice(0, 10);
  if (!r.verified) return `not verified: ${r.reason} (${day})`;
  const signer = /^[0-9a-f]{64}$/.test(r.by) ? `key ${r.by.slice(0, 8)}…` : r.by;
  return `signed by ${signer}, verified ${day}`;
}

/** How many references carry a verified signature, and how many do not (the metrics' counts). */
export interface SignatureCounts {
  verified: number;
  /** Never verified, or recorded as not verified. */
  unverified: number;
  /** Of those, the ones the site needs (shared/needs). */
  neededUnverified: number;
}

/**
 * The node's references by what Holdfast verified of them. CRI's own sha256:<id> record is not
 * counted: Holdfast never labels it (its image's other references carry the verdict).
 */
export function signatureCounts(refs: readonly { name: string; signature?: SignatureRecord | null; need?: { needed: boolean } }[]): SignatureCounts {
  const counts: SignatureCounts = { verified: 0, unverified: 0, neededUnverified: 0 };
  for (const r of refs) {
    if (isImageIdRecord(r.name)) continue;
    if (r.signature?.verified) {
      counts.verified++;
      continue;
    }
    counts.unverified++;
    if (r.need?.needed) counts.neededUnverified++;
  }
  return counts;
}

/** One image on a node as a check of what is already there judged it (#48 item 6). */
export interface VerifiedImage {
  /** The one name a person knows it by (shared/imageReference imageName). */
  name: string;
  /** Its references the verdict is recorded on (CRI's sha256:<id> record has no labels of its own). */
  refs: string[];
  /** The manifest or index digest containerd records as the image's target: what must be signed. */
  digest: string;
  signature: SignatureOutcome;
  /** A legacy payload naming another repository (shown, never binding). */
  warning?: string;
}

/** One node's images checked against the signatures the technician carries. */
export interface NodeVerification {
  node: string;
  /** Nothing was recorded on the node. */
  dryRun: boolean;
  images: VerifiedImage[];
  /** References whose signature labels changed (0 on a dry run). */
  recorded: number;
}

/** One node's part of the check: its verdicts, or why it could not be checked. */
export type NodeVerifyOutcome = ({ ok: true } & NodeVerification) | { node: string; ok: false; error: ErrorInfo };

/** The images for which no valid signature was found. */
export const unverifiedImages = (images: readonly VerifiedImage[]): VerifiedImage[] => images.filter((i) => !i.signature.verified);

/** The record an outcome makes (what the labels would say), so a verdict reads like a recorded one. */
export function outcomeRecord(v: SignatureOutcome): SignatureRecord {
  return v.verified ? { verified: true, by: v.by, format: v.format, at: v.at } : { verified: false, reason: v.reason, at: v.at };
}

/** One image of an archive checked before anything is sent (signatures.checkArchive). */
export interface CheckedImage {
  name: string;
  /** The digest written to the node; null when containerd computes it (a docker save). */
  digest: string | null;
  verdict: SignatureOutcome;
  /** A legacy payload names another repository: a warning, or (strict references) a refusal. */
  reference?: { level: 'warning' | 'error'; text: string };
}

/** What checking an archive's signatures on this machine found: nothing was sent. */
export interface ArchiveSignatureCheck {
  path: string;
  images: CheckedImage[];
}

/** Whether the image would refuse the archive: not verified, or signed as another repository under strict references. */
export const isRefused = (i: CheckedImage): boolean => !i.verdict.verified || i.reference?.level === 'error';

/**
 * Whether the import may go on after the check with the technician's keys: every image verified,
 * or the only failures are unverified images and the technician allows them (imported marked not
 * verified). A strict reference mismatch refuses even then, as `import --allow-unsigned
 * --strict-reference` does. The site policy's rules apply at the import itself (core).
 */
export function checkAllowsImport(c: ArchiveSignatureCheck, allowUnsigned: boolean): boolean {
  return c.images.every((i) => !isRefused(i) || (allowUnsigned && !i.verdict.verified && i.reference?.level !== 'error'));
}

/** A reference as the count reads it: its image (image id, else digest) and its recorded verdict. */
type SignedRef = { imageId: string | null; digest: string; signature?: SignatureRecord | null };

/**
 * The images on a node without a verified signature (#48): none of the image's references records
 * one, whether Holdfast refused it or never verified it. What the fleet views count per node.
 */
export function unverifiedImageCount(refs: readonly SignedRef[]): number {
  const verified = new Map<string, boolean>();
  for (const r of refs) {
    const key = protectionKey(r);
    verified.set(key, verified.get(key) === true || r.signature?.verified === true);
  }
  let n = 0;
  for (const v of verified.values()) if (!v) n++;
  return n;
}
