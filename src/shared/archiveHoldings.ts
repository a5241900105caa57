// Which of an archive's images a node already holds, before anything is sent: the import wizard
// says it per node and ticks only the nodes that lack something. Pure.
//
// A node holds an archive image when one of its references has the image's name, as CRI resolves
// names (`app:1` → `docker.io/library/app:1`, shared/imageReference), and the image's id: the
// config digest CRI groups references by (docs/k3s-facts.md, "How kubelet honours a pin"). The
// same name on another image id is an older image the import would replace: not held. An image
// the archive leaves unnamed is not counted: k3s imports its content but creates no image.
import { isImageIdRecord, normalizeReference } from './imageReference';
import { plural } from './wording';

/** One image of an archive: its name (null: unnamed) and the config digest of each platform it carries. */
export interface ArchiveImageKey {
  name: string | null;
  configDigests: readonly string[];
}

/** One reference on a node, as its image inventory lists it (ImageRef). */
export interface NodeImageKey {
  name: string;
  imageId: string | null;
}

/** What a node holds of the archives' images; `known: false` while its images were never read. */
export type Holdings = { known: false } | { known: true; total: number; lacking: string[] };

/** The name CRI resolves a reference to; a name it cannot parse stands for itself. */
function criName(ref: string): string {
  try {
    return normalizeReference(ref);
  } catch {
    return ref;
  }
}

/**
 * The named images of one or more archives, each once (by CRI's name; the config digests of
 * every archive that brings it).
 */
export function archiveImageSet(images: readonly ArchiveImageKey[]): Map<string, ReadonlySet<string>> {
  const out = new Map<string, Set<string>>();
  for (const img of images) {
    if (img.name === null) continue;
    const key = criName(img.name);
    const ids = out.get(key) ?? new Set<string>();
    for (const d of img.configDigests) if (d) ids.add(d);
    out.set(key, ids);
  }
  return out;
}

/**
 * What a node holds of `images` (the archives' named images, each once); `nodeImages` null when
 * the node's images were never read. `lacking`: the names the node does not hold, in the
 * archives' order.
 */
export function holdingsOf(images: readonly ArchiveImageKey[], nodeImages: readonly NodeImageKey[] | null): Holdings {
  if (nodeImages === null) return { known: false };
  const wanted = archiveImageSet(images);
  const held = new Map<string, Set<string>>();
  for (const r of nodeImages) {
    if (isImageIdRecord(r.name) || r.imageId === null) continue;
    const key = criName(r.name);
    const ids = held.get(key) ?? new Set<string>();
    ids.add(r.imageId);
    held.set(key, ids);
  }
  const lacking = [...wanted].filter(([name, ids]) => ![...ids].some((id) => held.get(name)?.has(id))).map(([name]) => name);
  return { known: true, total: wanted.size, lacking };
}

/**
 * Whether an import has nothing to bring the node: it is known to hold every image the archives
 * name (and they name one). A node whose images were never read may lack anything.
 */
export function holdsEverything(h: Holdings): boolean {
  return h.known && h.total > 0 && h.lacking.length === 0;
}

/**
 * One short clause for people: "has all 2 images", "lacks 1 of 2: docker.io/library/web:2",
 * "images not read yet". At most `names` names; the rest counted.
 */
export function holdingsText(h: Holdings, names = 3): string {
  if (!h.known) return 'images not read yet';
  if (h.total === 0) return 'the archives name no image';
  if (h.lacking.length === 0) return h.total === 1 ? 'has the image' : `has all ${plural(h.total, 'image')}`;
  const shown = h.lacking.slice(0, names).join(', ');
  const more = h.lacking.length > names ? `, ${h.lacking.length - names} more` : '';
  return `lacks ${h.lacking.length} of ${plural(h.total, 'image')}: ${shown}${more}`;
}
