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
