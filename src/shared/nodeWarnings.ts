// Node-level warnings about what pins mean on a node, from the versions it runs. The version
// rules themselves live in ./versions.ts; this turns their answers into sentences a technician
// can act on, once, for the CLI, the reports, the server and the app alike.
import { distroDisplayName } from './distro';
import type { NodeInfo, NodeWarning } from './domain/nodes';
import { criPinning, DISTRO_PINS_FROM, distroPinsImports } from './versions';

const distroName = (info: Partial<Pick<NodeInfo, 'distro'>>) => distroDisplayName(info.distro ?? 'unknown');

/** "v1.29.1, v1.28.6, v1.27.10, v1.26.13": the first releases that pin imports, newest line first. */
function firstPinningReleases(): string {
  return Object.entries(DISTRO_PINS_FROM)
    .map(([minor, patch]) => ({ minor: Number(minor), patch }))
    .sort((a, b) => b.minor - a.minor)
    .map((r) => `v1.${r.minor}.${r.patch}`)
    .join(', ');
}

/**
 * The warnings for a node, at most one per kind; none when its versions are unknown (an
 * unreadable version is not evidence of an old one).
 */
export function nodeWarnings(info: Pick<NodeInfo, 'containerdVersion' | 'distro' | 'distroVersion'> | null | undefined): NodeWarning[] {
  if (!info) return [];
  const out: NodeWarning[] = [];
  if (criPinning(info.containerdVersion) === 'none') {
    out.push({
      kind: 'no-cri-pinning',
      message: `containerd ${info.containerdVersion} has no CRI image pinning (needs 1.7.3+; ${distroName(info)} bundles 1.7/2.x) — kubelet's image GC may delete any image, pinned or not.`,
    });
  }
  if (info.distroVersion && distroPinsImports(info.distroVersion) === 'no') {
    out.push({
      kind: 'distro-pins-nothing',
      message:
        `${distroName(info)} ${info.distroVersion} pins nothing it imports (pins came with ${firstPinningReleases()}) — ` +
        `its imported images are held only by a lease kubelet's GC ignores: make their pins durable, or upgrade ${distroName(info)}.`,
    });
  }
  return out;
}

/**
 * What `holdfast pin` (and the app's pin dialog) says before pinning on a node whose kubelet
 * cannot honour any pin; null where pins work. Pinning stays allowed: the label is harmless
 * and takes effect once the node runs a containerd with CRI pinning.
 */
export function pinNotHonoured(node: string, info: (Pick<NodeInfo, 'containerdVersion'> & Partial<Pick<NodeInfo, 'distro'>>) | null | undefined): string | null {
  if (!info || criPinning(info.containerdVersion) !== 'none') return null;
  return (
    `kubelet on ${node} will not honour this pin: containerd ${info.containerdVersion} has no CRI image pinning (needs 1.7.3+; ${distroName(info)} bundles 1.7/2.x). ` +
    `The label is set anyway (harmless) and counts once the node runs containerd 1.7.3 or later.`
  );
}
