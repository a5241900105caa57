// One simulated k3s node: a private mount namespace in which k3s's real paths exist
// (/run/k3s → <root>/run-k3s, /var/lib/rancher → <root>/rancher), a real containerd serving
// /run/k3s/containerd/containerd.sock and a real OpenSSH sshd on 127.0.0.1:<port>.
//
// Process model: a tiny "holder" (`unshare --mount --propagation private sh -c 'mount…; exec sleep'`)
// owns the namespace; containerd and sshd are started in it with `nsenter -t <holder> -m`, each in
// its own process group. So containerd and sshd can be stopped/restarted independently, and the
// namespace (and its bind mounts, which never reach the host) lives until the holder dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, readdir, readFile, readlink, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { run, sleep } from './exec.ts';
import { containerdBinaries, defaultContainerdLine, defaultLabDistro, type ContainerdBinaries, type ContainerdLine, type LabDistro } from './containerd.ts';
import { kubectlJson } from './workloads.ts';

export const K3S_SOCKET = '/run/k3s/containerd/containerd.sock';
export const K3S_IMAGES_DIR = '/var/lib/rancher/k3s/agent/images';
/** Mountpoints that must exist on the host (empty dirs; the node binds its own dirs over them). */
export const HOST_MOUNTPOINTS = ['/run/k3s', '/var/lib/rancher', '/run/sshd'] as const;
export const REQUIRED_BINARIES = ['unshare', 'nsenter', 'mount', 'sleep', 'ssh-keygen', 'ssh'] as const;
export const SSHD = '/usr/sbin/sshd';
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

export interface LabNodeHandle {
  name: string;
  host: '127.0.0.1';
  port: number;
  user: 'root';
  /** Node's host dir. */
  root: string;
  /** Host-side path of the node's containerd socket (/run/k3s/containerd/containerd.sock inside). */
  hostSocket: string;
  /** Host-side path of the node's images dir: /var/lib/rancher/<distro>/agent/images. */
  hostImagesDir: string;
  /**
   * The distro the node is shaped as ('k3s' unless the test or $HOLDFAST_LAB_DISTRO asked for
   * RKE2; see lab/containerd.ts): its images dir, and what emulateK3sStart does by default.
   */
  distro: LabDistro;
  /** Host-side path of the node's /root (its own, as on a real node: see HOLDER_SCRIPT). */
  hostRootHome: string;
  /** The containerd line the node runs ('2' unless the test asked for another; see lab/containerd.ts). */
  containerdLine: ContainerdLine;
  /** Path of the containerd binary the node runs, and of its matching ctr. */
  containerdBinary: string;
  ctrBinary: string;
  /** Pid of the node's containerd daemon now (null when stopped): a write that crashes it changes this. */
  containerdPid(): Promise<number | null>;
  /** How often containerd died without the lab stopping it (a panic): must stay 0. */
  readonly containerdCrashes: number;
  /** 'SHA256:…' as ssh-keygen -lf prints it. Updated by rotateHostKey(). */
  hostKeyFingerprint: string;
  /** '[127.0.0.1]:PORT ssh-ed25519 AAAA…'. Updated by rotateHostKey(). */
  knownHostsLine: string;
  /**
   * Runs `ctr -a hostSocket -n k8s.io ...args` (plus `--connect-timeout 2s`); rejects with a
   * CommandError whose message is ctr's stderr.
   */
  ctr(args: string[], opts?: { input?: Buffer }): Promise<string>;
  /** The version containerd's server answers (`ctr version`: 'v2.1.4', '1.7.28'…); '' when it names none. */
  containerdVersion(): Promise<string>;
  stopContainerd(): Promise<void>;
  /** Starts containerd again inside the same mount namespace (nsenter -t <holder> -m). */
  startContainerd(): Promise<void>;
  /** New host key, sshd restarted on the same port. The lab's known_hosts file is NOT rewritten. */
  rotateHostKey(): Promise<void>;
  /**
   * Gives sshd a second host key of another type (as most real hosts have: ed25519 + ECDSA +
   * RSA) and restarts it on the same port. The ed25519 key, hostKeyFingerprint and knownHostsLine
   * stay as they were; the new key's fingerprint and '[127.0.0.1]:PORT <type> AAAA…' line are
   * returned. The lab's known_hosts file is NOT rewritten.
   */
  addHostKey(type: 'ecdsa' | 'rsa'): Promise<{ fingerprint: string; knownHostsLine: string }>;
  /**
   * Puts a stand-in `k3s` or `rke2` in the node's /usr/local/bin whose `--version` prints what
   * the real binary prints for `version`; null removes it (distro version unknown) — except the
   * `rke2` of an RKE2-shaped node, which stays, printing no release (an RKE2 node always has its
   * binary; Holdfast then knows the distro but not its release). kubectl too
   * (`k3s kubectl …`; RKE2: /var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml):
   * with `workloads` the node is a server whose `kubectl get … -o json` prints them (a value is
   * printed as kubectl prints JSON, a string verbatim; see lab/workloads.ts) to root only, and a
   * user who cannot read the kubeconfig gets k3s's permission error; without, an agent (no
   * kubeconfig: kubectl cannot reach an API server). With `kubectl` (k3s only), the path of a real
   * kubectl copied to REAL_KUBECTL: with no kubeconfig `k3s kubectl` runs it (in-cluster config).
   * See distroScripts below.
   */
  installDistroBinary(distro: 'k3s' | 'rke2', version: string | null, opts?: { workloads?: unknown; kubectl?: string }): Promise<void>;
  /**
   * Mounts a tmpfs of `bytes` over the node's images dir inside the node's mount
   * namespace (a "disk too small" node; statvfs and df over SSH report its size). Only the node
   * sees it: afterwards `hostImagesDir` no longer reflects the node's images dir (read it over
   * SSH instead), and files written there before are hidden underneath. Gone with the node.
   */
  limitImagesDir(bytes: number): Promise<void>;
  /**
   * Rewrites the node's sshd_config with these settings and restarts sshd on the same port and
   * host key. Password or keyboard-interactive authentication turn on `UsePAM yes` (OpenSSH on
   * Linux has no keyboard-interactive device without PAM) with a lab PAM stack (pam_unix for
   * auth/account, pam_permit for sessions) bind-mounted over /etc/pam.d/sshd inside the node
   * only, so the host's PAM configuration (pam_loginuid, pam_systemd…) plays no part.
   */
  configureSshd(opts: SshdOptions): Promise<void>;
  /**
   * Makes `path` (e.g. /usr/bin/socat) unusable inside the node's mount namespace: a script that
   * exits 127 is bind-mounted over it, so the binary is "not there" for every new process.
   */
  hideBinary(path: string): Promise<void>;
  /** chmod 0700 root:root on the node's images dir (k3s's own dirs are root-only on hardened hosts). */
  restrictImagesDir(): Promise<void>;
  /** `stat -c '%A %U %G'` of a path inside the node (e.g. the socket), as root. */
  statInNode(path: string): Promise<string>;
  /** Runs argv inside the node's mount namespace as root; resolves stdout. */
  execInNode(argv: string[]): Promise<string>;
  /** The sshd log (connections, authentications) so far. */
  sshdLog(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * What k3s emulation, CRI and Images calls use of a node: a running node, or one of a lab started
 * by another process, found from its lab dir (lab/attach.ts).
 */
export type LabNodeView = Pick<LabNodeHandle, 'name' | 'root' | 'hostSocket' | 'hostImagesDir' | 'distro' | 'containerdLine' | 'ctr'>;

export interface SshdOptions {
  passwordAuthentication?: boolean;
  kbdInteractiveAuthentication?: boolean;
  /** LogLevel (default INFO); VERBOSE also logs the key used and forwarding requests. */
  logLevel?: 'INFO' | 'VERBOSE' | 'DEBUG1';
}

export interface NodeStartOptions {
  name: string;
  /** Node's host dir (keep it short: unix socket paths must stay < 100 chars). */
  root: string;
  /** Lab-wide authorized_keys file. */
  authorizedKeysFile: string;
  /** containerd line; default $HOLDFAST_LAB_CONTAINERD, else '2'. */
  containerd?: ContainerdLine;
  /** The distro the node is shaped as; default $HOLDFAST_LAB_DISTRO, else k3s. */
  distro?: LabDistro;
}

/** In-node path of a distro's default images dir. */
export const imagesDirOf = (distro: LabDistro): string => `/var/lib/rancher/${distro}/agent/images`;

/** Where a lab node records its distro, so a lab attached from another process knows it (attach.ts). */
export const DISTRO_MARKER = 'distro';

// /usr/local/bin is the node's own too, so a test can give it a `k3s` or `rke2` binary
// (installDistroBinary) whose `--version` Holdfast detects, as on a real node. So is /root, with
// Debian's default dotfiles: sshd runs every command through root's shell, and bash sources
// ~/.bashrc for commands over SSH, so the lab host's own (here one running `pyenv init`, about
// 150 ms of CPU per command) would otherwise run on every lab node for every command Holdfast
// sends, and load the shared cores as no real node's defaults do.
const HOLDER_SCRIPT =
  'mount --bind "$1/run-k3s" /run/k3s && mount --bind "$1/rancher" /var/lib/rancher && mount --bind "$1/bin" /usr/local/bin && mount --bind "$1/home" /root && exec sleep infinity';

/**
 * Where k3s's kubectl sits in the data dir k3s unpacks (`data/current/bin/kubectl`): with
 * `installDistroBinary(…, { kubectl })` a real kubectl binary, which the stand-in `k3s kubectl`
 * runs when no kubeconfig exists, as k3s does (in a pod: its in-cluster configuration).
 */
export const REAL_KUBECTL = '/var/lib/rancher/k3s/data/current/bin/kubectl';

/** The fixture a server node's stand-in kubectl prints: /var/lib/rancher/<distro>/server/<this>. */
export const KUBECTL_FIXTURE_NAME = 'lab-kubectl.json';

/**
 * The stand-in kubectl, as fixed /bin/sh text (arguments are only compared, never run or
 * printed). Messages are the real ones:
 * - no kubeconfig (an agent; RKE2's kubectl without --kubeconfig): kubectl falls back to
 *   localhost:8080 — client-go's discovery logs the refused connection five times, then kubectl
 *   gives up (recent kubectl output quoted in k3s-io/k3s#3862 and #6213 — agents have no admin
 *   kubeconfig — and, with the structured "Unhandled Error" lines of kubectl ≥ 1.31, in
 *   JamesTurland/JimsGarage#162 and opea-project/Enterprise-Inference#29);
 * - k3s's own kubectl, /etc/rancher/k3s/k3s.yaml present but unreadable: k3s logs a warning
 *   through logrus (text form, stderr not a terminal over SSH) and kubectl fails to load it
 *   (pkg/kubectl/main.go checkReadConfigPermissions; output in biersoeckli/QuickStack#49 and,
 *   non-TTY, ChrisThePCGeek/k3s-ansible-traefik-rancher#2);
 * - an explicit --kubeconfig that does not exist: `error: stat <path>: …` (clientcmd's
 *   ExplicitPath check; seen in kubernetes-sigs/cluster-api-provider-openstack#377).
 */
function kubectlScript(distro: 'k3s' | 'rke2'): string {
  const kc = distro === 'k3s' ? '/etc/rancher/k3s/k3s.yaml' : '/etc/rancher/rke2/rke2.yaml';
  const fixture = `/var/lib/rancher/${distro}/server/${KUBECTL_FIXTURE_NAME}`;
  // k3s's wrapper uses its kubeconfig when none is named and it exists (a server); RKE2's kubectl is plain kubectl.
  const k3sDefault =
    distro === 'k3s'
      ? String.raw`
if [ -z "$kc" ] && [ -e "$fixture" ]; then
  kc=${kc}
  if [ ! -r "$fixture" ]; then
    ts=$(date +%Y-%m-%dT%H:%M:%S%:z | sed 's/+00:00$/Z/')
    printf 'time="%s" level=warning msg="Unable to read ${kc}, please start server with --write-kubeconfig-mode or --write-kubeconfig-group to modify kube config permissions"\n' "$ts" >&2
  fi
fi`
      : '';
  return String.raw`fixture=${fixture}
refused() {
  msg='"Unhandled Error" err="couldn'\''t get current server API group list: Get \"http://localhost:8080/api?timeout=32s\": dial tcp 127.0.0.1:8080: connect: connection refused"'
  for _ in 1 2 3 4 5; do
    printf 'E%s %7d memcache.go:265] %s\n' "$(date '+%m%d %H:%M:%S.%6N')" "$$" "$msg" >&2
  done
  echo 'The connection to the server localhost:8080 was refused - did you specify the right host or port?' >&2
  exit 1
}
kc=
kcflag=
get=
json=
prev=
for a in "$@"; do
  if [ -n "$prev" ]; then
    case $prev in
      -o|--output) [ "$a" = json ] && json=1 ;;
      --kubeconfig) kc=$a; kcflag=1 ;;
    esac
    prev=
    continue
  fi
  case $a in
    get) get=1 ;;
    -o|--output|--kubeconfig) prev=$a ;;
    -ojson|-o=json|--output=json) json=1 ;;
    --kubeconfig=*) kc=$(printf '%s\n' "$a" | sed 's/^--kubeconfig=//'); kcflag=1 ;;
  esac
done
[ -n "$kc" ] || kc=$KUBECONFIG${k3sDefault}${distro === 'k3s' ? String.raw`
# No kubeconfig: k3s runs plain kubectl, which takes its in-cluster configuration when it can (a pod).
if [ -z "$kc" ] && [ -x ${REAL_KUBECTL} ]; then exec ${REAL_KUBECTL} "$@"; fi` : ''}
[ -n "$kc" ] || refused
if [ "$kc" != ${kc} ]; then
  echo 'lab: this stand-in kubectl knows only the kubeconfig ${kc}' >&2
  exit 1
fi
if [ ! -e "$fixture" ]; then
  # an agent: no kubeconfig; a missing KUBECONFIG file is skipped, a missing --kubeconfig is an error
  [ -n "$kcflag" ] || refused
  echo 'error: stat ${kc}: no such file or directory' >&2
  exit 1
fi
if [ ! -r "$fixture" ]; then
  echo 'error: error loading config file "${kc}": open ${kc}: permission denied' >&2
  exit 1
fi
if [ -z "$get" ] || [ -z "$json" ]; then
  echo 'lab: this stand-in kubectl answers only: get ... -o json' >&2
  exit 1
fi
exec cat "$fixture"
`;
}

/** Fixed stand-in scripts for a distro release (`version` is validated by the caller). */
function distroScripts(distro: 'k3s' | 'rke2', version: string | null): { binary: string; kubectl?: string } {
  // `--version` output recorded from the real binaries (commit hash illustrative); with no
  // release (an RKE2-shaped node's default), a first line that names none.
  const first = version === null ? `${distro} version (lab stand-in: no release set)` : `${distro} version ${version} (0123abcd)`;
  const head = `#!/bin/sh\n# Holdfast lab stand-in for ${distro} (lab/node.ts installDistroBinary).\nif [ "$1" = --version ]; then\ncat <<'EOF'\n${first}\ngo version go1.23.6\nEOF\nexit 0\nfi\n`;
  if (distro === 'k3s') return { binary: `${head}[ "$1" = kubectl ] || exit 1\nshift\n${kubectlScript('k3s')}` };
  // RKE2 has no kubectl subcommand: its kubectl is /var/lib/rancher/rke2/bin/kubectl, on agents too.
  return { binary: `${head}exit 1\n`, kubectl: `#!/bin/sh\n# Holdfast lab stand-in for RKE2's kubectl (lab/node.ts installDistroBinary).\n${kubectlScript('rke2')}` };
}

export async function ensureHostMountpoints(): Promise<void> {
  for (const d of HOST_MOUNTPOINTS) await mkdir(d, { recursive: true });
}

function containerdConfig(root: string): string {
  const q = (s: string): string => JSON.stringify(s); // TOML basic strings accept JSON escapes for our paths
  return [
    // 2.x migrates a version 2 config at start, so one file serves every line.
    'version = 2',
    `root = ${q(join(root, 'containerd', 'root'))}`,
    `state = ${q(join(root, 'containerd', 'state'))}`,
    // The CRI plugin stays ON, as on k3s: kubelet sees images (and their pinned state) through
    // it, and the tests ask it the same way. Disabled: snapshotters that cannot work here, and
    // NRI (2.x enables it with one host-wide socket, /var/run/nri/nri.sock, which the nodes
    // would fight over).
    'disabled_plugins = [',
    '  "io.containerd.snapshotter.v1.aufs",',
    '  "io.containerd.snapshotter.v1.btrfs",',
    '  "io.containerd.snapshotter.v1.zfs",',
    '  "io.containerd.snapshotter.v1.devmapper",',
    '  "io.containerd.nri.v1.nri",',
    ']',
    '',
    '[grpc]',
    `  address = ${q(K3S_SOCKET)}`,
    '',
    '[ttrpc]',
    // the default /run/containerd/containerd.sock.ttrpc would collide between nodes
    `  address = ${q(K3S_SOCKET + '.ttrpc')}`,
    '',
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${q(join(root, 'opt'))}`,
    '',
    // CRI's own dirs default to /etc/cni/net.d and /opt/cni/bin on the host: keep them per node.
    '[plugins."io.containerd.grpc.v1.cri".cni]',
    `  bin_dir = ${q(join(root, 'cni', 'bin'))}`,
    `  conf_dir = ${q(join(root, 'cni', 'net.d'))}`,
    '',
  ].join('\n');
}

export function sshdConfig(o: { port: number; hostKey: string; pidFile: string; authorizedKeysFile: string; extra?: SshdOptions; moreHostKeys?: string[] }): string {
  const x = o.extra ?? {};
  const pam = Boolean(x.passwordAuthentication || x.kbdInteractiveAuthentication);
  return [
    `Port ${o.port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${o.hostKey}`,
    ...(o.moreHostKeys ?? []).map((k) => `HostKey ${k}`),
    `PidFile ${o.pidFile}`,
    `AuthorizedKeysFile ${o.authorizedKeysFile}`,
    'StrictModes no',
    `UsePAM ${pam ? 'yes' : 'no'}`,
    'PermitRootLogin prohibit-password',
    'PubkeyAuthentication yes',
    `PasswordAuthentication ${x.passwordAuthentication ? 'yes' : 'no'}`,
    `KbdInteractiveAuthentication ${x.kbdInteractiveAuthentication ? 'yes' : 'no'}`,
    `LogLevel ${x.logLevel ?? 'INFO'}`,
    'AllowStreamLocalForwarding yes',
    'AllowTcpForwarding yes',
    'PrintMotd no',
    'MaxStartups 100',
    'MaxSessions 100',
    `Subsystem sftp ${SFTP_SERVER}`,
    '',
  ].join('\n');
}

// The node's own PAM stack for sshd (bind-mounted over /etc/pam.d/sshd inside the node only):
// password checks against /etc/shadow, nothing that needs audit or systemd.
const LAB_PAM_SSHD = [
  'auth     required pam_unix.so',
  'account  required pam_unix.so',
  'password required pam_deny.so',
  'session  required pam_permit.so',
  '',
].join('\n');

/** A free TCP port on 127.0.0.1 (may race; callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves true once something on host:port accepts TCP and sends an SSH banner. */
export function sshBanner(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      clearTimeout(t);
      sock.destroy();
      resolve(ok);
    };
    const t = setTimeout(() => done(false), timeoutMs);
    sock.once('data', (d: Buffer) => done(d.toString('latin1').startsWith('SSH-')));
    sock.once('error', () => done(false));
    sock.once('close', () => done(false));
  });
}

export function spawnGroup(argv: string[], logFile: string): ChildProcess {
  const [cmd, ...args] = argv;
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(cmd!, args, { detached: true, stdio: ['ignore', fd, fd] });
    child.on('error', () => {
      /* reported through exit/wait */
    });
    return child;
  } finally {
    closeSync(fd);
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, sig);
  } catch {
    /* already gone */
  }
}

/** SIGTERM the process group, SIGKILL after a grace period. */
export async function stopGroup(child: ChildProcess | undefined, graceMs = 3000): Promise<void> {
  if (!child || child.pid === undefined) return;
  if (!exited(child)) {
    killGroup(child.pid, 'SIGTERM');
    if (!(await waitExit(child, graceMs))) {
      killGroup(child.pid, 'SIGKILL');
      await waitExit(child, graceMs);
    }
  }
  killGroup(child.pid, 'SIGKILL'); // stragglers left in the group
}

async function mntNs(pid: number): Promise<string | undefined> {
  try {
    return await readlink(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Every process whose mount namespace is `ns` (sshd session children, sftp-server, shells…). */
async function pidsInNs(ns: string): Promise<number[]> {
  const out: number[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if ((await mntNs(pid)) === ns) out.push(pid);
  }
  return out;
}

function tail(text: string, lines = 15): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

async function readTail(file: string, lines = 15): Promise<string> {
  try {
    return tail(await readFile(file, 'utf8'), lines);
  } catch {
    return '';
  }
}

// Safety net: if the process exits without lab.stop() (a crashed test worker), SIGKILL the process
// groups of every node still up, so no containerd/sshd outlives its owner.
const liveNodes = new Set<LabNode>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const n of liveNodes) n.killNow();
  });
}

export class LabNode implements LabNodeHandle {
  readonly host = '127.0.0.1' as const;
  readonly user = 'root' as const;
  port = 0;
  hostKeyFingerprint = '';
  knownHostsLine = '';
  readonly name: string;
  readonly root: string;
  readonly hostSocket: string;
  readonly hostImagesDir: string;
  readonly distro: LabDistro;
  readonly hostRootHome: string;
  readonly containerdLine: ContainerdLine;
  readonly containerdBinary: string;
  readonly ctrBinary: string;
  containerdCrashes = 0;

  private holder: ChildProcess | undefined;
  private ns: string | undefined;
  private containerd: ChildProcess | undefined;
  private sshd: ChildProcess | undefined;
  private stopped = false;
  private sshdExtra: SshdOptions = {};
  private pamMounted = false;
  /** Host keys besides the ed25519 one (addHostKey). */
  private moreHostKeys: string[] = [];

  private constructor(private readonly opts: NodeStartOptions) {
    this.name = opts.name;
    this.root = opts.root;
    this.hostSocket = join(opts.root, 'run-k3s', 'containerd', 'containerd.sock');
    this.distro = opts.distro ?? defaultLabDistro();
    this.hostImagesDir = join(opts.root, 'rancher', this.distro, 'agent', 'images');
    this.hostRootHome = join(opts.root, 'home');
    const bins: ContainerdBinaries = containerdBinaries(opts.containerd ?? defaultContainerdLine());
    this.containerdLine = bins.line;
    this.containerdBinary = bins.containerd;
    this.ctrBinary = bins.ctr;
    if (Buffer.byteLength(this.hostSocket) >= 100) {
      throw new Error(`lab node socket path too long (${this.hostSocket.length} chars): use a shorter lab dir`);
    }
  }

  private get p() {
    const r = this.root;
    return {
      containerdToml: join(r, 'containerd.toml'),
      containerdLog: join(r, 'containerd.log'),
      sshdConfig: join(r, 'sshd_config'),
      sshdLog: join(r, 'sshd.log'),
      sshdPid: join(r, 'sshd.pid'),
      hostKey: join(r, 'ssh_host_ed25519_key'),
      holderLog: join(r, 'holder.log'),
      pamSshd: join(r, 'pam-sshd'),
    };
  }

  static async start(opts: NodeStartOptions): Promise<LabNode> {
    const node = new LabNode(opts);
    installExitHook();
    liveNodes.add(node);
    try {
      await node.init();
    } catch (e) {
      await node.stop().catch(() => undefined);
      throw e;
    }
    return node;
  }

  private async init(): Promise<void> {
    const r = this.root;
    for (const d of ['run-k3s/containerd', `rancher/${this.distro}/agent/images`, 'containerd/root', 'containerd/state', 'opt', 'tmp', 'bin', 'cni/bin', 'cni/net.d', 'home']) {
      await mkdir(join(r, d), { recursive: true });
    }
    await cp('/etc/skel', join(r, 'home'), { recursive: true }).catch(() => undefined); // none: an empty home
    await chmod(join(r, 'home'), 0o700);
    await writeFile(join(r, DISTRO_MARKER), `${this.distro}\n`);
    // An RKE2 node has its binary (and kubectl) from the start: it is how Holdfast tells RKE2.
    if (this.distro === 'rke2') await this.installDistroBinary('rke2', null);
    await writeFile(this.p.containerdToml, containerdConfig(r));
    await ensureHostMountpoints();
    await Promise.all([this.startHolder(), this.generateHostKey()]);
    await Promise.all([this.startContainerd(), this.startSshd()]);
  }

  private async startHolder(): Promise<void> {
    this.holder = spawnGroup(
      ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', HOLDER_SCRIPT, 'sh', this.root],
      this.p.holderLog,
    );
    const pid = this.holder.pid;
    if (pid === undefined) throw new Error(`${this.name}: could not spawn unshare`);
    const hostNs = await mntNs(process.pid);
    // Ready once the holder has exec'd `sleep` in a new namespace with the binds in place.
    for (let i = 0; i < 200; i++) {
      if (exited(this.holder)) {
        throw new Error(`${this.name}: mount namespace holder exited: ${await readTail(this.p.holderLog)}`);
      }
      const ns = await mntNs(pid);
      if (ns && ns !== hostNs) {
        const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
        if (comm === 'sleep') {
          this.ns = ns;
          return;
        }
      }
      await sleep(10);
    }
    throw new Error(`${this.name}: mount namespace holder did not come up`);
  }

  private nsenter(argv: string[]): string[] {
    return ['nsenter', '-t', String(this.holder!.pid), '-m', '--', ...argv];
  }

  async ctr(args: string[], opts: { input?: Buffer } = {}): Promise<string> {
    // ctr's default dial waits 10 s for an absent socket; fail fast when containerd is stopped.
    // Callers parse stdout only; 2.2+ warn about cgroup v1 on stderr at every call (docs/k3s-facts.md,
    // "Which containerd k3s ships"), which would open every CommandError's message: silenced.
    return run([this.ctrBinary, '--connect-timeout', '2s', '-a', this.hostSocket, '-n', 'k8s.io', ...args], {
      input: opts.input,
      env: { ...process.env, CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS: 'true' },
    });
  }

  async containerdVersion(): Promise<string> {
    return (await this.ctr(['version'])).match(/Server:[\s\S]*?Version:\s+(\S+)/)?.[1] ?? '';
  }

  async startContainerd(): Promise<void> {
    if (this.containerd && !exited(this.containerd)) return;
    await rm(this.hostSocket, { force: true });
    this.containerd = spawnGroup(this.nsenter([this.containerdBinary, '--config', this.p.containerdToml]), this.p.containerdLog);
    const child = this.containerd;
    // A daemon that dies while the lab did not stop it has crashed (e.g. a panic on a request).
    child.once('exit', () => {
      if (this.containerd === child && !this.stopped) this.containerdCrashes++;
    });
    const deadline = Date.now() + 15000;
    while (Date.now() < deadline) {
      if (exited(child)) throw new Error(`${this.name}: containerd exited: ${await readTail(this.p.containerdLog)}`);
      try {
        await run([this.ctrBinary, '--connect-timeout', '1s', '-a', this.hostSocket, 'version'], { timeoutMs: 3000 });
        return;
      } catch {
        await sleep(25);
      }
    }
    throw new Error(`${this.name}: containerd socket did not answer: ${await readTail(this.p.containerdLog)}`);
  }

  async stopContainerd(): Promise<void> {
    const child = this.containerd;
    this.containerd = undefined; // stopped on purpose: not a crash
    await stopGroup(child);
  }

  async containerdPid(): Promise<number | null> {
    // nsenter execs containerd, so the spawned pid is the daemon's own.
    const child = this.containerd;
    if (!child || exited(child) || child.pid === undefined) return null;
    return child.pid;
  }

  private async generateHostKey(): Promise<void> {
    await rm(this.p.hostKey, { force: true });
    await rm(this.p.hostKey + '.pub', { force: true });
    await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `holdfast-lab-${this.name}`, '-f', this.p.hostKey]);
    const fp = await run(['ssh-keygen', '-l', '-E', 'sha256', '-f', this.p.hostKey + '.pub']);
    const fingerprint = fp.split(/\s+/)[1];
    if (!fingerprint?.startsWith('SHA256:')) throw new Error(`${this.name}: unexpected ssh-keygen -l output: ${fp}`);
    this.hostKeyFingerprint = fingerprint;
  }

  private async hostPublicKey(): Promise<string> {
    const [type, blob] = (await readFile(this.p.hostKey + '.pub', 'utf8')).trim().split(/\s+/);
    return `${type} ${blob}`;
  }

  private async startSshd(fixedPort?: number): Promise<void> {
    let lastErr = '';
    for (let attempt = 0; attempt < (fixedPort ? 1 : 5); attempt++) {
      const port = fixedPort ?? (await freePort());
      await writeFile(
        this.p.sshdConfig,
        sshdConfig({
          port,
          hostKey: this.p.hostKey,
          pidFile: this.p.sshdPid,
          authorizedKeysFile: this.opts.authorizedKeysFile,
          extra: this.sshdExtra,
          moreHostKeys: this.moreHostKeys,
        }),
      );
      const child = spawnGroup(this.nsenter([SSHD, '-D', '-f', this.p.sshdConfig, '-E', this.p.sshdLog]), this.p.sshdLog);
      this.sshd = child;
      const deadline = Date.now() + 10000;
      while (Date.now() < deadline && !exited(child)) {
        if (await sshBanner(port, 500)) {
          this.port = port;
          this.knownHostsLine = `[127.0.0.1]:${port} ${await this.hostPublicKey()}`;
          return;
        }
        await sleep(20);
      }
      lastErr = await readTail(this.p.sshdLog, 5);
      await stopGroup(child);
    }
    throw new Error(`${this.name}: sshd did not start: ${lastErr}`);
  }

  /**
   * Stops sshd and starts it again on the same port (its config re-read); `meanwhile` runs while
   * it is down (e.g. a new host key). SO_REUSEADDR lets sshd bind the same port again at once.
   */
  private async restartSshd(meanwhile?: () => Promise<void>): Promise<void> {
    const port = this.port;
    await stopGroup(this.sshd);
    await meanwhile?.();
    let err: unknown;
    for (let i = 0; i < 20; i++) {
      try {
        await this.startSshd(port);
        return;
      } catch (e) {
        err = e;
        await sleep(100);
      }
    }
    throw err;
  }

  async configureSshd(opts: SshdOptions): Promise<void> {
    this.sshdExtra = { ...opts };
    if ((opts.passwordAuthentication || opts.kbdInteractiveAuthentication) && !this.pamMounted) {
      await writeFile(this.p.pamSshd, LAB_PAM_SSHD, { mode: 0o644 });
      await run(this.nsenter(['mount', '--bind', this.p.pamSshd, '/etc/pam.d/sshd']));
      this.pamMounted = true;
    }
    await this.restartSshd();
  }

  async hideBinary(path: string): Promise<void> {
    if (!/^\/[A-Za-z0-9_./+-]+$/.test(path)) throw new Error(`hideBinary: unexpected path ${path}`);
    const stub = join(this.root, `hidden-${path.replace(/\//g, '_')}`);
    await writeFile(stub, `#!/bin/sh\necho "${path}: hidden by the lab" >&2\nexit 127\n`, { mode: 0o755 });
    await run(this.nsenter(['mount', '--bind', stub, path]));
  }

  async restrictImagesDir(): Promise<void> {
    await run(this.nsenter(['chown', 'root:root', imagesDirOf(this.distro)]));
    await run(this.nsenter(['chmod', '0700', imagesDirOf(this.distro)]));
  }

  async statInNode(path: string): Promise<string> {
    return (await run(this.nsenter(['stat', '-c', '%A %U %G', '--', path]))).trim();
  }

  async execInNode(argv: string[]): Promise<string> {
    return run(this.nsenter(argv));
  }

  async sshdLog(): Promise<string> {
    return readFile(this.p.sshdLog, 'utf8').catch(() => '');
  }

  async rotateHostKey(): Promise<void> {
    await this.restartSshd(() => this.generateHostKey());
  }

  async addHostKey(type: 'ecdsa' | 'rsa'): Promise<{ fingerprint: string; knownHostsLine: string }> {
    const key = join(this.root, `ssh_host_${type}_key`);
    await rm(key, { force: true });
    await rm(key + '.pub', { force: true });
    await run(['ssh-keygen', '-q', '-t', type, ...(type === 'rsa' ? ['-b', '3072'] : []), '-N', '', '-C', `holdfast-lab-${this.name}-${type}`, '-f', key]);
    const fp = (await run(['ssh-keygen', '-l', '-E', 'sha256', '-f', key + '.pub'])).split(/\s+/)[1];
    if (!fp?.startsWith('SHA256:')) throw new Error(`${this.name}: unexpected ssh-keygen -l output for ${key}.pub`);
    if (!this.moreHostKeys.includes(key)) this.moreHostKeys.push(key);
    await this.restartSshd();
    const [keyType, blob] = (await readFile(key + '.pub', 'utf8')).trim().split(/\s+/);
    return { fingerprint: fp, knownHostsLine: `[127.0.0.1]:${this.port} ${keyType} ${blob}` };
  }

  async installDistroBinary(distro: 'k3s' | 'rke2', version: string | null, opts: { workloads?: unknown; kubectl?: string } = {}): Promise<void> {
    const file = join(this.root, 'bin', distro);
    const realKubectl = join(this.root, 'rancher', REAL_KUBECTL.slice('/var/lib/rancher/'.length));
    await rm(realKubectl, { force: true });
    if (opts.kubectl !== undefined && version !== null && distro === 'k3s') {
      await mkdir(dirname(realKubectl), { recursive: true, mode: 0o755 });
      await copyFile(opts.kubectl, realKubectl);
      await chmod(realKubectl, 0o755);
    }
    const serverDir = join(this.root, 'rancher', distro, 'server');
    const fixture = join(serverDir, KUBECTL_FIXTURE_NAME);
    const rke2Kubectl = join(this.root, 'rancher', 'rke2', 'bin', 'kubectl');
    if (version !== null && !/^v\d+\.\d+\.\d+\+(k3s|rke2r)\d+$/.test(version)) throw new Error(`installDistroBinary: unexpected version ${version}`);
    await rm(fixture, { force: true });
    // an agent has no server dir at all
    await rmdir(serverDir).catch(() => undefined);
    const keepReleaseless = version === null && distro === 'rke2' && this.distro === 'rke2';
    if (version === null && !keepReleaseless) {
      await rm(file, { force: true });
      if (distro === 'rke2') await rm(rke2Kubectl, { force: true });
      return;
    }
    const scripts = distroScripts(distro, version);
    await writeFile(file, scripts.binary, { mode: 0o755 });
    await chmod(file, 0o755);
    if (scripts.kubectl) {
      await mkdir(dirname(rke2Kubectl), { recursive: true, mode: 0o755 });
      await writeFile(rke2Kubectl, scripts.kubectl, { mode: 0o755 });
      await chmod(rke2Kubectl, 0o755);
    }
    if (opts.workloads === undefined) return;
    const text = typeof opts.workloads === 'string' ? opts.workloads : kubectlJson(opts.workloads);
    // 0755 so a user's kubectl sees the kubeconfig exists (as /etc/rancher/k3s is), 0600 file so
    // only root reads it (as k3s.yaml is by default).
    await mkdir(serverDir, { recursive: true, mode: 0o755 });
    await chmod(serverDir, 0o755);
    const tmp = `${fixture}.tmp`;
    await writeFile(tmp, text, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, fixture);
  }

  async limitImagesDir(bytes: number): Promise<void> {
    if (!Number.isInteger(bytes) || bytes <= 0) throw new Error(`limitImagesDir: bad size ${bytes}`);
    await run(this.nsenter(['mount', '-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', imagesDirOf(this.distro)]));
  }

  /** Synchronous last resort (process exit): SIGKILL our process groups. */
  killNow(): void {
    for (const c of [this.sshd, this.containerd, this.holder]) killGroup(c?.pid, 'SIGKILL');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    liveNodes.delete(this);
    await stopGroup(this.sshd);
    await stopGroup(this.containerd);
    // Anything else still in the namespace: SSH sessions (they setsid away from sshd's group),
    // sftp-server, shells started by tests, containerd started by hand through nsenter…
    if (this.ns) {
      const holderPid = this.holder?.pid;
      for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
        const pids = (await pidsInNs(this.ns)).filter((p) => p !== holderPid);
        if (pids.length === 0) break;
        for (const p of pids) {
          try {
            process.kill(p, sig);
          } catch {
            /* gone */
          }
        }
        for (let i = 0; i < 50 && (await pidsInNs(this.ns)).some((p) => p !== holderPid); i++) await sleep(20);
      }
    }
    await stopGroup(this.holder, 1000);
  }
}
