// What k3s will do with an archive that the person sending it should know before it goes: the
// archive is importable, but not everything in it ends up usable and pinned on the node. Pure:
// derived from the archive's index alone (readArchiveIndex), one sentence per finding:
//   - a platform listed without its blobs (`ctr images export` without --all-platforms): k3s
//     skips it (it imports with skip-missing);
//   - an image without a name: k3s imports its content but creates no image for it;
//   - a name that is only a tag (`oci-archive:x.tar:1.0`, umoci): k3s stores it under that bare
//     name, which no pod can reference, and logs the import as failed although the pins hold.
import { parseReference } from '../../shared/imageReference';
import type { ArchiveImage, ArchiveIndex } from './format/readIndex';

const short = (digest: string): string => (digest.startsWith('sha256:') ? `sha256:${digest.slice(7, 19)}…` : digest);

function label(img: ArchiveImage): string {
  if (img.name) return img.name;
  const id = img.platforms.find((p) => p.configDigest)?.configDigest;
  return `the unnamed image${id ? ` ${short(id)}` : ''}`;
}

/**
 * A name k3s cannot retag because it is no image name with a tag: a bare tag (`1.0` reads as
 * the repository docker.io/library/1.0, untagged) or no valid reference at all. Digest-only
 * names are left out: a by-digest reference is a usable name.
 */
function bareTag(name: string): boolean {
  try {
    const p = parseReference(name);
    return p.tag === undefined && p.digest === undefined;
  } catch {
    return true;
  }
}

export function importWarnings(index: ArchiveIndex): string[] {
  const out: string[] = [];
  for (const img of index.images) {
    const who = label(img);
    if (img.missing?.length) {
      out.push(`${who}: the archive lists it but lacks its ${img.missing.map(short).join(', ')}: k3s skips it (it imports what is there and skips missing blobs).`);
    }
    const incomplete = img.platforms.filter((p) => p.missing.length > 0);
    const complete = img.platforms.filter((p) => p.missing.length === 0).map((p) => p.platform);
    for (const p of incomplete) {
      out.push(
        `${who}: ${p.platform} is listed but its blobs are not in the archive (${p.missing.length} missing, e.g. ${short(p.missing[0]!)}; a partial export such as \`ctr images export\` without --all-platforms): k3s imports ${complete.length ? complete.join(', ') : 'nothing of it'} and skips ${p.platform}, so a ${p.platform} node cannot run it from this archive.`,
      );
    }
    if (img.name === null) {
      out.push(
        `${who} has no name in the archive: k3s imports its content but creates no image for it, so nothing can run or pin it and containerd's garbage collector removes the content. Give it a name when making the archive (e.g. skopeo copy … docker-archive:app.tar:registry.example/app:1.0).`,
      );
    } else if (index.format === 'oci' && bareTag(img.name)) {
      out.push(
        `${img.name} is only a tag, not an image name: k3s stores the image under the bare name "${img.name}", which no pod can reference, and logs the import as failed (it cannot retag it); the pins hold. Give it a full name when making the archive (e.g. skopeo copy … oci-archive:app.tar:registry.example/app:1.0).`,
      );
    }
  }
  return out;
}
