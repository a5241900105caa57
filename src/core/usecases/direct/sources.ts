// What each kind of bundle names its images (OCI layout, Zarf package, Hauler haul: the rules are
// on bundleNames), and the refusal of a chunked Hauler haul.
import { readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ArchiveError } from '../../archives/format/errors';
import { isAttestation, ociImageName } from '../../archives/format/readIndex';
import { normalizeReference, ReferenceError } from '../../../shared/imageReference';
import type { BundleKind } from './bundle';
import type { RawDescriptor } from './ociTrees';

const ZARF_NAME = 'org.opencontainers.image.base.name';
const CONTAINERD_NAME = 'io.containerd.image.name';
const REF_NAME = 'org.opencontainers.image.ref.name';
const HAULER_KIND = 'kind';
const HAULER_IMAGE_KINDS = new Set(['image', 'imageIndex']);
/** Config media types of runnable images (Hauler also stores files and charts as OCI artifacts). */
export const IMAGE_CONFIG_TYPES = new Set(['application/vnd.oci.image.config.v1+json', 'application/vnd.docker.container.image.v1+json']);
const COSIGN_TAG = /:sha256-[a-f0-9]{64}\.(sig|att|sbom)$/;

function normalized(kind: BundleKind, ref: string): string {
  try {
    return normalizeReference(ref);
  } catch (e) {
    const why = e instanceof ReferenceError ? e.message : String(e);
    throw new ArchiveError('corrupt', `corrupt: the ${kind === 'zarf' ? 'Zarf package' : 'haul'} names an image with an invalid reference (${why})`, { cause: e });
  }
}

/**
 * The names the image of an index.json entry gets on a node; empty: the entry is no image to deliver.
 * - OCI layout: as k3s's import names them (readIndex.ts ociImageName: io.containerd.image.name,
 *   else org.opencontainers.image.ref.name, verbatim).
 * - Zarf package: each index.json entry's org.opencontainers.image.base.name (the reference the
 *   package was built from), normalised. Cosign signatures, attestations and SBOMs Zarf keeps
 *   beside the images (tags `sha256-<hex>.sig|.att|.sbom`) are no images to run: left out.
 * - Hauler haul: entries of kind image or imageIndex (`kind` annotation, dev.hauler/… or the
 *   older dev.cosignproject.cosign/…), named by io.containerd.image.name (else ref.name),
 *   normalised. Hauler gives its signature, attestation, SBOM, file and chart entries the
 *   subject image's name too, so the kind decides, not the name.
 */
export function bundleNames(kind: BundleKind, d: RawDescriptor): string[] {
  if (isAttestation(d)) return [];
  const ann = d.annotations ?? {};
  switch (kind) {
    case 'zarf': {
      const ref = ann[ZARF_NAME];
      if (!ref || COSIGN_TAG.test(ref)) return [];
      return [normalized(kind, ref)];
    }
    case 'hauler': {
      const k = ann[HAULER_KIND];
      if (k !== undefined && !HAULER_IMAGE_KINDS.has(k.slice(k.lastIndexOf('/') + 1))) return [];
      const ref = ann[CONTAINERD_NAME] || ann[REF_NAME];
      return ref ? [normalized(kind, ref)] : [];
    }
    default: {
      const name = ociImageName(ann);
      return name ? [name] : [];
    }
  }
}

const CHUNK_NAME = /^(.+)_(\d+)\.(tar\.zst|tzst)$/i;

function chunkError(file: string, cause?: unknown): ArchiveError {
  return new ArchiveError(
    'unsupported',
    `unsupported: ${basename(file)} is one chunk of a Hauler haul saved with --chunk-size; join the chunks first (hauler store load every chunk, then hauler store save without --chunk-size) and import that file`,
    cause === undefined ? {} : { cause },
  );
}

/** Refuses `haul_0.tar.zst` when `haul_1.tar.zst` (or any other number) lies beside it. */
export async function refuseChunkedHaul(file: string): Promise<void> {
  const m = CHUNK_NAME.exec(basename(file));
  if (!m) return;
  const prefix = m[1]!.toLowerCase();
  const suffix = m[3]!.toLowerCase();
  const siblings = await readdir(dirname(file)).catch(() => [] as string[]);
  const isChunk = (s: string): boolean => {
    const c = CHUNK_NAME.exec(s);
    return c !== null && c[1]!.toLowerCase() === prefix && c[3]!.toLowerCase() === suffix;
  };
  if (siblings.some((s) => s !== basename(file) && isChunk(s))) throw chunkError(file);
}

/** A chunk-named file that reads as a cut-off or garbled stream is a chunk on its own: say so. */
export function haulerChunkRefusal(file: string, e: unknown): ArchiveError | null {
  if (!CHUNK_NAME.test(basename(file))) return null;
  // Chunk 0 ends mid-stream; a later chunk starts mid-stream (no zstd header: not an archive).
  if (!(e instanceof ArchiveError) || e.member !== undefined) return null;
  if (e.reason !== 'truncated' && e.reason !== 'corrupt' && e.reason !== 'not-an-image-archive') return null;
  return chunkError(file, e);
}
