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
import { parseDistroVersion } from './detect';

export interface OpenNodeOptions {
  /** true, or the SHA256 fingerprint the user confirmed, to record an unknown host key. */
  acceptNewHostKey?: boolean | string;
  timeoutMs?: number;
}

export class NodeSession {
  private resolverCache?: TargetResolver;
  private platformCache?: Promise<Platform>;
  private infoCache?: Promise<NodeInfo> | undefined;
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
    const [cv, distro] = await Promise.all([this.containerd.version(), this.detectDistro()]);
    return { containerdVersion: cv.version, containerdRevision: cv.revision, ...distro };
  }

  private async detectDistro(): Promise<Pick<NodeInfo, 'distro' | 'distroVersion'>> {
    for (const distro of ['k3s', 'rke2'] as const) {
      // Fixed argv, no user input: PATH for non-interactive sessions may lack /usr/local/bin.
      for (const bin of [distro, `/usr/local/bin/${distro}`]) {
        try {
          const r = await this.ssh.exec([bin, '--version'], { timeoutMs: 10_000 });
          if (r.code === 0) {
            const version = parseDistroVersion(distro, r.stdout);
            if (version) return { distro, distroVersion: version };
          }
        } catch {
          // not there; try the next
        }
      }
    }
    return { distro: 'unknown', distroVersion: null };
  }

  /** The node's platform (for choosing the manifest CRI would run), from `uname -m`. */
  platform(): Promise<Platform> {
    if (!this.platformCache) {
      this.platformCache = this.ssh
        .exec(['uname', '-m'], { timeoutMs: 10_000 })
        .then((r) => platformFromUname(r.code === 0 ? r.stdout : ''))
        .catch(() => platformFromUname(''));
    }
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
