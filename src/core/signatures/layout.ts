// An OCI image layout as `oras copy -r --to-oci-layout`, Zarf and Hauler write it (a directory,
// or the members of an archive kept while it streamed past), read for the signatures it carries:
// every blob is read bounded and checked against its digest, and the manifests read to find
// referrers are capped (signature.manifests).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isLegacySignatureTag } from '../../shared/signatures';
import { HoldfastError } from '../errors';
import { limit, limitError, type LimitName } from '../limits';
import { readBounded } from './read';

/** The files of a layout, by path inside it ('index.json', 'blobs/sha256/<hex>'). */
export interface LayoutFiles {
  /** Names the layout in messages (its directory or archive). */
  name: string;
  read(path: string, what: string, limitName: LimitName): Promise<Buffer>;
}

/** A layout directory on this machine. */
export const layoutDir = (dir: string): LayoutFiles => ({ name: dir, read: (p, what, l) => readBounded(join(dir, p), what, l) });

export interface Descriptor {
  mediaType?: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

export interface OciManifest {
  mediaType?: string;
  artifactType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

/** A blob whose bytes are not what its digest says: the layout was altered. */
export class BlobMismatch extends Error {}

export const REF_NAME = 'org.opencontainers.image.ref.name';
/** Zarf names its entries (a `.sig` tag too) by the reference the package was built from. */
export const BASE_NAME = 'org.opencontainers.image.base.name';
const HAULER_KIND = 'kind';
const HAULER_REFERRERS = 'dev.hauler/referrers/';
/** The names an entry may carry a legacy tag in: oras and Hauler write ref.name, Zarf base.name. */
const TAG_NAMES = [REF_NAME, BASE_NAME] as const;
const tagNames = (e: Descriptor): string[] => TAG_NAMES.map((k) => e.annotations?.[k]).filter((n) => n !== undefined);
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export class SignatureLayout {
  private referrers?: Map<string, { entry: Descriptor; manifest: OciManifest }[]>;

  private constructor(
    private readonly files: LayoutFiles,
    readonly entries: readonly Descriptor[],
  ) {}

  /** Opens a layout: a directory, or the files an archive kept. */
  static async open(from: string | LayoutFiles): Promise<SignatureLayout> {
    const files = typeof from === 'string' ? layoutDir(from) : from;
    const dir = files.name;
    const raw = await files.read('index.json', "an OCI layout's index.json", 'archive.jsonMemberBytes');
    const index = parseJson(raw, `${dir}: index.json`) as { manifests?: unknown };
    if (!Array.isArray(index.manifests)) throw new HoldfastError('INVALID_INPUT', `${dir}: index.json has no manifests list; is it an OCI layout?`);
    if (index.manifests.length > limit('archive.references')) throw limitError('archive.references', `${dir}: index.json lists ${index.manifests.length} entries`);
    return new SignatureLayout(files, index.manifests.filter(isDescriptor));
  }

  /** A blob's bytes, bounded by signature.bytes, checked against its digest. */
  async blob(desc: Descriptor, what: string): Promise<Buffer> {
    if (desc.size > limit('signature.bytes')) throw limitError('signature.bytes', `${this.files.name}: ${what} ${desc.digest} of ${desc.size.toLocaleString('en-US')} bytes is too large`);
    const data = await this.files.read(`blobs/sha256/${desc.digest.slice('sha256:'.length)}`, what, 'signature.bytes');
    if ('sha256:' + createHash('sha256').update(data).digest('hex') !== desc.digest) throw new BlobMismatch(`${what} ${desc.digest} does not match its digest`);
    return data;
  }

  async manifest(desc: Descriptor): Promise<OciManifest> {
    return parseJson(await this.blob(desc, 'a manifest'), desc.digest) as OciManifest;
  }

  /** Entries named by a tag: `sha256-<hex>.sig`, alone or at the end of a full reference. */
  tagged(tag: string): Descriptor[] {
    return this.entries.filter((e) => tagNames(e).some((name) => name === tag || name.endsWith(':' + tag)));
  }

  /**
   * The digests of every signature artifact in the layout: legacy `.sig` tags and manifests with
   * a `subject` (referrers). They are never images to import.
   */
  async signatureManifests(): Promise<Set<string>> {
    this.referrers ??= await this.readReferrers();
    const tags = this.entries.filter(isLegacyTagged);
    return new Set([...tags, ...[...this.referrers.values()].flat().map((r) => r.entry)].map((e) => e.digest));
  }

  /**
   * The manifests whose `subject` is `digest` (OCI 1.1 referrers), read once: the unnamed ones
   * (oras), and those Hauler names after their image but marks a referrer by its `kind`.
   */
  async referrersOf(digest: string): Promise<{ entry: Descriptor; manifest: OciManifest }[]> {
    this.referrers ??= await this.readReferrers();
    return this.referrers.get(digest) ?? [];
  }

  private async readReferrers(): Promise<Map<string, { entry: Descriptor; manifest: OciManifest }[]>> {
    const candidates = this.entries.filter((e) => MANIFEST_TYPES.has(e.mediaType ?? '') && (tagNames(e).length === 0 || isHaulerReferrer(e)));
    if (candidates.length > limit('signature.manifests')) throw limitError('signature.manifests', `${this.files.name}: ${candidates.length.toLocaleString('en-US')} unnamed manifests to read for signatures`);
    const out = new Map<string, { entry: Descriptor; manifest: OciManifest }[]>();
    for (const entry of candidates) {
      const manifest = await this.manifest(entry).catch((e: unknown) => {
        if (e instanceof BlobMismatch) return null;
        throw e;
      });
      const subject = manifest?.subject?.digest;
      if (!manifest || !subject) continue;
      out.set(subject, [...(out.get(subject) ?? []), { entry, manifest }]);
    }
    return out;
  }
}

const isLegacyTagged = (e: Descriptor): boolean => tagNames(e).some(isLegacySignatureTag);
/** Hauler's `kind` of an OCI 1.1 referrer it saved: `dev.hauler/referrers/<hex>`. */
const isHaulerReferrer = (e: Descriptor): boolean => e.annotations?.[HAULER_KIND]?.startsWith(HAULER_REFERRERS) ?? false;

/** Refuses an image with more signatures of one kind than signature.perImage, before they are read. */
export function capSignatures(digest: string, count: number, what: string): void {
  if (count > limit('signature.perImage')) throw limitError('signature.perImage', `${digest}: ${count.toLocaleString('en-US')} ${what}`);
}

export function isDescriptor(v: unknown): v is Descriptor {
  const d = v as Descriptor | null;
  return typeof d === 'object' && d !== null && typeof d.digest === 'string' && DIGEST.test(d.digest) && Number.isSafeInteger(d.size) && d.size >= 0;
}

function parseJson(raw: Buffer, what: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new HoldfastError('INVALID_INPUT', `${what}: not valid JSON.`);
  }
}
