// The fleet overview's pin verdict: never an all-clear for data not yet in.

export interface FleetPinInput {
  /** The node's connection state. */
  connection: string;
  /** Its images list (state, and when it last loaded). */
  images: { state: string; loadedAt?: number };
  /** Images at risk on it (counted only once its images are in). */
  atRisk: number;
}

export type FleetPinVerdict =
  | { kind: 'at-risk'; images: number; nodes: number; pending: number }
  | { kind: 'loading'; nodes: number }
  | { kind: 'unknown'; nodes: number }
  | { kind: 'all-clear' }
  | { kind: 'nothing' };

/**
 * What the fleet banner may say: images at risk; else, while a connected node's images are not in
 * yet, that they are loading (or could not be listed) — never "no pin is lost" for a node whose
 * images Holdfast has not seen; else the all-clear for the connected nodes.
 */
export function fleetPinVerdict(nodes: readonly FleetPinInput[]): FleetPinVerdict {
  const connected = nodes.filter((n) => n.connection === 'connected');
  const notIn = connected.filter((n) => !n.images.loadedAt);
  const failed = notIn.filter((n) => n.images.state === 'error').length;
  const loading = notIn.length - failed;
  const risky = connected.filter((n) => n.images.loadedAt && n.atRisk > 0);
  if (risky.length) return { kind: 'at-risk', images: risky.reduce((s, n) => s + n.atRisk, 0), nodes: risky.length, pending: notIn.length };
  if (loading) return { kind: 'loading', nodes: loading };
  if (failed) return { kind: 'unknown', nodes: failed };
  return connected.length ? { kind: 'all-clear' } : { kind: 'nothing' };
}
