// The references one archive's import ends up with on a node, and which containerd events can
// concern them: the names the archive brings, the `<repository>@sha256:<digest>` reference k3s
// adds per name after labelling it (k3s PR #13221, version-dependent), extra-registry references
// (`<registry>/<path>:<tag>`, `<registry>/<path>@<digest>`, from the node's k3s configuration,
// which Holdfast does not read) and CRI's own `sha256:<id>` record. Pure.
import type { ArchiveImage } from '../../archives/format/readIndex';
import { configDigestFor } from '../../archives/format/readIndex';
import { repositoryOf } from '../../../shared/imageReference';
import type { BaseImageRef } from '../../images/list';
import type { Platform } from '../../../shared/mediaTypes';

/** One archive image as found on the node: its reference by name (or id) and its image id. */
export interface FoundImage {
  label: string;
  /** The config digest CRI groups by, for the node's platform. */
  imageId: string | null;
  ref: BaseImageRef | undefined;
}

export function findImages(images: ArchiveImage[], refs: BaseImageRef[], platform: Platform): FoundImage[] {
  return images.map((img) => {
    const imageId = configDigestFor(img, platform);
    const ref = img.name ? refs.find((r) => r.name === img.name) : refs.find((r) => r.imageId !== null && r.imageId === imageId);
    return { label: img.name ?? `unnamed image ${imageId ?? ''}`.trim(), imageId, ref: ref && (imageId === null || ref.imageId === imageId) ? ref : undefined };
  });
}

/** Every reference of the found images (by image id; a record whose id is unknown stands alone). */
export function refsOfImages(found: FoundImage[], refs: BaseImageRef[]): Map<FoundImage, BaseImageRef[]> {
  const out = new Map<FoundImage, BaseImageRef[]>();
  for (const f of found) {
    if (!f.ref) continue;
    const id = f.ref.imageId;
    out.set(f, id === null ? [f.ref] : refs.filter((r) => r.imageId === id));
  }
  return out;
}

/** The digest reference k3s adds for a name (none for a name that already is one). */
export function digestRefFor(name: string, targetDigest: string): string | null {
  return name.includes('@') ? null : `${repositoryOf(name)}@${targetDigest}`;
}

/** `registry.local/site/app` → `site/app`: what an extra-registry reference keeps of a repository. */
const pathOf = (repo: string): string => repo.slice(repo.indexOf('/') + 1);

/**
 * Whether a containerd image event about `name` can concern these images: one of their names,
 * a reference of one of their repositories (digest references), or the same path under another
 * registry (extra-registry references), or CRI's record of one of their ids.
 */
export function concerns(images: ArchiveImage[], ids: (string | null)[]): (name: string) => boolean {
  const names = new Set(images.map((i) => i.name).filter((n): n is string => n !== null));
  const repos = new Set([...names].map(repositoryOf));
  const paths = new Set([...repos].map(pathOf));
  const idSet = new Set(ids.filter((x): x is string => x !== null));
  return (name) => names.has(name) || idSet.has(name) || repos.has(repositoryOf(name)) || paths.has(pathOf(repositoryOf(name)));
}
