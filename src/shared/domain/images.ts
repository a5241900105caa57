// One image reference on a node: containerd's record, and the view that shows its verdicts.
import type { PeerServing } from '../embeddedRegistry';
import type { ListTrap } from '../listTrap';
import type { RefNeed } from '../needVerdict';
import type { LostPin } from './lostPins';
import type { Fate, PinState } from './pins';

export interface ImageRef {
  /** The containerd image record's name: a tag or a name@sha256 digest reference. */
  name: string;
  /** Digest of the record's target (manifest or index). */
  digest: string;
  mediaType: string;
  /** Config digest of the node's platform manifest: the image id CRI groups references by. */
  imageId: string | null;
  /** Bytes of the manifest, config and layers for the node's platform. */
  size: number;
  /** os/arch[/variant] of every platform the target describes. */
  platforms: string[];
  createdAt: string | null;
  labels: Record<string, string>;
  pin: PinState;
  /** Whether the reference is still pinned after k3s's next start (see core/fate). */
  afterRestart: Fate;
  /** One sentence a technician understands: why that fate. */
  reason: string;
  /** Path (relative to the images dir) of the archive that brings this reference, or null. */
  archive: string | null;
  /**
   * The verdict for the reference's whole image (every reference with its image id) as kubelet
   * sees it under the node's containerd rule — shared/protection, the one model every view uses.
   * Set by the node inventory; absent in data built elsewhere.
   */
  imagePinnedNow?: boolean;
  imagePinnedAfterRestart?: boolean;
  /**
   * Set when Holdfast made this reference's pin durable and it is gone now (label removed or
   * k3s-managed again); references that are gone entirely are only in the lost-pin list.
   */
  lostPin?: LostPin;
  /**
   * What the site's need makes of the image (shared/needs, need × protection): at risk when
   * needed and missing, unprotected now, or unprotected after the next k3s start; with the
   * workloads that need it. Set by the node inventory.
   */
  need?: RefNeed;
  /**
   * Set when a .txt list in the images dir names another tag of this durable reference's image:
   * k3s takes the pin over at its next start (shared/listTrap).
   */
  listTrap?: ListTrap;
  /**
   * Whether peer nodes can pull this reference from this node through k3s's embedded registry
   * (shared/embeddedRegistry), and why not. Set by `images.report`; absent on CRI's id records.
   */
  peers?: PeerServing;
}
