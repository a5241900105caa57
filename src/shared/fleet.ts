// The fleet report: every node's inventory side by side, and where the nodes disagree.
// Plain JSON data, the same for `holdfast inspect --json`, the HTML/CSV reports and a UI.
import type { ErrorCode, ErrorInfo } from './domain/errors';
import type { ImageRef } from './domain/images';
import type { LostPin } from './domain/lostPins';
import type { NodeInfo, NodeWarning } from './domain/nodes';
import type { AtRiskImage, NeedsReport } from './needs';
import type { NodeRegistries } from './registryMirrors';
import type { EmbeddedRegistryConfig } from './embeddedRegistry';
import { archivesInWords, type ArchiveFile } from './archivesReport';
import { inParens, type RemedyWording } from './remedy';
import { lostPinInWords } from './lostPins';
import type { ImportCacheHealth } from './importCacheHealth';
import type { DiskPicture } from './diskPicture';
import type { SameMachine } from './sameMachine';
import type { GuardView } from './guardState';

/** Free and total bytes of the file system that holds a node's images dir. */
export interface DiskInfo {
  /** The directory measured: the images dir, or its nearest existing parent. */
  path: string;
  freeBytes: number;
  /** null when only `df` answered and its total could not be read. */
  totalBytes: number | null;
  via: 'statvfs' | 'df';
}

/**
 * One node as the fleet inspection saw it. `images` is exactly what `holdfast images NODE --json`
 * prints; `importCache` and `archives` are what `holdfast archives NODE --json` prints under
 * those names (shared/archivesReport: the cache health once for the node, not in every file).
 * reachable=false means Holdfast could not take the inventory (SSH, host key, containerd or
 * timeout): `error` says why and versions/images/archives/disk are null ("unknown", not "none").
 */
export interface FleetNodeResult {
  node: string;
  reachable: boolean;
  error: ErrorInfo | null;
  versions: NodeInfo | null;
  images: ImageRef[] | null;
  archives: ArchiveFile[] | null;
  /** k3s's `.cache.json` health on the node (shared/importCacheHealth); null if unreachable or the images dir is empty. */
  importCache?: ImportCacheHealth | null;
  /** null when neither statvfs nor df answered (the rest of the node's result still stands). */
  disk: DiskInfo | null;
  /** Durable pins Holdfast made on the node (its audit log) that are gone; null if unreachable. */
  lostPins?: LostPin[] | null;
  /** What the node's versions mean for pins (shared/nodeWarnings), once per node; null if unreachable. */
  warnings?: NodeWarning[] | null;
  /** What the site needs on the node and what that means there (shared/needs); null if unreachable. */
  needs?: NeedsReport | null;
  /** The node's registries.yaml mirrors and rewrites, never its credentials (shared/registryMirrors); null if unreachable or not read. */
  registries?: NodeRegistries | null;
  /** k3s's embedded registry as the node's config says (shared/embeddedRegistry); each image then carries `peers`. */
  embeddedRegistry?: EmbeddedRegistryConfig | null;
  /** The node's guard (#50) as its state record says, judged at the inspection (shared/guardState); null if unreachable. */
  guard?: GuardView | null;
  /**
   * Only when the run asked for it (fleet.start `diskPicture`, for the metrics series): the
   * node's image file system and kubelet's GC thresholds, without its images, measured on the
   * inspection's own connection; null when it could not be measured, with why in `diskPictureError`.
   */
  diskPicture?: DiskPicture | null;
  diskPictureError?: ErrorInfo | null;
}

/**
 * An image name (tag or digest reference) the reachable nodes disagree about. Only names
 * that differ are listed: missing on some reachable node, or pinned on some and not on others.
 * "Pinned" means pinned NOW (pin `durable` or `k3s`: kubelet's GC skips it today), whatever
 * its fate at the next k3s start; the fate is in each node's images and in the summary.
 * Node lists follow the order of the nodes in the report.
 */
export interface DriftEntry {
  name: string;
  presentOn: string[];
  /** Reachable nodes without it (unreachable nodes are never counted: unknown is not absent). */
  missingOn: string[];
  pinnedOn: string[];
  unpinnedOn: string[];
}

/** Why a node needs attention, one sentence each. */
export interface NodeRisk {
  node: string;
  unreachable: boolean;
  /**
   * Images (by image id) kubelet sees pinned now that lose that at the next k3s start, by the
   * node's containerd rule (shared/protection); each image's references are in the node's images.
   */
  losingPins: number;
  /** Those images: every reference, the ones that decide, and why (the image-level verdict). */
  losingImages?: { imageId: string | null; refs: string[]; deciding: string[]; reason: string }[];
  /** Durable pins Holdfast made that are gone already. */
  lostPins?: number;
  /**
   * Needed images that are missing, unprotected now, or unprotected after the next k3s start
   * (shared/needs), with the workloads that need them: "will a pod at this site fail?".
   */
  atRisk?: AtRiskImage[];
  /** Node capability warnings (e.g. a containerd without CRI pinning). */
  warnings?: number;
  lowDisk: boolean;
  /** Set when this node is a machine the report already has under another name (the same host key): not in the totals. */
  sameMachine?: SameMachine;
  reasons: string[];
}

export interface FleetSummary {
  /** Machines: configured nodes that are one machine (the same host key, shared/sameMachine) count once, in every total. */
  nodes: number;
  reachable: number;
  unreachable: number;
  /** Images (over all nodes, by image id per node) that lose their pin at the next k3s start, as kubelet sees them. */
  losingPins: number;
  /** Durable pins Holdfast made (over all nodes) that are gone already. */
  lostPins?: number;
  lowDisk: number;
  drift: number;
  /** Nodes at risk (unreachable, lost or losing pins, a capability warning, or low on disk), in report order. */
  atRisk: NodeRisk[];
  /** Needed images at risk over all reachable nodes (missing, unprotected now or after the next k3s start). */
  atRiskImages?: number;
  /** The low-disk rule used: below this many free bytes, or this fraction of the total. */
  lowDiskRule: { minFreeBytes: number; minFreeRatio: number };
  durationMs: number;
  /** Configured nodes that are one machine (the same SSH host key); the first of each is the one counted. */
  sameMachine?: SameMachine[];
}

export interface FleetReport {
  generatedAt: string;
  summary: FleetSummary;
  nodes: FleetNodeResult[];
  drift: DriftEntry[];
}


/**
 * What a node the run could not inspect reads as, by its error's kind. A node that answered but
 * refused (its login may not read the images dir, a changed host key) is not "unreachable": the
 * fix is on the node or in its settings, not in the network.
 */
export function notInspectedStatus(code: ErrorCode | undefined): string {
  switch (code) {
    case 'UNREACHABLE':
    case 'TIMEOUT':
    case undefined:
      return 'unreachable';
    case 'HOST_KEY_UNKNOWN':
    case 'HOST_KEY_CHANGED':
      return 'host key';
    case 'AUTH_FAILED':
      return 'login refused';
    case 'REFUSED':
      return 'refused';
    case 'CONTAINERD_UNAVAILABLE':
      return 'no containerd';
    default:
      return 'failed';
  }
}

/**
 * The report with every archive's reason and lost pin's remedy in words (`word`: how a remedy is
 * said on its own, the CLI's command line; in a sentence, in parentheses): what JSON carries.
 */
export function fleetInWords(report: FleetReport, word?: RemedyWording): FleetReport {
  const lost = (l: LostPin) => lostPinInWords(l, word);
  return {
    ...report,
    nodes: report.nodes.map((n) => ({
      ...n,
      ...(n.archives ? { archives: archivesInWords(n.archives, word && inParens(word)) } : {}),
      ...(n.lostPins ? { lostPins: n.lostPins.map(lost) } : {}),
      ...(n.images ? { images: n.images.map((r) => (r.lostPin ? { ...r, lostPin: lost(r.lostPin) } : r)) } : {}),
    })),
  };
}
