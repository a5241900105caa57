// The file systems behind a node's images: the images dir (archives), containerd's content
// store (blobs) and its snapshots (unpacked layers, what kubelet's GC measures: CRI reports the
// snapshotter's directory as the image file system). containerd says where its plugins keep
// their data (Introspection: exports.root of io.containerd.content.v1 and of the snapshotter);
// when it does not, k3s's layout is assumed: `<data-dir>/agent/containerd`. Each directory is
// measured like the images dir in core/usecases/fleet/disk.ts — statvfs@openssh.com over SFTP as the SSH
// user, else `df -Pk` (through `sudo -n` for a non-root user) — and directories on one file
// system are reported once.
import path from 'node:path';
import { distroProfile } from '../../shared/distro';
import type { NodeInfo } from '../../shared/domain/nodes';
import type { FsRole, FsUsage } from '../../shared/diskPicture';
import type { ContainerdClient } from '../containerd/client';
import type { FileAccess } from '../access';
import type { SessionSftp, SessionSsh } from '../node/session';

/** The snapshotter CRI unpacks into on k3s and by default in containerd. */
export const DEFAULT_SNAPSHOTTER = 'overlayfs';

export interface StoreDirs {
  content: string;
  snapshots: string;
  /** How they were found, for the notes. */
  from: 'containerd' | 'k3s-layout';
  snapshotter: string;
}

/** k3s keeps containerd's root at `<data-dir>/agent/containerd` (RKE2 the same under its data-dir). */
export function k3sContainerdRoot(info: NodeInfo | null): string {
  const dataDir = info?.imagesDir?.dataDir ?? distroProfile(info?.distro ?? 'unknown').dataDirDefault;
  return path.posix.join(dataDir, 'agent', 'containerd');
}

/** Where the content store and the snapshotter keep their data, as containerd reports it. */
export async function storeDirs(cd: ContainerdClient, info: NodeInfo | null): Promise<StoreDirs> {
  const root = k3sContainerdRoot(info);
  const fallback: StoreDirs = {
    content: path.posix.join(root, 'io.containerd.content.v1.content'),
    snapshots: path.posix.join(root, `io.containerd.snapshotter.v1.${DEFAULT_SNAPSHOTTER}`),
    from: 'k3s-layout',
    snapshotter: DEFAULT_SNAPSHOTTER,
  };
  try {
    const plugins = await cd.plugins(['type==io.containerd.content.v1', 'type==io.containerd.snapshotter.v1']);
    const content = plugins.find((p) => p.type === 'io.containerd.content.v1' && p.exports.root);
    const snaps = plugins.filter((p) => p.type === 'io.containerd.snapshotter.v1' && p.exports.root && !p.initError);
    const snap = snaps.find((p) => p.id === DEFAULT_SNAPSHOTTER) ?? snaps[0];
    if (!content?.exports.root) return fallback;
    return {
      content: content.exports.root,
      snapshots: snap?.exports.root ?? content.exports.root,
      from: 'containerd',
      snapshotter: snap?.id ?? DEFAULT_SNAPSHOTTER,
    };
  } catch {
    return fallback;
  }
}

interface Measured {
  dir: string;
  totalBytes: number | null;
  freeBytes: number;
  via: 'statvfs' | 'df';
  /** What identifies the file system: statvfs's fsid, or df's mount point. */
  id: string | null;
}

/**
 * `df -Pk -- DIR…`: per line total, available and the mount point (after the capacity column,
 * so a device name with spaces is harmless), in the order the dirs were given.
 */
export function parseDfLines(stdout: string): { totalBytes: number; freeBytes: number; mount: string }[] {
  const out: { totalBytes: number; freeBytes: number; mount: string }[] = [];
  for (const line of stdout.split('\n').slice(1)) {
    const m = /\s(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s+(.*)$/.exec(line);
    if (m) out.push({ totalBytes: Number(m[1]) * 1024, freeBytes: Number(m[3]) * 1024, mount: m[5]!.trim() });
  }
  return out;
}

async function nearestExisting(files: FileAccess, dir: string): Promise<string> {
  let d = path.posix.normalize(dir);
  for (;;) {
    if (await files.stat(d).catch(() => null)) return d;
    const up = path.posix.dirname(d);
    if (up === d) return d;
    d = up;
  }
}

function statvfs(sftp: SessionSftp, dir: string): Promise<Measured | null> {
  return new Promise((resolve) => {
    try {
      sftp.ext_openssh_statvfs(dir, (err: Error | null | undefined, st: unknown) => {
        if (err || !st) return resolve(null);
        const v = st as Record<string, number | bigint | undefined>;
        const unit = Number(v.f_frsize) || Number(v.f_bsize);
        if (!unit) return resolve(null);
        // ssh2 names the field f_sid; 0 means the file system gives none (tmpfs on older kernels).
        const fsid = Number(v.f_sid ?? v.f_fsid ?? 0);
        resolve({ dir, totalBytes: Number(v.f_blocks) * unit, freeBytes: Number(v.f_bavail) * unit, via: 'statvfs', id: fsid ? `fsid:${fsid}` : null });
      });
    } catch {
      resolve(null); // the server does not offer statvfs@openssh.com
    }
  });
}

/**
 * Two measurements of one file system (taken moments apart): the same fsid or mount point when
 * both have one of a kind, else the same size and about the same free space.
 */
function sameFs(a: Measured, b: Measured): boolean {
  if (a.totalBytes !== b.totalBytes) return false;
  const kind = (m: Measured) => m.id?.split(':')[0];
  if (a.id !== null && b.id !== null && kind(a) === kind(b)) return a.id === b.id;
  const tolerance = Math.max(1024 * 1024, (a.totalBytes ?? 0) / 1000);
  return Math.abs(a.freeBytes - b.freeBytes) <= tolerance;
}

/** Measures each role's directory and merges those on one file system (images dir first). */
export async function measureFileSystems(
  session: { ssh: Pick<SessionSsh, 'sftp' | 'exec' | 'closed'>; files: FileAccess; sudo: boolean },
  dirs: { role: FsRole; dir: string }[],
): Promise<FsUsage[]> {
  const existing = await Promise.all(dirs.map(async (d) => ({ ...d, at: await nearestExisting(session.files, d.dir).catch(() => d.dir) })));
  const measured = new Map<string, Measured | null>();
  // On the node itself (local) statvfs is this machine's statfs(2): no `df` needed on the PATH
  // (a standalone file run with a bare PATH, a minimal DaemonSet image).
  if (session.files.mode === 'sftp' || session.files.mode === 'local') {
    const sftp = await session.ssh.sftp().catch(() => null);
    if (sftp) for (const d of existing) if (!measured.has(d.at)) measured.set(d.at, await statvfs(sftp, d.at));
  }
  const missing = [...new Set(existing.map((d) => d.at).filter((at) => !measured.get(at)))];
  if (missing.length && !session.ssh.closed) {
    // One df for every directory statvfs could not measure; argv only, paths after `--`.
    const argv = [...(session.sudo ? ['sudo', '-n'] : []), 'df', '-Pk', '--', ...missing];
    const r = await session.ssh.exec(argv, { timeoutMs: 15_000 }).catch(() => null);
    const lines = r ? parseDfLines(r.stdout) : [];
    if (r && lines.length === missing.length) {
      missing.forEach((at, i) => measured.set(at, { dir: at, totalBytes: lines[i]!.totalBytes, freeBytes: lines[i]!.freeBytes, via: 'df', id: `mount:${lines[i]!.mount}` }));
    }
  }
  const out: (FsUsage & { m: Measured })[] = [];
  for (const d of existing) {
    const m = measured.get(d.at);
    if (!m) continue;
    const fs = out.find((f) => sameFs(f.m, m));
    if (fs) {
      if (!fs.roles.includes(d.role)) fs.roles.push(d.role);
      fs.paths[d.role] = d.at;
    } else {
      out.push({ roles: [d.role], paths: { [d.role]: d.at }, totalBytes: m.totalBytes, freeBytes: m.freeBytes, via: m.via, m });
    }
  }
  return out.map(({ m: _m, ...fs }) => fs);
}
