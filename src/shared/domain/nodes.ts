// A configured node and what its probe found out about it.

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

/**
 * Something about what a node runs that changes what pins mean there (shared/nodeWarnings.ts):
 * no-cri-pinning:      containerd < 1.7.3: kubelet's GC ignores every pin.
 * distro-pins-nothing: a k3s/RKE2 release that pins nothing it imports.
 */
export interface NodeWarning {
  kind: 'no-cri-pinning' | 'distro-pins-nothing';
  message: string;
}
