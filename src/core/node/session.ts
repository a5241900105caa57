// One live connection to a node: SSH, the tunnel to its containerd socket, and the gRPC
// client over it. Everything Holdfast does to a node goes through a NodeSession.
import type { NodeDef, NodeInfo } from '../../shared/domain';
import { ContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import { listImageRefs } from '../images/list';
import { platformFromUname, type Platform } from '../images/mediaTypes';
import { TargetResolver } from '../images/resolve';
import { connectSsh, type SshConnection } from '../ssh/connect';
import type { Tunnel } from '../ssh/tunnel';
import { PROBE_SCRIPT, parseProbe } from './detect';

export interface OpenNodeOptions {
  /** true, or the SHA256 fingerprint the user confirmed, to record an unknown host key. */
  acceptNewHostKey?: boolean | string;
  timeoutMs?: number;
}

export class NodeSession {
  private resolverCache?: TargetResolver;
  private platformCache?: Promise<Platform>;
  private infoCache?: Promise<NodeInfo> | undefined;
  private probeCache?: Promise<{ machine: string } & Pick<NodeInfo, 'distro' | 'distroVersion'>>;
  private closed = false;

  private constructor(
    readonly def: NodeDef,
    readonly ssh: SshConnection,
    private readonly tunnel: Tunnel,
    readonly containerd: ContainerdClient,
  ) {}

  static async open(def: NodeDef, opts: OpenNodeOptions = {}): Promise<NodeSession> {
    const ssh = await connectSsh({
      host: def.host,
      port: def.port,
      user: def.user,
      ...(def.identity ? { identity: def.identity } : {}),
      knownHosts: def.knownHosts!,
      ...(opts.acceptNewHostKey !== undefined ? { acceptNewHostKey: opts.acceptNewHostKey } : {}),
      ...(opts.timeoutMs !== undefined ? { readyTimeoutMs: opts.timeoutMs } : {}),
    });
    let tunnel: Tunnel;
    try {
      tunnel = await ssh.openTunnel(def.socket);
    } catch (e) {
      ssh.close();
      throw e;
    }
    const containerd = new ContainerdClient({
      target: `unix:${tunnel.localPath}`,
      namespace: def.namespace,
      describe: `${def.name} (${def.socket})`,
    });
    const session = new NodeSession(def, ssh, tunnel, containerd);
    ssh.onClose(() => void session.close());
    return session;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** containerd version through the API; k3s/RKE2 version from their binaries, if present. */
  async detect(): Promise<NodeInfo> {
    const [cv, probe] = await Promise.all([this.containerd.version(), this.probe()]);
    return { containerdVersion: cv.version, containerdRevision: cv.revision, distro: probe.distro, distroVersion: probe.distroVersion };
  }

  /**
   * One round trip for what the node runs: `uname -m`, then the first of k3s / RKE2 whose
   * binary answers `--version` (PATH of non-interactive sessions may lack /usr/local/bin).
   * A fixed script: nothing user-supplied goes into it.
   */
  private probe(): Promise<{ machine: string } & Pick<NodeInfo, 'distro' | 'distroVersion'>> {
    this.probeCache ??= this.ssh
      .exec(['sh', '-c', PROBE_SCRIPT], { timeoutMs: 15_000 })
      .then((r) => parseProbe(r.stdout))
      .catch(() => ({ machine: '', distro: 'unknown' as const, distroVersion: null }));
    return this.probeCache;
  }

  /** The node's platform (for choosing the manifest CRI would run), from `uname -m`. */
  platform(): Promise<Platform> {
    this.platformCache ??= this.probe().then((p) => platformFromUname(p.machine));
    return this.platformCache;
  }

  async resolver(): Promise<TargetResolver> {
    if (!this.resolverCache) this.resolverCache = new TargetResolver(this.containerd, await this.platform());
    return this.resolverCache;
  }

  /** Every reference as containerd has it (no fate prediction: see inspectNode). */
  async listBaseImages() {
    return listImageRefs(this.containerd, await this.resolver());
  }

  /** containerd and distro versions, detected once per session. */
  info(): Promise<NodeInfo> {
    if (!this.infoCache) {
      this.infoCache = this.detect();
      this.infoCache.catch(() => (this.infoCache = undefined));
    }
    return this.infoCache;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.containerd.close();
    await this.tunnel.close().catch(() => undefined);
    this.ssh.close();
  }
}

export function assertOpen(s: NodeSession): void {
  if (s.isClosed) throw new HoldfastError('UNREACHABLE', `the connection to ${s.def.name} was closed`, { hint: 'Reconnect and try again.' });
}
