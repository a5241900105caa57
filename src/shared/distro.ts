// One profile per distro Holdfast knows: every fact the code used to branch on with
// `distro === 'rke2'` lives here, so RKE2 is a row, not a branch (issue #34). The values are those
// of docs/k3s-facts.md ("Where things live on a node", "Which images a site needs"); the
// per-release rules are the same for both (RKE2 carries k3s's agent code on the same Kubernetes
// lines: versions.ts K3S_RELEASES). Pure data: the shell that reads these paths on a node is built
// from it in src/core (core/node/distroShell.ts).
import { LABEL_K3S_PINNED, LABEL_RKE2_PINNED } from './domain/labels';
import { DATA_DIR_DEFAULTS, NODE_DEFAULTS, type Distro } from './domain/nodes';

export type KnownDistro = Exclude<Distro, 'unknown'>;

export interface DistroProfile {
  /** The Distro value, and the name of its binary (`k3s --version`, `rke2 --version`). */
  id: KnownDistro;
  /** How people write it in text: "k3s", "RKE2". */
  displayName: string;
  /** The first line of `<binary> --version`: `k3s version v1.31.6+k3s1 (6ab750f9)`. */
  versionLine: RegExp;
  /** data-dir when its config sets none; the images dir is `<data-dir>/agent/images`. */
  dataDirDefault: string;
  /** The label it puts on the images it imports, and strips at its next start. */
  pinLabel: string;
  /** The config file it reads first; drop-ins are in `${configFile}.d/`. */
  configFile: string;
  /** Its containerd socket (fixed: it does not follow data-dir; the same for both, NODE_DEFAULTS). */
  socket: string;
  /**
   * How to run kubectl on a server node: k3s's own `k3s kubectl` subcommand (it finds its
   * kubeconfig itself), or a kubectl binary under data-dir (`bin/kubectl`, its default data-dir's
   * copy as a fallback) given the kubeconfig explicitly.
   */
  kubectl: { kind: 'subcommand'; kubeconfig: string } | { kind: 'bundled'; dataDirPath: string; kubeconfig: string };
  /** Where its log is, as a technician reads it (systemd units from the install scripts). */
  serviceLog: string;
  /**
   * Whether it writes its own `<component>-image.txt` lists into the images dir at start when the
   * dir's top level holds no archive (RKE2 does, k3s never: ./rke2Lists).
   */
  writesOwnImageLists: boolean;
}

export const DISTRO_PROFILES: Readonly<Record<KnownDistro, DistroProfile>> = {
  k3s: {
    id: 'k3s',
    displayName: 'k3s',
    versionLine: /^k3s version (v\d+\.\d+\.\d+\S*)/m,
    dataDirDefault: DATA_DIR_DEFAULTS.k3s,
    pinLabel: LABEL_K3S_PINNED,
    configFile: '/etc/rancher/k3s/config.yaml',
    socket: NODE_DEFAULTS.socket,
    kubectl: { kind: 'subcommand', kubeconfig: '/etc/rancher/k3s/k3s.yaml' },
    serviceLog: 'journalctl -u k3s, or -u k3s-agent on agents',
    writesOwnImageLists: false,
  },
  rke2: {
    id: 'rke2',
    displayName: 'RKE2',
    versionLine: /^rke2 version (v\d+\.\d+\.\d+\S*)/m,
    dataDirDefault: DATA_DIR_DEFAULTS.rke2,
    pinLabel: LABEL_RKE2_PINNED,
    configFile: '/etc/rancher/rke2/config.yaml',
    socket: NODE_DEFAULTS.socket,
    kubectl: { kind: 'bundled', dataDirPath: 'bin/kubectl', kubeconfig: '/etc/rancher/rke2/rke2.yaml' },
    serviceLog: 'journalctl -u rke2-server, or -u rke2-agent on agents',
    writesOwnImageLists: true,
  },
};

/** The order the probe tries the binaries in: the first that answers `--version` is the distro. */
export const DISTRO_ORDER: readonly KnownDistro[] = ['k3s', 'rke2'];

/** Which profile applies when none answered `--version`: k3s is assumed. */
export const ASSUMED_DISTRO: KnownDistro = 'k3s';

/** A node's profile; an undetected distro gets the assumed one (k3s). */
export function distroProfile(distro: Distro): DistroProfile {
  return DISTRO_PROFILES[distro === 'unknown' ? ASSUMED_DISTRO : distro];
}

/** The display name of the family when none was detected. */
export const UNDETECTED_DISTRO_NAME = DISTRO_ORDER.map((d) => DISTRO_PROFILES[d].displayName).join('/');

/** "k3s" / "RKE2" (k3s when undetected: the rules assumed are k3s's). */
export function distroDisplayName(distro: Distro): string {
  return distroProfile(distro).displayName;
}

/**
 * The distros of several nodes in one name: the one they share ("RKE2"), else "k3s/RKE2" (a
 * fleet's totals). A node whose distro was not detected says nothing about the others: an RKE2
 * fleet with one node unreachable is still "RKE2".
 */
export function distrosDisplayName(distros: readonly Distro[]): string {
  const names = new Set(distros.filter((d) => d !== 'unknown').map(distroDisplayName));
  if (names.size === 0) return distroDisplayName('unknown');
  return names.size === 1 ? [...names][0]! : UNDETECTED_DISTRO_NAME;
}

/**
 * The distro whose pin label a reference carries: the later in DISTRO_ORDER when it carries both
 * (RKE2's, as the lost-pin text always named it), the assumed one when it carries none.
 */
export function distroOfPinLabels(labels: Readonly<Record<string, string>>): KnownDistro {
  const carried = DISTRO_ORDER.filter((d) => labels[DISTRO_PROFILES[d].pinLabel] !== undefined);
  return carried[carried.length - 1] ?? ASSUMED_DISTRO;
}
