// Verifying an archive's images on this machine before any byte is sent (#48): every image it
// would create on a node must carry a signature that verifies with a given key and binds to the
// digest written (shared/signatures). One failing image refuses the whole archive, unless the
// technician allows unsigned images; then the verdicts go on the images as labels after import.
import path from 'node:path';
import type { SignatureOptions } from '../../../shared/importOptions';
import { isLegacySignatureTag, referenceMismatch, signatureLabels, type CheckedImage, type SignatureOutcome } from '../../../shared/signatures';
import type { LabelChange } from '../../../shared/domain/pins';
import { isImageIdRecord } from '../../../shared/imageReference';
import { HoldfastError } from '../../errors';
import type { NodeSession } from '../../node/session';
import { applyPinPlan } from '../pin/apply';
import { SignatureMembers } from '../../signatures/archive';
import { readPublicKey, type GivenKey } from '../../signatures/keys';
import { readTrustedRoot, type KeylessPolicy } from '../../signatures/keyless';
import type { ArchiveImage, ArchiveIndex } from '../../archives/format/readIndex';
import type { BundleImage, SpooledBundle } from '../direct/bundle';
import { ROOTS, ZARF_IMAGES } from '../direct/spool';
import { UNDETECTED_DISTRO_NAME } from '../../../shared/distro';
import type { SignatureLayout } from '../../signatures/layout';
import { readBundleFiles, verifyImageSignatures, type SignatureSources } from '../../signatures/verify';
import { imageRequirements, type SignatureRequirement } from '../../../shared/signaturePolicy';

/** An image the archive would create on a node: its name and the digest written (null: computed by containerd). */
export interface ArchiveImageTarget {
  name: string;
  digest: string | null;
}

export interface ImageSignature {
  name: string;
  digest: string | null;
  verdict: SignatureOutcome;
}

export interface ArchiveSignatures {
  images: ImageSignature[];
  /** Legacy payloads naming another repository than the imported name (not strict). */
  warnings: string[];
  /** The digests of the signature manifests the archive carries: never images, nothing to wait for. */
  manifests?: ReadonlySet<string>;
}

/** Whether the options ask for verification at all (a key or keyless identity given, or a policy rule for the nodes). */
export const verifying = (o: SignatureOptions): boolean => (o.keys?.length ?? 0) > 0 || keylessFlags(o).length > 0 || (o.rules?.length ?? 0) > 0;

/** The keyless flags given, as the technician typed them. */
export function keylessFlags(o: SignatureOptions): string[] {
  const given: [string, unknown][] = [
    ['--certificate-identity', o.certificateIdentity],
    ['--certificate-identity-regexp', o.certificateIdentityRegexp],
    ['--certificate-oidc-issuer', o.certificateOidcIssuer],
    ['--trusted-root', o.trustedRoot],
  ];
  return given.filter(([, v]) => v !== undefined).map(([f]) => f);
}

/** What keyless verification lacks: a trusted root, an identity, its issuer; each named with its flag. */
function keylessProblem(o: SignatureOptions): string | null {
  const flags = keylessFlags(o);
  if (flags.length === 0) return null;
  const first = flags[0]!;
  if (o.certificateIdentity !== undefined && o.certificateIdentityRegexp !== undefined) return 'give --certificate-identity or --certificate-identity-regexp, not both';
  if (o.trustedRoot === undefined) return `${first} needs the Sigstore trusted root to verify against (--trusted-root FILE)`;
  if (o.certificateIdentity === undefined && o.certificateIdentityRegexp === undefined) return `${first} needs the signer's identity (--certificate-identity VALUE or --certificate-identity-regexp RE)`;
  if (o.certificateOidcIssuer === undefined) return `${flags.find((f) => f.startsWith('--certificate-identity'))} needs the identity's issuer (--certificate-oidc-issuer VALUE)`;
  return null;
}

/** The options that make sense only with a key or an identity, refused without one. */
export function signatureOptionsProblem(o: SignatureOptions): string | null {
  const keyless = keylessProblem(o);
  if (keyless) return keyless;
  if (verifying(o)) return null;
  const orphan = [o.bundles?.length ? '--bundle' : null, o.allowUnsigned ? '--allow-unsigned' : null, o.strictReference ? '--strict-reference' : null].filter((f) => f !== null);
  return orphan.length ? `${orphan.join(', ')} ${orphan.length === 1 ? 'needs' : 'need'} a key to verify with (--key FILE)` : null;
}

/** A legacy `.sig` tag however the name was written or normalised (bare, repo:tag, docker.io/library/…). */
export const isSignatureTagName = (name: string): boolean => isLegacySignatureTag(name) || isLegacySignatureTag(name.slice(name.lastIndexOf('/') + 1));

/** The images that become image records on a node: named, and not signature manifests. */
export function importedImages(images: readonly ArchiveImage[], signatureManifests: ReadonlySet<string>): ArchiveImageTarget[] {
  return images
    .filter((i) => i.name !== null && !isSignatureTagName(i.refName ?? i.name) && !(i.targetDigest && signatureManifests.has(i.targetDigest)))
    .map((i) => ({ name: i.name!, digest: i.targetDigest }));
}

/**
 * k3s imports every named entry of an archive, so a legacy `.sig` tag (or a referrer Hauler names
 * after its image, among `signatureManifests`) would become an image on the node. An archive sent
 * as it is cannot leave them out (the node checks the file's SHA-256), so it is refused; direct
 * delivery writes only the images and leaves them out.
 */
export function refuseSignatureTags(file: string, images: readonly ArchiveImage[], signatureManifests: ReadonlySet<string> = new Set()): void {
  const tags = images.filter((i) => i.name !== null && (isSignatureTagName(i.refName ?? i.name) || (i.targetDigest !== null && signatureManifests.has(i.targetDigest))));
  if (tags.length === 0) return;
  const what = `signature ${signatureManifests.size ? 'manifest' : 'tag'}${tags.length === 1 ? '' : 's'}`;
  throw new HoldfastError('REFUSED', `${path.basename(file)} was refused: it holds ${tags.length} cosign ${what} (${tags[0]!.refName ?? tags[0]!.name}${tags.length > 1 ? ', …' : ''}), which ${UNDETECTED_DISTRO_NAME}'s import would turn into images`, {
    hint: 'Nothing was sent. Deliver it directly instead (it writes only the images and leaves the signatures out), or carry the signatures as bundles beside an archive without them.',
  });
}

/** Collects an OCI layout's signatures in the archive's one read, when a key asks for them. */
export const signatureSink = (file: string, o: SignatureOptions): SignatureMembers | null => (verifying(o) ? new SignatureMembers(path.basename(file)) : null);

/** The checks on an archive sent as it is: no `.sig` tags; with a key, every image verified. */
export async function checkArchiveSignatures(file: string, index: ArchiveIndex, members: SignatureMembers | null, o: SignatureOptions): Promise<ArchiveSignatures | null> {
  refuseSignatureTags(file, index.images);
  if (!members) return null;
  const layout = index.format === 'oci' ? await members.layout() : null;
  const sigs = layout ? await layout.signatureManifests() : new Set<string>();
  refuseSignatureTags(file, index.images, sigs);
  return { ...(await verifyArchiveImages(file, importedImages(index.images, sigs), layout, o)), manifests: sigs };
}

/**
 * The check before an import (signatures.checkArchive): the archive read as the import reads it
 * and every image's verdict with the given keys, nothing refused for a failing image, nothing
 * sent. A direct delivery leaves `.sig` tags out; an archive sent as it is cannot (refuseSignatureTags).
 */
export async function checkArchiveVerdicts(file: string, index: ArchiveIndex, members: SignatureMembers, o: SignatureOptions, direct: boolean): Promise<CheckedImage[]> {
  if (!direct) refuseSignatureTags(file, index.images);
  const layout = index.format === 'oci' ? await members.layout() : null;
  const sigs = layout ? await layout.signatureManifests() : new Set<string>();
  return (await archiveVerdicts(importedImages(index.images, sigs), layout, o)).checked;
}

/** The archive's images without its signature manifests (k3s creates no image for a referrer). */
export function withoutSignatureManifests<A extends { index: ArchiveIndex }>(archive: A, signatures: ArchiveSignatures | null): A {
  const sigs = signatures?.manifests;
  if (!sigs?.size) return archive;
  return { ...archive, index: { ...archive.index, images: archive.index.images.filter((i) => !(i.targetDigest && sigs.has(i.targetDigest))) } };
}

/** Collects a bundle's signatures (an OCI layout, a Zarf package's, a haul's) while it is spooled. */
export const bundleSignatureSink = (file: string, o: SignatureOptions): SignatureMembers | null => (verifying(o) ? new SignatureMembers(path.basename(file), ROOTS) : null);

/**
 * Direct delivery: the spooled images without signature tags (never delivered as images) and,
 * with a key, every image verified against the signatures `members` kept in the same read.
 */
export async function checkBundleSignatures(file: string, bundle: SpooledBundle, members: SignatureMembers | null, o: SignatureOptions): Promise<{ images: BundleImage[]; signatures: ArchiveSignatures | null }> {
  const named = bundle.images.map((i) => ({ ...i, names: i.names.filter((n) => !isSignatureTagName(n)) })).filter((i) => i.names.length > 0);
  if (!verifying(o)) return { images: named, signatures: null };
  const layout = bundle.kind === 'docker' || !members ? null : await members.layout(bundle.kind === 'zarf' ? ZARF_IMAGES : '');
  const sigs = layout ? await layout.signatureManifests() : new Set<string>();
  const images = named.filter((i) => !sigs.has(targetDigest(i)));
  const targets = images.flatMap((i) => i.names.map((name) => ({ name, digest: targetDigest(i) })));
  return { images, signatures: { ...(await verifyArchiveImages(file, targets, layout, o)), manifests: sigs } };
}

const targetDigest = (i: BundleImage): string => ('index' in i.target ? i.target.index.digest : i.target.manifest.digest);

/** Core reads a key file once per verification, however many requirements name it. */
function keyReader(): (files: readonly string[]) => Promise<GivenKey[]> {
  const read = new Map<string, Promise<GivenKey>>();
  return (files) =>
    Promise.all(
      files.map((f) => {
        if (!read.has(f)) read.set(f, readPublicKey(f));
        return read.get(f)!;
      }),
    );
}

/** Each trusted root is read once per verification, however many requirements name it. */
function trustReader(): (file: string) => Promise<KeylessPolicy['trust']> {
  const read = new Map<string, Promise<KeylessPolicy['trust']>>();
  return (file) => {
    if (!read.has(file)) read.set(file, readTrustedRoot(file));
    return read.get(file)!;
  };
}

interface Readers {
  keys: ReturnType<typeof keyReader>;
  roots: ReturnType<typeof trustReader>;
}

/** A requirement's keyless policy: its identities against its trusted root (none without both). */
async function keylessFor(req: SignatureRequirement, roots: Readers['roots']): Promise<KeylessPolicy | undefined> {
  if (!req.identities?.length || req.trustedRoot === undefined) return undefined;
  return { identities: req.identities, trust: await roots(req.trustedRoot) };
}

interface ImageVerdict {
  verdict: SignatureOutcome;
  /** The failed requirement refuses the archive (not allowed unsigned). */
  fatal: boolean;
  /** The policy rule whose requirement failed (null: the flags'). */
  rule: string | null;
}

/** An image against each of its requirements: the first fatal failure, else the first failure, else verified. */
async function imageVerdict(digest: string | null, reqs: readonly SignatureRequirement[], readers: Readers, sources: SignatureSources, now: Date): Promise<ImageVerdict> {
  let verified: ImageVerdict | null = null;
  let allowed: ImageVerdict | null = null;
  for (const req of reqs) {
    // A docker-save archive names no manifest digest: containerd computes it, so nothing can bind to it here.
    const verdict: SignatureOutcome = digest
      ? await verifyImageSignatures(digest, await readers.keys(req.keys ?? []), sources, now, await keylessFor(req, readers.roots))
      : { verified: false, refusal: { kind: 'no-signature' }, reason: 'no signature', at: now.toISOString() };
    const v = { verdict, fatal: !verdict.verified && !req.allowUnsigned, rule: req.rule };
    if (v.fatal) return v;
    if (!verdict.verified) allowed ??= v;
    else verified ??= v;
  }
  return allowed ?? verified!;
}

/** The verdicts on an archive's images, what refuses it, and why (verifyArchiveImages). */
interface ArchiveVerdicts {
  checked: CheckedImage[];
  /** A line per failing image that refuses the archive. */
  failures: string[];
  warnings: string[];
  /** A policy rule (not the flags) refuses one. */
  byPolicy: boolean;
}

/**
 * The verdict on every image, read with the given keys and bundles on this machine: each image
 * against the flags' keys and every policy rule covering it (shared/signaturePolicy.ts); an image
 * with no requirement is not verified. Nothing thrown for a failing image.
 */
export async function archiveVerdicts(images: readonly ArchiveImageTarget[], layout: SignatureLayout | null, o: SignatureOptions, now = new Date()): Promise<ArchiveVerdicts> {
  const wanted = images.map((img) => ({ img, reqs: imageRequirements(o, img.name) })).filter((w) => w.reqs.length > 0);
  const readers: Readers = { keys: keyReader(), roots: trustReader() };
  const sources: SignatureSources = { ...(layout ? { layout } : {}), bundles: await readBundleFiles(o.bundles ?? []) };
  const out: ArchiveVerdicts = { checked: [], failures: [], warnings: [], byPolicy: false };
  for (const { img, reqs } of wanted) {
    const { verdict, fatal, rule } = await imageVerdict(img.digest, reqs, readers, sources, now);
    if (fatal && !verdict.verified) out.failures.push(`${img.name}: ${verdict.reason}${rule ? ` (policy rule ${rule})` : ''}`);
    out.byPolicy ||= fatal && rule !== null;
    const mismatch = verdict.verified ? referenceMismatch(img.name, verdict.reference, o.strictReference === true) : null;
    if (mismatch?.level === 'error') out.failures.push(`${img.name}: ${mismatch.text}`);
    else if (mismatch) out.warnings.push(`${img.name}: ${mismatch.text}`);
    out.checked.push({ ...img, verdict, ...(mismatch ? { reference: mismatch } : {}) });
  }
  return out;
}

/**
 * The verdict on every image (archiveVerdicts). Refuses the archive (REFUSED, a line per failing
 * image) unless every failure is allowed unsigned.
 */
export async function verifyArchiveImages(file: string, images: readonly ArchiveImageTarget[], layout: SignatureLayout | null, o: SignatureOptions, now = new Date()): Promise<ArchiveSignatures> {
  const { checked, failures, warnings, byPolicy } = await archiveVerdicts(images, layout, o, now);
  if (failures.length) {
    throw new HoldfastError('REFUSED', `${path.basename(file)} was refused: ${failures.length} of ${images.length} images failed signature verification`, {
      hint: byPolicy
        ? "Nothing was sent. The site's signature policy requires these images signed by a key it names; allowing unsigned images does not override it. Get them signed, or change the policy."
        : 'Nothing was sent. Get the images signed by a key you were given (or the right key file), or allow unsigned images, which are imported marked as not verified.',
      details: failures,
    });
  }
  return { images: checked.map(({ name, digest, verdict }) => ({ name, digest, verdict })), warnings };
}

/**
 * Records each verdict on the node: the signature labels on every reference whose target is the
 * verified digest (tag and digest reference; CRI's sha256:<id> record has no labels of its own).
 * Returns how many references' labels changed.
 */
export async function recordSignatures(session: NodeSession, signatures: Pick<ArchiveSignatures, 'images'>): Promise<number> {
  const refs = await session.listBaseImages();
  const changes: LabelChange[] = [];
  for (const img of signatures.images) {
    const digest = img.digest ?? refs.find((r) => r.name === img.name)?.digest;
    const delta = signatureLabels(img.verdict);
    for (const r of refs) {
      if (r.digest !== digest || isImageIdRecord(r.name)) continue;
      const after = { ...r.labels };
      for (const [k, v] of Object.entries(delta)) {
        if (v === null) delete after[k];
        else after[k] = v;
      }
      changes.push({ ref: r.name, imageId: r.imageId, before: r.labels, after });
    }
  }
  // The pins' own label path: only the keys that change, the GC label guard, every write read back.
  return (await applyPinPlan(session.containerd, { node: session.def.name, action: 'pin', changes, unchanged: [] })).changes.length;
}

/** What a node's result says beside the import: renamed images, and images imported unverified. */
export function signatureWarnings(signatures: ArchiveSignatures | null): string[] {
  if (!signatures) return [];
  const unverified = signatures.images.filter((i) => !i.verdict.verified);
  return [...signatures.warnings, ...unverified.map((i) => `${i.name} imported not verified (${i.verdict.verified ? '' : i.verdict.reason}), recorded so on the node`)];
}
