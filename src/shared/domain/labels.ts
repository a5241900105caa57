// The labels pins are made of, exactly as k3s, RKE2, the CRI plugin and Holdfast write them.

/** Pin labels, exactly as k3s, RKE2 and the CRI plugin write them. */
export const LABEL_CRI_PINNED = 'io.cri-containerd.pinned';
export const LABEL_K3S_PINNED = 'io.cattle.k3s.pinned';
export const LABEL_RKE2_PINNED = 'io.cattle.rke2.pinned';
export const PINNED = 'pinned';
export const DISTRO_PIN_LABELS = [LABEL_K3S_PINNED, LABEL_RKE2_PINNED] as const;
/** Who made a pin durable, when and from what: Holdfast's own labels beside the CRI pin. */
export const PROVENANCE = {
  by: 'io.holdfast.pinned-by',
  at: 'io.holdfast.pinned-at',
  from: 'io.holdfast.pinned-from',
} as const;
/**
 * What Holdfast verified of an image's signature when it imported it (#48), on the image beside
 * the pin: verified true/false, by (the key's fingerprint), format, at; reason when refused.
 */
export const SIGNATURE_LABELS = {
  verified: 'io.holdfast.signature.verified',
  by: 'io.holdfast.signature.by',
  format: 'io.holdfast.signature.format',
  at: 'io.holdfast.signature.at',
  reason: 'io.holdfast.signature.reason',
} as const;
