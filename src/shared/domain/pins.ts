// Pin states and what a pin or unpin operation changes.

/**
 * durable: pinned for the CRI and no distro label, so k3s never strips it.
 * k3s:     a distro pin label is present; k3s strips it at its next start.
 * none:    kubelet's image GC may delete it.
 */
export type PinState = 'durable' | 'distro' | 'none';

export type Fate = 'pinned' | 'unpinned';

export interface LabelChange {
  ref: string;
  imageId: string | null;
  before: Record<string, string>;
  after: Record<string, string>;
}

/** What a pin set names (its spec; shared/pinSet reads and checks it). */
export interface PinSetSpec {
  /** References, as containerd stores them. */
  images: string[];
  /** Also every image the site needs (shared/needs). */
  needed: boolean;
  /** Globs over full references (shared/pinSet patternRegExp). */
  patterns: string[];
  /** What every image the set makes durable must carry (#48's verified signature record). */
  signatures?: PinSetSignatures;
}

/** A pin set's signature requirement: a verified record, by one of these signers when any are named. */
export interface PinSetSignatures {
  required: boolean;
  /** Key fingerprints (SHA-256 of the public key, hex). */
  keys?: string[];
  /** Keyless signers, as "identity (issuer)". */
  identities?: string[];
}

/**
 * What a pin or unpin acts on (the `pins.plan` / `pins.apply` target): named references, the
 * images an archive brings, every image the distro pinned (`allK3s`, RKE2's too), every image
 * the site needs that is on the node (`needed`: shared/needs), or what a pin set selects there
 * (`pinSet`: shared/pinSet, pin only). The contract's schema checks it.
 */
export type PinTarget = { refs: string[] } | { archive: string } | { allK3s: true } | { needed: true } | { pinSet: PinSetSpec };

/** Exactly what a pin/unpin operation will change, shown before it is applied. */
export interface PinPlan {
  node: string;
  action: 'pin' | 'unpin';
  changes: LabelChange[];
  /** References selected but left alone, with why (already durable, not found…). */
  unchanged: { ref: string; reason: string }[];
  /** Said before the pins are applied: what takes them from Holdfast again (a .txt list, shared/listTrap). */
  warnings?: string[];
}
