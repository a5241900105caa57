// Image-level protection as kubelet sees it through CRI (facts sheet, "How the pin is honoured").
// CRI merges every reference with the same image id into one image; on containerd ≥ 1.7.10 and
// 2.x it is pinned when ANY of its references carries io.cri-containerd.pinned=pinned; on
// 1.7.3–1.7.9 the reference CRI loaded first decides (so every reference must carry it); before
// 1.7.3 nothing is pinned at all.
//
// CRI also records each image under its id (`sha256:<config digest>`, labelled
// io.cri-containerd.image=managed). k3s never labels that record, so taken alone it always looks
// unpinned; what matters is the image it names. This module gives such records the image's fate.
import type { Fate } from './domain';
import type { CriPinning } from './versions';

/** Fields of a reference this rule reads (an ImageRef satisfies it). */
export interface ProtectionRef {
  name: string;
  imageId: string | null;
  pin: 'durable' | 'k3s' | 'none';
  afterRestart: Fate;
  reason: string;
}

const IMAGE_ID_REF = /^sha256:[0-9a-f]{64}$/;

/** CRI's own record of an image, named by the image id rather than a tag or digest reference. */
export function isImageIdRef(ref: Pick<ProtectionRef, 'name' | 'imageId'>): boolean {
  return IMAGE_ID_REF.test(ref.name) && (ref.imageId === null || ref.imageId === ref.name);
}

/** Short display of a reference list: "a, b and 2 more". */
function names(refs: ProtectionRef[]): string {
  const shown = refs.slice(0, 2).map((r) => r.name);
  return refs.length > 2 ? `${shown.join(', ')} and ${refs.length - 2} more` : shown.join(' and ');
}

/**
 * Returns the references with the fate of CRI's image-id records made the image's own fate
 * (for the 'any' rule), or a reason that says what to do (for 'first-loaded'). Other references
 * are returned unchanged. Pure.
 */
export function applyImageProtection<T extends ProtectionRef>(refs: T[], mode: CriPinning): T[] {
  const byImage = new Map<string, T[]>();
  for (const r of refs) {
    if (r.imageId === null) continue;
    const group = byImage.get(r.imageId);
    if (group) group.push(r);
    else byImage.set(r.imageId, [r]);
  }
  return refs.map((r) => {
    if (!isImageIdRef(r) || r.pin !== 'none' || r.imageId === null) return r;
    const siblings = (byImage.get(r.imageId) ?? []).filter((s) => s !== r && !isImageIdRef(s));
    if (siblings.length === 0) return r;
    const keep = siblings.filter((s) => s.afterRestart === 'pinned');
    if (mode === 'first-loaded') {
      return {
        ...r,
        reason: keep.length
          ? `CRI's own record of the image of ${names(siblings)}. This containerd (1.7.3–1.7.9) takes an image's pin from whichever reference CRI loaded first, so this unlabelled record can leave the image unpinned: pin every reference (holdfast pin NODE ${siblings[0]!.name}).`
          : `CRI's own record of the image of ${names(siblings)}, which is not pinned.`,
      };
    }
    const pinned = keep.length > 0;
    return {
      ...r,
      afterRestart: pinned ? 'pinned' : 'unpinned',
      reason: pinned
        ? `CRI's own record of the image of ${names(siblings)}: kubelet sees the image as pinned through ${names(keep)}.`
        : `CRI's own record of the image of ${names(siblings)}, which ${siblings.some((s) => s.pin !== 'none') ? 'loses its pin at the next k3s start' : 'is not pinned'}.`,
    };
  });
}
