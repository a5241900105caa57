// One image reference on a node: containerd's record apart from each verdict about it; a view
// (ImageRef) composes the record with the verdicts it shows. Each verdict has one named function.
import type { PeerServing } from '../embeddedRegistry';
import type { ListTrap } from '../listTrap';
import type { SignatureRecord } from '../signatures';
import type { RefNeed } from '../needVerdict';
import type { Remedy } from '../remedy';
import type { LostPin } from './lostPins';
import type { Fate, PinState } from './pins';

/** containerd's image record, for the node's platform: what the node holds, nothing judged. */
export interface ImageRecord {
  /** The record's name: a tag or a name@sha256 digest reference. */
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
}

/** What the labels make of the reference now (shared/pinState pinState). */
export interface PinVerdict {
  pin: PinState;
}

/** Whether the reference is still pinned after the distro's next start (shared/fate predictFates). */
export interface FateVerdict {
  afterRestart: Fate;
  /** One sentence a technician understands: why that fate. */
  reason: string;
  /** Path (relative to the images dir) of the archive that brings this reference, or null. */
  archive: string | null;
  /** What the reason asks the technician to do, as data (NODE: the node shown); absent when nothing. */
  remedy?: Remedy;
}

/**
 * The reference's whole image (every reference with its image id) as kubelet sees it under the
 * node's containerd rule (shared/protection imageProtection). Set by the node inventory.
 */
export interface ProtectionVerdict {
  imagePinnedNow?: boolean;
  imagePinnedAfterRestart?: boolean;
}

/**
 * A durable pin Holdfast made that is gone now (label removed or distro-managed again;
 * shared/lostPins findLostPins). References gone entirely are only in the lost-pin list.
 */
export interface LostPinVerdict {
  lostPin?: LostPin;
}

/**
 * What the site's need makes of the image (shared/needs judgeNeeds, need × protection): at risk
 * when needed and unprotected now or after the next start; with the workloads that need it.
 */
export interface NeedVerdict {
  need?: RefNeed;
}

/** A .txt list names another tag of this durable reference's image: k3s takes the pin over (shared/listTrap). */
export interface ListTrapVerdict {
  listTrap?: ListTrap;
}

/** Whether peers can pull this reference through k3s's embedded registry, and why not (shared/embeddedRegistry). */
export interface PeersVerdict {
  peers?: PeerServing;
}

/**
 * What Holdfast verified of the image's signature when it imported it, from its labels
 * (shared/signatures signatureRecord): null when it never verified one.
 */
export interface SignatureVerdict {
  signature?: SignatureRecord | null;
}

/** One reference as the views show it: the record and every verdict about it. */
export type ImageRef = ImageRecord &
  PinVerdict &
  FateVerdict &
  ProtectionVerdict &
  LostPinVerdict &
  NeedVerdict &
  ListTrapVerdict &
  PeersVerdict &
  SignatureVerdict;
