// One live connection to a node: SSH, the tunnel to its containerd socket, and the gRPC
// client over it. Everything Holdfast does to a node goes through a NodeSession.
import type { NodeDef, NodeInfo } from '../../shared/domain/nodes';
import { createFileAccess, type FileAccess } from '../access';
import type { ContainerdClient, ContainerdWriter, GrpcContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import { listImageRefs, type BaseImageRef } from '../images/list';
import { platformFromUname, type Platform } from '../../shared/mediaTypes';
import { BlobCache, TargetResolver } from '../images/resolve';
import { connectSsh, type SshConnection, type SshTarget } from '../ssh/connect';
import type { CredentialsProvider } from '../ssh/credentials';
import type { AcceptNewHostKey } from '../ssh/hostKey';
import type { Tunnel } from '../ssh/tunnel';
import { NO_HASH_TOOLS, nodeInfoOf, parseProbe, probeArgv, type HashTools, type ProbeResult } from './detect';
import { logger } from '../log';

const log = logger('node');

/** Targets whose first blob is read ahead of the probe; more wait for it (bounded work per list). */
const PREFETCH_TARGETS = 64;

export interface OpenNodeOptions {
  /**
   * Whether to record an unknown host key (see AcceptNewHostKey): it applies to every hop of a
   * jump chain, and each hop records its key only if it is one of the fingerprints given (or a
   * person confirmed that very key), so one fingerprint per new hop accepts exactly those keys.
   */
  acceptNewHostKey?: AcceptNewHostKey;
  /** Per hop: TCP connect + handshake + authentication (paused while credentials are asked). */
  timeoutMs?: number;
  /** Asks a person for passphrases, passwords, keyboard-interactive answers (CLI: TTY; app: UI). */
  credentials?: CredentialsProvider;
  /** Finds a configured node by name: needed when the node (or a hop) has `jump`. */
  resolveNode?: (name: string) => Promise<NodeDef>;
  /** Runs once the first SSH handshake is under way (the CLI loads its service then, while the node answers). */
  whileHandshaking?: () => void;
}

/** Longest jump chain followed (hops before the node itself). */
export const MAX_JUMP_HOPS = 8;

/**
 * The hops to go through to reach def, first hop first (def itself not included). Refuses
 * cycles (a → b → a) and chains longer than MAX_JUMP_HOPS.
 */
export async function resolveJumpChain(def: NodeDef, resolveNode?: (name: string) => Promise<NodeDef>): Promise<NodeDef[]> {
  const chain: NodeDef[] = [];
  const seen = [def.name];
  let cur = def;
  while (cur.jump) {
    if (seen.includes(cur.jump)) {
      throw new HoldfastError('INVALID_INPUT', `The jump hosts of ${def.name} form a cycle: ${[...seen, cur.jump].join(' → ')}.`, {
        hint: 'Fix the jump setting of one of these nodes.',
        remedy: { action: 'node-list', purpose: 'fix-jump' },
      });
    }
    if (chain.length >= MAX_JUMP_HOPS) {
      throw new HoldfastError('INVALID_INPUT', `${def.name} is more than ${MAX_JUMP_HOPS} jump hosts away: ${seen.join(' → ')} → …`);
    }
    if (!resolveNode) {
      throw new HoldfastError('INVALID_INPUT', `${cur.name} jumps through ${cur.jump}, but no node list was given to look it up.`);
    }
    let hop: NodeDef;
    try {
      hop = await resolveNode(cur.jump);
    } catch (e) {
      throw new HoldfastError('NOT_FOUND', `${cur.name} jumps through ${cur.jump}, which is not a configured node.`, {
        hint: `Add ${cur.jump} as a node, or change ${cur.name}'s jump host.`,
        remedy: { action: 'node-add', node: cur.jump, jumpOf: cur.name },
        cause: e,
      });
    }
    seen.push(hop.name);
    chain.unshift(hop);
    cur = hop;
  }
  return chain;
}

function sshTargetFor(def: NodeDef, opts: OpenNodeOptions, acceptNew: AcceptNewHostKey | undefined): SshTarget {
  return {
    host: def.host,
    port: def.port,
    user: def.user,
    ...(def.identity ? { identity: def.identity } : {}),
    knownHosts: def.knownHosts!,
    ...(def.auth ? { auth: def.auth } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    ...(acceptNew !== undefined ? { acceptNewHostKey: acceptNew } : {}),
    ...(opts.timeoutMs !== undefined ? { readyTimeoutMs: opts.timeoutMs } : {}),
  };
}

/**
 * A refused host key names the configured node whose key it is (`access`): how to trust it is
 * worded where it is read. Not a key that changed during the session: that is never trusted.
 */
function trustFor(e: unknown, node: string): unknown {
  const refused = e instanceof HoldfastError && e.fingerprint !== undefined && (e.code === 'HOST_KEY_UNKNOWN' || (e.code === 'HOST_KEY_CHANGED' && e.hint !== undefined));
  if (refused) e.access = { action: 'trust-host-key', node, fingerprint: e.fingerprint! };
  return e;
}

/** Prefixes a hop's failure with which hop it was, keeping code, hint, remedy, fingerprints and access. */
function viaHop(e: unknown, hop: NodeDef): unknown {
  if (!(e instanceof HoldfastError)) return e;
  return trustFor(
    new HoldfastError(e.code, `Jump host ${hop.name}: ${e.message}`, {
      ...(e.hint !== undefined ? { hint: e.hint } : {}),
      ...(e.remedy !== undefined ? { remedy: e.remedy } : {}),
      ...(e.fingerprint !== undefined ? { fingerprint: e.fingerprint } : {}),
      ...(e.expectedFingerprint !== undefined ? { expectedFingerprint: e.expectedFingerprint } : {}),
      cause: e,
    }),
    hop.name,
  );
}

/**
 * SSH to def through its jump chain: each hop's host key checked against the hop's own
 * known_hosts, each next hop reached through the previous one's forwardOut channel.
 */
export async function connectNode(def: NodeDef, opts: OpenNodeOptions = {}): Promise<SshConnection> {
  const hops = await resolveJumpChain(def, opts.resolveNode);
  let via: SshConnection | undefined;
  // The caller's work runs once, during the first handshake (the first hop's, with a jump chain).
  const first = <T extends SshTarget>(target: T, isFirst: boolean): T => (isFirst && opts.whileHandshaking ? { ...target, whileHandshaking: opts.whileHandshaking } : target);
  try {
    for (const hop of hops) {
      const target = first(sshTargetFor(hop, opts, opts.acceptNewHostKey), hop === hops[0]);
      target.label = `jump host ${hop.name} (${hop.host}:${hop.port})`;
      if (via) {
        target.sock = await via.forwardOut(hop.host, hop.port);
        target.via = via;
      }
      via = await connectSsh(target).catch((e: unknown) => {
        throw viaHop(e, hop);
      });
    }
    const target = first(sshTargetFor(def, opts, opts.acceptNewHostKey), hops.length === 0);
    if (via) {
      target.sock = await via.forwardOut(def.host, def.port);
      target.via = via;
    }
    return await connectSsh(target).catch((e: unknown) => {
      throw trustFor(e, def.name);
    });
  } catch (e) {
    await via?.close().catch((err: unknown) => log.debug('jump host connection not closed after a failed hop', { err }));
    throw e;
  }
}

/** The containerd client's module, loaded on a session's first connection (not at import: `--help` needs none of it). */
const containerdModule = () => import('../containerd/client');

type Probed = Omit<ProbeResult, 'imagesDir'> & Partial<Pick<ProbeResult, 'imagesDir'>>;

/**
 * The probe round trip (see NodeSession.probe); a failure means "distro unknown", never an error.
 * `answered` runs once the node's shell ran the probe to its end (exit 0).
 */
function probeNode(ssh: SshConnection, def: NodeDef, answered?: () => void): Promise<Probed> {
  return ssh
    .exec(probeArgv(def.sudo === true), { timeoutMs: 15_000 })
    .then((r) => {
      const probed = parseProbe(r.stdout);
      if (r.code === 0) answered?.();
      log.debug('node probe answered', { node: def.name, distro: probed.distro, distroVersion: probed.distroVersion });
      return probed;
    })
    .catch((err: unknown) => (log.debug('node probe failed; distro unknown', { node: def.name, err }), { machine: '', hashTools: NO_HASH_TOOLS, distro: 'unknown' as const, distroVersion: null }));
}

/**
 * The SFTP requests core makes on a session's own channel (uploads, the disk checks); ssh2's
 * SFTPWrapper answers them. One signature each, as core calls them, so a double implements
 * exactly these (the file access layer, access/, has its own channel and needs more).
 */
export interface SessionSftp {
  open(path: string, flags: 'w' | 'r+', attrs: { mode: number }, cb: (err: Error | undefined, handle: Buffer) => void): void;
  write(handle: Buffer, buf: Buffer, offset: number, length: number, position: number, cb: (err?: Error | null) => void): void;
  close(handle: Buffer, cb: (err?: Error | null) => void): void;
  ext_openssh_fsync(handle: Buffer, cb: (err: Error | undefined) => void): void;
  stat(path: string, cb: (err: Error | undefined) => void): void;
  ext_openssh_statvfs(path: string, cb: (err: Error | undefined, st: unknown) => void): void;
  /** 'close': the channel went away (a write in flight then never answers). */
  once(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

/**
 * What core does with a session's SSH connection (commands, its SFTP channel, the OpenSSH
 * upload's login), not the tunnel or the raw client: SshConnection has it all.
 */
export interface SessionSsh extends Pick<SshConnection, 'where' | 'closed' | 'exec' | 'spawn' | 'onClose' | 'close' | 'via' | 'nativeAuth' | 'login' | 'hostKey'> {
  sftp(): Promise<SessionSftp>;
}

/**
 * One node as core sees it: what its use cases call. SshNodeSession is the real one; the UI
 * tests' fake nodes (test/doubles/node.ts) implement the same, and test/integration/
 * doubles-contract.test.ts runs the same cases against both.
 */
export interface NodeSession {
  readonly def: NodeDef;
  readonly isClosed: boolean;
  /** The images dir and other node files: SFTP as root, or `sudo -n` for a non-root user. */
  readonly files: FileAccess;
  /** Indexes, manifests and configs read this session; absent: read from containerd each time. */
  readonly blobs?: BlobCache;
  readonly containerd: ContainerdClient;
  /** Writes images into containerd (direct delivery); null where the session cannot (test doubles). */
  readonly writer: ContainerdWriter | null;
  readonly ssh: SessionSsh;
  /** The node's images dir moved with its distro's data-dir: the same connection reads the new one. */
  followImagesDir(imagesDir: string): void;
  /** containerd version through the API; k3s/RKE2 version from their binaries, if present. */
  detect(): Promise<NodeInfo>;
  /** detect(), once per session. */
  info(): Promise<NodeInfo>;
  /** The node's platform (for choosing the manifest CRI would run). */
  platform(): Promise<Platform>;
  /** The node's SHA-256 programs. */
  hashTools(): Promise<HashTools>;
  resolver(): Promise<TargetResolver>;
  /** Every reference as containerd has it (no fate prediction: see readInventory). */
  listBaseImages(): Promise<BaseImageRef[]>;
  close(): Promise<void>;
}

/** NodeSession over SSH: the containerd socket through a tunnel, files over SFTP or sudo. */
export class SshNodeSession implements NodeSession {
  private resolverCache?: TargetResolver;
  private platformCache?: Promise<Platform>;
  private infoCache?: Promise<NodeInfo> | undefined;
  private probeCache?: Promise<Probed>;
  private closed = false;

  /** The images dir and other node files: SFTP as root, or `sudo -n` for a non-root user. */
  readonly files: FileAccess;
  /** Indexes, manifests and configs read this session (content is immutable by digest). */
  readonly blobs: BlobCache;
  readonly writer: ContainerdWriter;

  private constructor(
    private nodeDef: NodeDef,
    readonly ssh: SshConnection,
    readonly tunnel: Tunnel,
    readonly containerd: GrpcContainerdClient,
    probing?: Promise<Probed>,
  ) {
    this.files = createFileAccess(ssh, { sudo: nodeDef.sudo === true, user: nodeDef.user, node: nodeDef.name });
    this.blobs = new BlobCache(containerd);
    this.writer = containerd;
    if (probing) this.probeCache = probing;
  }

  get def(): NodeDef {
    return this.nodeDef;
  }

  /**
   * The node's images dir moved with its distro's data-dir (detected on connect): the same
   * connection reads the new one. Reconnecting instead would ask for a password again.
   */
  followImagesDir(imagesDir: string): void {
    this.nodeDef = { ...this.nodeDef, imagesDir };
  }

  static async open(def: NodeDef, opts: OpenNodeOptions = {}): Promise<SshNodeSession> {
    // grpc-js, protobufjs and our definitions load while the handshake waits on the node (a
    // cold CLI would otherwise start on them only once connected).
    const ssh = await connectNode(def, {
      ...opts,
      whileHandshaking: () => {
        opts.whileHandshaking?.();
        void containerdModule().then((m) => m.prepareContainerdClient(), () => undefined);
      },
    });
    // Every session asks what the node runs (detect) and nearly every one reads the images dir:
    // the probe, the longest round trip, is under way while the tunnel opens and the service
    // definitions load, and once it answered the node starts its sftp-server. Not before: sshd
    // starts sftp-server through the login's shell too, and a shell that refuses commands
    // (nologin) prints its words where ssh2 expects SFTP packets, on which ssh2 may drop the
    // whole connection before the tunnel can say why. A refused SFTP stays with the channel for
    // the first read to report; the probe never fails (distro unknown).
    const probing = probeNode(ssh, def, () => void ssh.sftp().catch(() => undefined));
    let tunnel: Tunnel;
    let containerd: GrpcContainerdClient;
    try {
      // The probe is a session of its own: it turns sshd's TCP_NODELAY on (tunnel.ts).
      tunnel = await ssh.openTunnel(def.socket, def.sudo ? { sudo: true, user: def.user, node: def.name } : { user: def.user, node: def.name, primeNoDelay: false });
      const { GrpcContainerdClient } = await containerdModule();
      containerd = new GrpcContainerdClient({
        target: `unix:${tunnel.localPath}`,
        namespace: def.namespace,
        describe: `${def.name} (${def.socket})`,
        overSsh: true,
      });
    } catch (e) {
      // (Also when the client cannot be made, e.g. no .proto files: the connection must not outlive it.)
      await ssh.close();
      throw e;
    }
    const session = new SshNodeSession(def, ssh, tunnel, containerd, probing);
    ssh.onClose(() => void session.close());
    return session;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** containerd version through the API; k3s/RKE2 version from their binaries, if present. */
  async detect(): Promise<NodeInfo> {
    const [cv, probe] = await Promise.all([this.containerd.version(), this.probe()]);
    // The verified host key names the machine: two entries for one machine share it.
    return { ...nodeInfoOf(cv, probe), hostKey: this.ssh.hostKeyFingerprint };
  }

  /**
   * One round trip for what the node runs: `uname -m`, then the first of k3s / RKE2 whose
   * binary answers `--version` (PATH of non-interactive sessions may lack /usr/local/bin), then
   * the data-dir its config files set (detect.ts). A fixed script: nothing user-supplied goes
   * into it.
   */
  private probe(): Promise<Probed> {
    this.probeCache ??= probeNode(this.ssh, this.def);
    return this.probeCache;
  }

  /** The node's SHA-256 programs, from the same probe round trip (nothing extra is run). */
  hashTools(): Promise<HashTools> {
    return this.probe().then((p) => p.hashTools);
  }

  /** The node's platform (for choosing the manifest CRI would run), from `uname -m`. */
  platform(): Promise<Platform> {
    this.platformCache ??= this.probe().then((p) => platformFromUname(p.machine));
    return this.platformCache;
  }

  async resolver(): Promise<TargetResolver> {
    if (!this.resolverCache) this.resolverCache = new TargetResolver(this.containerd, await this.platform(), this.blobs);
    return this.resolverCache;
  }

  /** Every reference as containerd has it (no fate prediction: see readInventory). */
  async listBaseImages(): Promise<BaseImageRef[]> {
    // The list itself needs no platform (resolving targets does): it runs during the probe.
    const [records, resolver] = await Promise.all([
      this.containerd.listImages().then((r) => {
        log.debug('images listed', { node: this.def.name, references: r.length });
        // Resolving a target needs the node's platform (the probe); reading its index or
        // manifest does not: those reads start now, while the probe is still under way.
        const digests = [...new Set(r.map((i) => i.target.digest))].slice(0, PREFETCH_TARGETS);
        for (const d of digests) this.blobs.json(d).catch(() => undefined);
        return r;
      }),
      this.resolver(),
    ]);
    const refs = await listImageRefs(records, resolver);
    log.debug('image targets resolved', { node: this.def.name });
    return refs;
  }

  /** containerd and distro versions, detected once per session. */
  info(): Promise<NodeInfo> {
    if (!this.infoCache) {
      this.infoCache = this.detect();
      this.infoCache.catch((err: unknown) => (log.debug('version detection failed; tried again next time', { node: this.def.name, err }), (this.infoCache = undefined)));
    }
    return this.infoCache;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.containerd.close();
    await this.tunnel.close().catch((err: unknown) => log.debug('tunnel not closed cleanly', { node: this.def.name, err }));
    await this.ssh.close().catch((err: unknown) => log.debug('SSH connection not closed cleanly', { node: this.def.name, err }));
  }
}

/** `NodeSession.open(def)`: a session over SSH (SshNodeSession.open), for callers that name the seam. */
export const NodeSession = { open: (def: NodeDef, opts?: OpenNodeOptions): Promise<SshNodeSession> => SshNodeSession.open(def, opts) };

export function assertOpen(s: NodeSession): void {
  if (s.isClosed) throw new HoldfastError('UNREACHABLE', `the connection to ${s.def.name} was closed`, { hint: 'Reconnect and try again.' });
}
