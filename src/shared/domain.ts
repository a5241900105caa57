// Domain types shared by the core, the CLI, main, preload and renderer.
// Plain data only: everything here crosses IPC / HTTP as JSON.
import type { ImportCacheHealth } from './importCacheHealth';
import type { CacheVerdict } from './importCache';
import type { ListTrap } from './listTrap';
import type { PeerServing } from './embeddedRegistry';
import type { ImportOptions, ImportTuning } from './importOptions';
import type { RefNeed } from './needVerdict';

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
 * durable: pinned for the CRI and no distro label, so k3s never strips it.
 * k3s:     a distro pin label is present; k3s strips it at its next start.
 * none:    kubelet's image GC may delete it.
 */
export type PinState = 'durable' | 'k3s' | 'none';

export interface NodeDef {
  name: string;
  host: string;
  port: number;
  user: string;
  /** Private key file; when absent, ssh-agent ($SSH_AUTH_SOCK) is used. */
  identity?: string;
  /** known_hosts file used to verify the node's host key. */
  knownHosts?: string;
  socket: string;
  imagesDir: string;
  /**
   * explicit: given by the user, never changed by Holdfast. detected: from the node's distro and
   * its config files' data-dir (a later connection updates it). Absent: the k3s default, not yet
   * detected.
   */
  imagesDirSource?: 'explicit' | 'detected';
  namespace: string;
  /** Site or group the node belongs to (fleet views and `inspect --group`). */
  group?: string;
  /** Reach containerd and the images dir through `sudo -n` (non-root SSH users). */
  sudo?: boolean;
  /** Name of another configured node to hop through (its own `jump` makes a chain). */
  jump?: string;
  /** How to authenticate: a key (identity file or ssh-agent; the default), or ask for a password. */
  auth?: 'publickey' | 'password' | 'keyboard-interactive';
  /**
   * The node's Kubernetes Node name, when it differs from `name` and the cluster lists none of
   * its addresses (shared/kubeNode): how the needs bound to one Node find it.
   */
  k8sNode?: string;
}

export type NodeInput = Omit<NodeDef, 'port' | 'user' | 'socket' | 'imagesDir' | 'namespace'> &
  Partial<Pick<NodeDef, 'port' | 'user' | 'socket' | 'imagesDir' | 'namespace'>>;

export const NODE_DEFAULTS = {
  port: 22,
  user: 'root',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  namespace: 'k8s.io',
} as const;

export type Distro = 'k3s' | 'rke2' | 'unknown';

/** Each distro's data-dir when its config sets none; the images dir is `<data-dir>/agent/images`. */
export const DATA_DIR_DEFAULTS = { k3s: '/var/lib/rancher/k3s', rke2: '/var/lib/rancher/rke2' } as const;
export const IMAGES_SUBDIR = 'agent/images';

/** Where the node's distro keeps its images dir, as read in the probe (core/node/distroConfig.ts). */
export interface ImagesDirDetection {
  imagesDir: string;
  dataDir: string;
  /** config: data-dir set in `file`; default: the distro's default data-dir. */
  from: 'config' | 'default';
  file: string | null;
  /** What makes it less than certain (a config file the SSH user cannot read, a value Holdfast cannot parse). */
  notes: string[];
}

export interface NodeInfo {
  containerdVersion: string;
  containerdRevision: string;
  distro: Distro;
  /** e.g. "v1.31.6+k3s1"; null when the distro binary did not answer. */
  distroVersion: string | null;
  /** The images dir the node's distro uses; absent when the probe did not run. */
  imagesDir?: ImagesDirDetection;
  /**
   * SHA256 fingerprint of the host key the node's sshd presented (and Holdfast verified): what
   * tells two configured nodes that are one machine (shared/sameMachine). Absent without SSH.
   */
  hostKey?: string;
}

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

export type Fate = 'pinned' | 'unpinned';

export type Compression = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'lz4';

/**
 * What fixes an archive that is not safe to remove (./archiveRemedy builds it): its images need
 * durable pins first — `holdfast pin NODE --archive PATH`, or Make durable in the app.
 */
export interface ArchiveRemedy {
  kind: 'pin-archive';
  archive: string;
  /** The CLI command, exactly as the reason sentences quote it. */
  command: string;
}

/** What a removal sets off without blocking it: one short clause, and the warning in full. */
export interface RemovalWarning {
  brief: string;
  reason: string;
}

/** One file in a node's images dir. */
export interface ArchiveInfo {
  /** Relative to the images dir, '/'-separated. */
  path: string;
  /** archive: k3s imports it; prepull: a .txt list of references; ignored: k3s skips it. */
  kind: 'archive' | 'prepull' | 'ignored';
  compression: Compression | null;
  size: number;
  mtime: string;
  /** References the archive brings (as containerd names them). */
  images: string[];
  /** Every image of the archive is present in containerd. */
  imported: boolean;
  /** Removing it now loses nothing: every image is complete and durably pinned. */
  safeToRemove: boolean;
  reason: string;
  /** .cache.json is on and lists this archive unchanged: k3s will skip it at start. */
  cachedByK3s: boolean;
  /** What the next start does with it because of .cache.json, and why (shared/importCache). */
  cache?: CacheVerdict;
  /** What makes it safe to remove, when pinning does (the CLI prints the command, the app a button). */
  remedy?: ArchiveRemedy;
  /**
   * What removing it sets off without blocking it (RKE2 writing its own image lists), as
   * `archives.check` warns of it (shared/removalVerdict removalWarnings); absent when nothing.
   */
  removalWarnings?: RemovalWarning[];
  /** Set when the archive's index could not be read. */
  error?: string;
  /** A .txt list: the durable references it hands to k3s through another tag of their image (shared/listTrap). */
  takesOver?: { ref: string; listed: string }[];
  /** The health of k3s's import cache on the node (the same for every file; shared/importCacheHealth). */
  importCache?: ImportCacheHealth;
}

export interface LabelChange {
  ref: string;
  imageId: string | null;
  before: Record<string, string>;
  after: Record<string, string>;
}

/**
 * What a pin or unpin acts on (the `pins.plan` / `pins.apply` target): named references, the
 * images an archive brings, every image the distro pinned (`allK3s`, RKE2's too), or every image
 * the site needs that is on the node (`needed`: shared/needs). The contract's schema checks it.
 */
export type PinTarget = { refs: string[] } | { archive: string } | { allK3s: true } | { needed: true };

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

export interface RemovalCheck {
  node: string;
  path: string;
  allowed: boolean;
  /** What blocks the removal, one sentence each (empty when allowed). */
  problems: string[];
  /** What the removal sets off without blocking it, one long form each (shared/rke2Lists). */
  warnings?: string[];
  /**
   * Per image the archive brings. `durable`: kubelet keeps the image with no archive re-pinning it
   * (shared/protection durableProtection, under the node's containerd rule); `refs` and
   * `protection` are the detail underneath — every reference of the image with its pin, and why.
   */
  images: {
    name: string;
    present: boolean;
    complete: boolean;
    durable: boolean;
    missing: string[];
    refs?: { name: string; pin: PinState }[];
    protection?: string;
  }[];
}

export interface AuditEntry {
  time: string;
  user: string;
  node: string;
  action: 'pin' | 'unpin' | 'rm-archive' | 'prune';
  forced?: boolean;
  changes?: LabelChange[];
  archive?: { path: string; size: number; sha256: string };
  /** prune: every image removed (all its references), and the bytes measured freed. */
  pruned?: PrunedRecord;
  note?: string;
  /** rm-archive: what its check warned of (RemovalCheck.warnings), said again once it is done. */
  warnings?: string[];
}

/** What one prune run removed from a node, as the audit log keeps it. */
export interface PrunedRecord {
  keepVersions: number;
  images: { imageId: string | null; refs: string[]; digests: string[]; bytes: number }[];
  plannedBytes: number;
  freedBytes: number;
}

export type ErrorCode =
  | 'HOST_KEY_UNKNOWN'
  | 'HOST_KEY_CHANGED'
  | 'AUTH_FAILED'
  | 'UNREACHABLE'
  | 'TIMEOUT'
  | 'CONTAINERD_UNAVAILABLE'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'INVALID_INPUT'
  | 'REFUSED'
  | 'INTERNAL';

/**
 * What lets Holdfast in when a node refuses it, as data (the CLI words it as the command that
 * works where it is read, the app as its own control): trust-host-key: accept the key with
 * `fingerprint` for the configured `node` (the jump host's, for a hop) once it is checked on the
 * node; sudo: reach containerd and the images dir through the node's sudo option.
 */
export type AccessRemedy = { kind: 'trust-host-key'; node: string; fingerprint: string } | { kind: 'sudo'; node: string };

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  /** How to get in, when the node refused Holdfast (see AccessRemedy). */
  access?: AccessRemedy;
  /** What the user can do about it. */
  hint?: string;
  /** SHA256:… fingerprint of the key the host presented (host key errors). */
  fingerprint?: string;
  /** SHA256:… fingerprint on record (changed host key). */
  expectedFingerprint?: string;
  /** What helps when running the same command again would not; each view words it. */
  remedy?: ErrorRemedy;
}

/**
 * k3s-start-or-direct: k3s's watcher will not import `archive` (relative to the images dir of
 * `node`) again by itself; a start of the node's `distro` imports it, or a direct delivery.
 */
export interface ErrorRemedy {
  kind: 'k3s-start-or-direct';
  node: string;
  archive: string;
  distro: Distro;
}

export type NodeConnState = 'unknown' | 'connecting' | 'connected' | 'error';

export interface NodeStatus {
  name: string;
  state: NodeConnState;
  info?: NodeInfo;
  error?: ErrorInfo;
}

/** A local archive, inspected before any byte leaves the laptop. */
export interface LocalArchive {
  path: string;
  size: number;
  sha256: string;
  format: 'docker' | 'oci';
  compression: Compression;
  /**
   * What k3s will import: every image with its platforms, the config digest (image id) of the
   * first complete one, and of every complete one (which nodes hold it: shared/archiveHoldings).
   */
  images: { name: string | null; platforms: string[]; configDigest: string | null; configDigests: string[] }[];
  uncompressedBytes: number;
  /**
   * What k3s imports but the person should know, one sentence each: platforms listed without
   * their blobs (skipped), images without a name (not kept), bare-tag names (not usable by pods).
   */
  warnings: string[];
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export type ImportPhase = 'queued' | 'checking' | 'uploading' | 'verifying' | 'importing' | 'pinning' | 'removing' | 'done';

/** One node's part of a job. */
export interface JobNodeProgress {
  node: string;
  state: JobState;
  phase: ImportPhase;
  bytesDone: number;
  bytesTotal: number;
  /** Bytes per second over the last few seconds. */
  rate: number;
  /** Seconds left for this node's upload, null when unknown. */
  eta: number | null;
  message: string;
  /** Something about this node's run to tell the person, once: e.g. why a partial upload was not resumed. */
  notice?: string;
  error?: ErrorInfo;
  /** What the run did on this node, once it succeeded. */
  result?: JobNodeResult;
}

/** One node's outcome of a job that succeeded there (what `holdfast upload` / `import` print). */
export interface JobNodeResult {
  /** Where the archive is in the images dir. */
  relPath: string;
  sha256: string;
  /** false: the archive was already there (or, for an import, nothing needed doing). */
  uploaded: boolean;
  /** Bytes an earlier run had already sent (0: none, or started over). */
  resumedFrom: number;
  /** One sentence: what was done ("uploaded and imported, 4 references pinned durably…"). */
  summary: string;
  /** Why the archive went under another name than its own. */
  renamed?: string;
  /** What the node makes of the result (e.g. a containerd that ignores every pin), one sentence each. */
  warnings?: string[];
}

/** How a job was asked for: the import's options, and how the CLI tuned it (parallel, timeout: an import's, see importOptions.ts). */
export interface JobOptions extends ImportOptions, ImportTuning {
  /** The name in the images dir (an upload; default the file's name). */
  as?: string;
}

/** Long work owned by main (or the server), with progress and cancel; survives the UI leaving. */
export interface Job {
  id: string;
  /** import: the guided import (the app's wizard, `holdfast import`); upload: `holdfast upload`, one node, no import. */
  kind: 'import' | 'upload';
  title: string;
  state: JobState;
  createdAt: string;
  finishedAt: string | null;
  /** 0..1 across all nodes. */
  progress: number;
  nodes: JobNodeProgress[];
  /** The archive as inspected before the job started (format, compression, images: when the service inspected it). */
  archive: { path: string; size: number; sha256: string | null; format?: LocalArchive['format']; compression?: LocalArchive['compression']; images?: number };
  options: JobOptions;
}

/** A secret the app must ask the person for while connecting (answered once, never shown again). */
export interface CredentialRequest {
  id: string;
  kind: 'passphrase' | 'password' | 'keyboard-interactive';
  /** What is asked for: the key file, or user@host. */
  subject: string;
  prompts: { prompt: string; echo: boolean }[];
  instructions?: string;
}

/**
 * How a durable pin Holdfast made (audit log) disappeared behind its back:
 * label-removed:     the reference is there, its io.cri-containerd.pinned label is not.
 * ref-deleted:       the reference is gone; the image is still there under other references.
 * image-deleted:     no reference of the image is left: the image itself is gone.
 * k3s-managed-again: the reference carries the k3s/RKE2 pin label again (re-imported from an
 *                    archive or a pre-pull list): the next k3s start strips its pin.
 */
export type LostPinKind = 'label-removed' | 'ref-deleted' | 'image-deleted' | 'k3s-managed-again';

/** What brings a lost pin back. Only `repin` is one click (the pin operation with `target`). */
export interface LostPinRemedy {
  /** repin: pin `target` again; restore-from-archive: an archive in the images dir brings the image back; reimport: nothing on the node does. */
  kind: 'repin' | 'restore-from-archive' | 'reimport';
  /** One or two sentences a technician can act on. */
  text: string;
  /** The CLI line that does it (or starts it), when there is one. */
  command?: string;
  /** repin: what to pin (every reference of the image is pinned with it). */
  target?: { refs: string[] };
  /** The archive (relative to the images dir) that brings the image back, or that must go after re-pinning. */
  archive?: string;
}

export interface LostPin {
  node: string;
  kind: LostPinKind;
  ref: string;
  imageId: string | null;
  /** When Holdfast made the pin durable, and who (the audit entry). */
  pinnedAt: string;
  pinnedBy: string;
  /** One sentence: which pin is gone and what that means for the image now. */
  summary: string;
  /** The likely causes, most likely first, one sentence each. */
  causes: string[];
  remedy: LostPinRemedy;
  /** Another reference of the same image that still carries the CRI pin (CRI keeps the image through it), or null. */
  stillPinnedVia: string | null;
}

/**
 * Something about what a node runs that changes what pins mean there (shared/nodeWarnings.ts):
 * no-cri-pinning:      containerd < 1.7.3: kubelet's GC ignores every pin.
 * distro-pins-nothing: a k3s/RKE2 release that pins nothing it imports.
 */
export interface NodeWarning {
  kind: 'no-cri-pinning' | 'distro-pins-nothing';
  message: string;
}
