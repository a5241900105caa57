// What node add and node edit share: the long help notes, the images dir line, the lazy validator,
// a failed check's error.
import { describeImagesDir } from '../../../core/node/distroConfig';
import { HoldfastError } from '../../../core/errors';
import { checkHint } from '../../accessText';
import { ASSUMED_DISTRO, distroDisplayName } from '../../../shared/distro';
import type { NodeDef, NodeInfo } from '../../../shared/domain/nodes';

// Validating a node (zod) loads when a command that adds or changes one runs.
export const nodes = () => import('../../../core/config/nodes');

/** One line saying which images dir a node uses and why (explicit, or detected from what). */
export function imagesDirLine(def: Pick<NodeDef, 'imagesDir' | 'imagesDirSource'>, info?: NodeInfo): string {
  if (def.imagesDirSource === 'explicit') return `  images dir: ${def.imagesDir} (as given)`;
  if (def.imagesDirSource === 'detected' && info?.imagesDir) return `  images dir: ${def.imagesDir} (${describeImagesDir(info.distro, info.imagesDir)})`;
  return `  images dir: ${def.imagesDir} (${distroDisplayName(ASSUMED_DISTRO)}'s default; the node's distro and data-dir are read when Holdfast connects)`;
}

/** What --accept-new-host-key does in full (node add and node edit). */
export const HOST_KEY_NOTE =
  '--accept-new-host-key=SHA256:FINGERPRINT records the key of a host not yet in known_hosts only if it has that fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the node prints it); give it once per new host of a --jump chain. Bare, it shows each new fingerprint and asks (on a terminal only). A key that changed is refused whatever the flag says: remove its old entry first (ssh-keygen -R), then `holdfast node edit NAME --accept-new-host-key=SHA256:…` trusts the new one.';
/** What --k8s-node does (node add and node edit). */
export const K8S_NODE_NOTE =
  "--k8s-node: the node's name in `kubectl get nodes`, when it is not the name given here and the cluster lists none of its addresses; needs bound to one Node (its pods, a DaemonSet's) then count on it.";
/** What --auth and --sudo do in full (node add and node edit). */
export const LOGIN_NOTE =
  '--auth password or keyboard-interactive: the answers are asked on the terminal when Holdfast connects, never stored. --sudo: log in as a non-root --user and reach containerd and the images dir through `sudo -n` (passwordless sudo for them).';

/** A failed check of node add or node edit, its hint worded by checkHint (the error as it is when it has no access remedy). */
export function checkError(e: unknown, def: Pick<NodeDef, 'name'>, argv: readonly string[]): unknown {
  if (!(e instanceof HoldfastError) || !e.access) return e;
  const hint = checkHint(e, def, argv);
  return new HoldfastError(e.code, e.message, {
    ...(hint !== undefined ? { hint } : {}),
    ...(e.fingerprint !== undefined ? { fingerprint: e.fingerprint } : {}),
    ...(e.expectedFingerprint !== undefined ? { expectedFingerprint: e.expectedFingerprint } : {}),
    cause: e,
  });
}
