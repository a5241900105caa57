// Which nodes need attention and why: unreachable, pins lost at the next k3s start, low disk.
// "Loses its pin" is the image-level verdict of shared/protection (what kubelet sees per image
// id under the node's containerd rule), the same the app and rm-archive give.
import { distroDisplayName, distrosDisplayName } from '../../../shared/distro';
import { formatBytes } from '../../../shared/format';
import { LOST_PIN_KIND_TEXT } from '../../../shared/lostPins';
import { nodeWarnings } from '../../../shared/nodeWarnings';
import { imageProtection, losingImages, type ImageProtection } from '../../../shared/protection';
import { criPinning } from '../../../shared/versions';
import { notInspectedStatus, type DriftEntry, type FleetNodeResult, type FleetSummary, type NodeRisk } from '../../../shared/fleet';
import { imageName } from '../../../shared/imageReference';
import { atRiskOf, atRiskText } from '../../../shared/needs';
import { repeatedMachines, sameMachines, sameMachineText, type SameMachine } from '../../../shared/sameMachine';

export interface LowDiskRule {
  minFreeBytes: number;
  minFreeRatio: number;
}

/** Low on disk below 1 GiB free or below 5 % of the file system. */
export const DEFAULT_LOW_DISK: LowDiskRule = { minFreeBytes: 1024 ** 3, minFreeRatio: 0.05 };

/** The node's distro as the text names it ("k3s", "RKE2"; k3s when unreachable or undetected). */
export const nodeDistroName = (r: Pick<FleetNodeResult, 'versions'>): string => distroDisplayName(r.versions?.distro ?? 'unknown');

/** The fleet's distro in its totals: the one its nodes share, else "k3s/RKE2" (shared/distro). */
export const fleetDistroName = (nodes: readonly Pick<FleetNodeResult, 'versions'>[]): string =>
  distrosDisplayName(nodes.map((n) => n.versions?.distro ?? 'unknown'));

/** Every image of a node (by image id) with what kubelet sees now and after the next k3s start. */
export const protectionOf = (r: Pick<FleetNodeResult, 'images' | 'versions'>): Map<string, ImageProtection> =>
  imageProtection(r.images ?? [], criPinning(r.versions?.containerdVersion), nodeDistroName(r));

/** The images of a node kubelet sees pinned now and unpinned after the next k3s start. */
export const losingImagesOf = (r: Pick<FleetNodeResult, 'images' | 'versions'>): ImageProtection[] =>
  losingImages(r.images ?? [], criPinning(r.versions?.containerdVersion), nodeDistroName(r));

/** "app:3, tools:5 and 2 more": an image by its first reference (a tag before CRI's own record). */
export function imageNames(images: ImageProtection[], max = 3): string {
  const first = images.map((p) => imageName(p.refs, p.key));
  const shown = first.slice(0, max).join(', ');
  return first.length > max ? `${shown} and ${first.length - max} more` : shown;
}

export function isLowDisk(r: Pick<FleetNodeResult, 'disk'>, rule: LowDiskRule = DEFAULT_LOW_DISK): boolean {
  if (!r.disk) return false;
  if (r.disk.freeBytes < rule.minFreeBytes) return true;
  return r.disk.totalBytes !== null && r.disk.totalBytes > 0 && r.disk.freeBytes / r.disk.totalBytes < rule.minFreeRatio;
}

/** The node's capability warnings: as probed, else from its versions (same rule either way). */
export const warningsOf = (r: Pick<FleetNodeResult, 'warnings' | 'versions'>) => r.warnings ?? nodeWarnings(r.versions);

/** "2 durable pins Holdfast made are gone: a:1 (pin label removed), b:2 (image deleted)". */
function lostReason(r: FleetNodeResult): string | null {
  const lost = r.lostPins ?? [];
  if (!lost.length) return null;
  const shown = lost.slice(0, 3).map((l) => `${l.ref} (${LOST_PIN_KIND_TEXT[l.kind]})`);
  const more = lost.length > 3 ? ` and ${lost.length - 3} more` : '';
  return `${lost.length} durable pin${lost.length === 1 ? '' : 's'} Holdfast made ${lost.length === 1 ? 'is' : 'are'} gone: ${shown.join(', ')}${more}`;
}

/** Which configured nodes of a run are one machine: by the host key each presented (shared/sameMachine). */
export const sameMachinesOf = (nodes: readonly Pick<FleetNodeResult, 'node' | 'versions'>[]): SameMachine[] =>
  sameMachines(nodes.map((n) => ({ node: n.node, hostKeys: n.versions?.hostKey ? [n.versions.hostKey] : [] })));

/** `sameMachine`: the group when this node repeats a machine counted under another name. */
export function nodeRisk(r: FleetNodeResult, rule: LowDiskRule = DEFAULT_LOW_DISK, sameMachine?: SameMachine): NodeRisk {
  const losingImages = losingImagesOf(r);
  const losing = losingImages.length;
  const low = isLowDisk(r, rule);
  const warnings = warningsOf(r);
  const lost = lostReason(r);
  const reasons: string[] = [];
  if (!r.reachable) reasons.push(`${notInspectedStatus(r.error?.code)}: ${r.error?.message ?? 'unknown error'}`);
  if (sameMachine) reasons.push(`${sameMachineText(sameMachine)}: counted once in the totals`);
  for (const w of warnings) reasons.push(w.message);
  if (lost) reasons.push(lost);
  const atRisk = atRiskOf(r.images, r.needs);
  if (atRisk.length) {
    reasons.push(`${atRisk.length} needed image${atRisk.length === 1 ? '' : 's'} at risk (a pod that needs ${atRisk.length === 1 ? 'it' : 'them'} may not start): ${atRiskText(atRisk)}`);
  }
  if (losing) {
    reasons.push(`${losing} image${losing === 1 ? '' : 's'} lose${losing === 1 ? 's' : ''} ${losing === 1 ? 'its' : 'their'} pin at the next ${nodeDistroName(r)} start (as kubelet sees ${losing === 1 ? 'it' : 'them'}): ${imageNames(losingImages)}`);
  }
  if (low && r.disk) {
    reasons.push(`low disk: ${formatBytes(r.disk.freeBytes)} free${r.disk.totalBytes !== null ? ` of ${formatBytes(r.disk.totalBytes)}` : ''} at ${r.disk.path}`);
  }
  return {
    node: r.node,
    unreachable: !r.reachable,
    losingPins: losing,
    losingImages: losingImages.map((p) => ({ imageId: p.imageId, refs: p.refs, deciding: p.deciding, reason: p.reason })),
    lostPins: r.lostPins?.length ?? 0,
    atRisk,
    warnings: warnings.length,
    lowDisk: low,
    ...(sameMachine ? { sameMachine } : {}),
    reasons,
  };
}

export function summarizeFleet(nodes: FleetNodeResult[], drift: DriftEntry[], rule: LowDiskRule = DEFAULT_LOW_DISK, durationMs = 0): FleetSummary {
  // One machine configured twice counts once: its first entry in the report stands for it.
  const same = sameMachinesOf(nodes);
  const repeated = repeatedMachines(same);
  const risks = nodes.map((n) => nodeRisk(n, rule, repeated.has(n.node) ? same.find((g) => g.nodes.includes(n.node)) : undefined));
  const machines = nodes.filter((n) => !repeated.has(n.node));
  const counted = risks.filter((r) => !repeated.has(r.node));
  return {
    nodes: machines.length,
    reachable: machines.filter((n) => n.reachable).length,
    unreachable: machines.filter((n) => !n.reachable).length,
    losingPins: counted.reduce((s, r) => s + r.losingPins, 0),
    lostPins: counted.reduce((s, r) => s + (r.lostPins ?? 0), 0),
    lowDisk: counted.filter((r) => r.lowDisk).length,
    drift: drift.length,
    atRisk: risks.filter((r) => r.reasons.length > 0),
    atRiskImages: counted.reduce((s, r) => s + (r.atRisk?.length ?? 0), 0),
    lowDiskRule: { ...rule },
    durationMs: Math.round(durationMs),
    ...(same.length ? { sameMachine: same } : {}),
  };
}
