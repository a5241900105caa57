// A durable pin Holdfast made that disappeared behind its back, and what brings it back.
import type { Prose, Remedy } from '../remedy';

/**
 * How a durable pin Holdfast made (audit log) disappeared behind its back:
 * label-removed:     the reference is there, its io.cri-containerd.pinned label is not.
 * ref-deleted:       the reference is gone; the image is still there under other references.
 * image-deleted:     no reference of the image is left: the image itself is gone.
 * k3s-managed-again: the reference carries the k3s/RKE2 pin label again (re-imported from an
 *                    archive or a pre-pull list): the next k3s start strips its pin.
 */
export type LostPinKind = 'label-removed' | 'ref-deleted' | 'image-deleted' | 'k3s-managed-again';

/** What brings a lost pin back. Only `repin` is one click (the pin operation with `target`). */
export interface LostPinRemedy {
  /** repin: pin `target` again; restore-from-archive: an archive in the images dir brings the image back; reimport: nothing on the node does. */
  kind: 'repin' | 'restore-from-archive' | 'reimport';
  /** One or two sentences a technician can act on (a remedy in them is data: shared/remedy Prose). */
  text: Prose;
  /** What does it (or starts it), as data. */
  step?: Remedy;
  /** `step` as the reader words it (the CLI: the command line its JSON and text have always had), filled by shared/lostPins lostPinInWords. */
  command?: string;
  /** repin: what to pin (every reference of the image is pinned with it). */
  target?: { refs: string[] };
  /** The archive (relative to the images dir) that brings the image back, or that must go after re-pinning. */
  archive?: string;
}

export interface LostPin {
  node: string;
  kind: LostPinKind;
  ref: string;
  imageId: string | null;
  /** When Holdfast made the pin durable, and who (the audit entry). */
  pinnedAt: string;
  pinnedBy: string;
  /** One sentence: which pin is gone and what that means for the image now. */
  summary: string;
  /** The likely causes, most likely first, one sentence each. */
  causes: string[];
  remedy: LostPinRemedy;
  /** Another reference of the same image that still carries the CRI pin (CRI keeps the image through it), or null. */
  stillPinnedVia: string | null;
}
