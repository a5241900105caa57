// A NodeSession on this machine itself (`--local`): Holdfast runs on the node, as root, and reads
// containerd's socket and the images dir directly. The same core as over SSH: the fixed argv the
// use cases run (the probe, kubelet's settings, the needs script, df) is started here with
// spawn(2) — argv, never a shell string — the files are this file system (access/local.ts), and
// containerd is its own socket, no tunnel.
import { spawn as spawnProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { constants as fsConstants, promises as fs, close as fsClose, fsync, open as fsOpen, stat as fsStat, statfs, write as fsWrite } from 'node:fs';
import os from 'node:os';
import { distroProfile } from '../../shared/distro';
import { NODE_DEFAULTS, type NodeDef, type NodeInfo } from '../../shared/domain/nodes';
import { platformFromUname, type Platform } from '../../shared/mediaTypes';
import { LocalFileAccess } from '../access/local';
import type { FileAccess } from '../access';
import { adoptImagesDir } from '../config/nodes';
import type { GrpcContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import { listImageRefs, type BaseImageRef } from '../images/list';
import { BlobCache, TargetResolver } from '../images/resolve';
import { formatLimit, limit, limitError } from '../limits';
import { logger } from '../log';
import type { ExecOptions, ExecResult } from '../ssh/connect';
import { NO_HASH_TOOLS, nodeInfoOf, parseProbe, probeArgv, type HashTools, type ProbeResult } from './detect';
import type { NodeSession, SessionSftp, SessionSsh } from './session';

const log = logger('node');

/** What `--local` may set; everything else is this machine's (hostname, the user running Holdfast). */
export interface LocalNodeOptions {
  /** Default: this machine's hostname (what a node's kubelet calls itself). */
  name?: string;
  /** containerd's socket; default the distro profile's (the same for k3s and RKE2). */
  socket?: string;
  /** The images dir; default: detected from the distro's config files, as for a remote node. */
  imagesDir?: string;
  /** Default k8s.io (CRI's namespace). */
  namespace?: string;
}

/** This machine as a node: the distro profile's paths unless a flag names others. */
export function localNodeDef(o: LocalNodeOptions = {}): NodeDef {
  const profile = distroProfile('unknown');
  const def: NodeDef = {
    name: o.name ?? os.hostname(),
    host: 'localhost',
    port: NODE_DEFAULTS.port,
    user: os.userInfo().username,
    socket: o.socket ?? profile.socket,
    imagesDir: o.imagesDir ?? `${profile.dataDirDefault}/agent/images`,
    namespace: o.namespace ?? NODE_DEFAULTS.namespace,
  };
  // An images dir given on the command line is kept; otherwise the probe's detection is followed.
  if (o.imagesDir) def.imagesDirSource = 'explicit';
  return def;
}

/** Runs argv on this machine: no shell, stdout/stderr bounded as over SSH, killed at the deadline. */
export function execLocal(argv: string[], opts: ExecOptions = {}, where = 'this machine'): Promise<ExecResult> {
  const [program, ...args] = argv;
  if (!program) return Promise.reject(new HoldfastError('INTERNAL', 'an empty command line'));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const outputLimit = opts.outputLimit ?? 'remote.commandOutputBytes';
  const cap = limit(outputLimit);
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawnProcess(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    const seen = { stdout: 0, stderr: 0 };
    let failed = false;
    const fail = (e: HoldfastError) => {
      if (failed) return;
      failed = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    const timer =
      timeoutMs > 0
        ? setTimeout(() => fail(new HoldfastError('TIMEOUT', `${program} did not finish within ${Math.round(timeoutMs / 1000)} s on ${where}.`, { hint: 'It was killed; retry, or allow it more time.' })), timeoutMs)
        : undefined;
    const buffer = (into: Buffer[], which: 'stdout' | 'stderr') => (d: Buffer) => {
      seen[which] += d.length;
      if (seen[which] <= cap) into.push(d);
      else fail(limitError(outputLimit, `${program} on ${where} printed more than ${formatLimit(outputLimit)} on ${which}, so it was killed`));
    };
    child.stdout.on('data', buffer(out, 'stdout'));
    child.stderr.on('data', buffer(errOut, 'stderr'));
    child.stdin.on('error', () => undefined); // a program that exits without reading its stdin
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (failed) return;
      failed = true;
      clearTimeout(timer);
      // As a shell would answer: the program is not there (127) or may not run (126).
      if (e.code === 'ENOENT' || e.code === 'EACCES') resolve({ code: e.code === 'ENOENT' ? 127 : 126, stdout: '', stderr: `${program}: ${e.code === 'ENOENT' ? 'not found' : 'permission denied'}\n` });
      else reject(new HoldfastError('REFUSED', `Cannot run ${program} on ${where}: ${e.message}.`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      if (failed) return;
      clearTimeout(timer);
      const result: ExecResult = { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') };
      if (signal) result.signal = signal.replace(/^SIG/, '');
      resolve(result);
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

const handleOf = (fd: number) => Buffer.from(String(fd));
const fdOf = (h: Buffer) => Number(h.toString());

/** The session's SFTP requests (uploads, the disk checks) answered by this file system. */
class LocalSftp extends EventEmitter implements SessionSftp {
  open(p: string, flags: 'w' | 'r+', attrs: { mode: number }, cb: (err: Error | undefined, handle: Buffer) => void): void {
    fsOpen(p, flags, attrs.mode, (err, fd) => cb(err ?? undefined, err ? Buffer.alloc(0) : handleOf(fd)));
  }
  write(handle: Buffer, buf: Buffer, offset: number, length: number, position: number, cb: (err?: Error | null) => void): void {
    fsWrite(fdOf(handle), buf, offset, length, position, (err) => cb(err));
  }
  close(handle: Buffer, cb: (err?: Error | null) => void): void {
    fsClose(fdOf(handle), (err) => cb(err));
  }
  ext_openssh_fsync(handle: Buffer, cb: (err: Error | undefined) => void): void {
    fsync(fdOf(handle), (err) => cb(err ?? undefined));
  }
  stat(p: string, cb: (err: Error | undefined) => void): void {
    fsStat(p, (err) => cb(err ?? undefined));
  }
  ext_openssh_statvfs(p: string, cb: (err: Error | undefined, st: unknown) => void): void {
    statfs(p, (err, st) => cb(err ?? undefined, err ? undefined : { f_frsize: st.bsize, f_bsize: st.bsize, f_blocks: st.blocks, f_bavail: st.bavail }));
  }
}

type Probed = Omit<ProbeResult, 'imagesDir'> & Partial<Pick<ProbeResult, 'imagesDir'>>;

/** The probe (node/detect.ts), run here: a failure means "distro unknown", never an error. */
function probeLocal(def: NodeDef, exec: SessionSsh['exec']): Promise<Probed> {
  return exec(probeArgv(false), { timeoutMs: 15_000 })
    .then((r) => parseProbe(r.stdout))
    .catch((err: unknown) => (log.debug('local probe failed; distro unknown', { node: def.name, err }), { machine: os.machine(), hashTools: NO_HASH_TOOLS, distro: 'unknown' as const, distroVersion: null }));
}

/** Why containerd's socket cannot be used, in words that say what to do; null when it can. */
async function socketProblem(def: NodeDef): Promise<HoldfastError | null> {
  try {
    await fs.access(def.socket, fsConstants.R_OK | fsConstants.W_OK);
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return new HoldfastError('CONTAINERD_UNAVAILABLE', `No containerd socket at ${def.socket} on this machine.`, {
        hint: 'Is k3s (or RKE2) running here? Name another socket with --socket.',
      });
    }
    const st = await fs.stat(def.socket).catch(() => null);
    const how = st ? ` (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${st.uid}, gid ${st.gid})` : '';
    return new HoldfastError('REFUSED', `${def.user} may not open containerd's socket ${def.socket}${how}.`, {
      hint: 'Run Holdfast as root on the node.',
      remedy: { action: 'run-as-root' },
      cause: e,
    });
  }
}

/** NodeSession on this machine: containerd's own socket, this file system, local processes. */
export class LocalNodeSession implements NodeSession {
  readonly files: FileAccess;
  readonly blobs: BlobCache;
  readonly writer: GrpcContainerdClient;
  readonly ssh: SessionSsh;
  private closed = false;
  private readonly closeListeners = new Set<(err?: Error) => void>();
  private resolverCache?: TargetResolver;
  private infoCache?: Promise<NodeInfo> | undefined;
  private readonly probing: Promise<Probed>;

  private constructor(
    private nodeDef: NodeDef,
    readonly containerd: GrpcContainerdClient,
  ) {
    this.files = new LocalFileAccess(nodeDef.user, nodeDef.name);
    this.blobs = new BlobCache(containerd);
    this.writer = containerd;
    const self = this;
    const where = `this machine (${nodeDef.name})`;
    let sftp: LocalSftp | undefined;
    const exec = (argv: string[], opts?: ExecOptions) => execLocal(argv, opts, where);
    this.ssh = {
      where,
      get closed() {
        return self.closed;
      },
      via: undefined,
      nativeAuth: null,
      login: { host: 'localhost', port: nodeDef.port, user: nodeDef.user },
      hostKey: Buffer.alloc(0),
      exec,
      spawn: async (argv) => {
        // Only the upload's hash-while-writing streams a command: hashTools() names no program
        // here, so the upload hashes the file once written instead.
        throw new HoldfastError('INTERNAL', `no long-running ${argv[0]} on a local session`);
      },
      sftp: async () => (sftp ??= new LocalSftp()),
      onClose: (cb) => (this.closeListeners.add(cb), () => this.closeListeners.delete(cb)),
      close: () => this.close(),
    };
    this.probing = probeLocal(nodeDef, exec);
  }

  /**
   * This machine's session: the socket checked first (its absence or mode is the likely
   * problem, said plainly), the probe run, and the images dir its distro's config sets followed
   * unless one was given.
   */
  static async open(def: NodeDef): Promise<LocalNodeSession> {
    const problem = await socketProblem(def);
    if (problem) throw problem;
    const { GrpcContainerdClient } = await import('../containerd/client');
    const containerd = new GrpcContainerdClient({ target: `unix:${def.socket}`, namespace: def.namespace, describe: `${def.name} (${def.socket})` });
    const session = new LocalNodeSession(def, containerd);
    const moved = adoptImagesDir(def, (await session.probing).imagesDir);
    if (moved) session.followImagesDir(moved.imagesDir);
    return session;
  }

  get def(): NodeDef {
    return this.nodeDef;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  followImagesDir(imagesDir: string): void {
    this.nodeDef = { ...this.nodeDef, imagesDir };
  }

  async detect(): Promise<NodeInfo> {
    const [cv, probe] = await Promise.all([this.containerd.version(), this.probing]);
    return nodeInfoOf(cv, probe);
  }

  info(): Promise<NodeInfo> {
    if (!this.infoCache) {
      this.infoCache = this.detect();
      this.infoCache.catch(() => (this.infoCache = undefined));
    }
    return this.infoCache;
  }

  async platform(): Promise<Platform> {
    return platformFromUname((await this.probing).machine || os.machine());
  }

  /** Hashing goes through LocalFileAccess (node:crypto), never a streamed command. */
  async hashTools(): Promise<HashTools> {
    return NO_HASH_TOOLS;
  }

  async resolver(): Promise<TargetResolver> {
    this.resolverCache ??= new TargetResolver(this.containerd, await this.platform(), this.blobs);
    return this.resolverCache;
  }

  async listBaseImages(): Promise<BaseImageRef[]> {
    const [records, resolver] = await Promise.all([this.containerd.listImages(), this.resolver()]);
    return listImageRefs(records, resolver);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.containerd.close();
    for (const cb of this.closeListeners) cb();
  }
}
