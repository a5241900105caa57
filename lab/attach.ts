// A node of a lab that another process runs (`npm run lab`), found from its lab dir alone, for
// what k3s emulation needs (LabNodeView): its host-side socket and images dir (lab.ts puts node
// NAME at <dir>/NAME, node.ts lays it out) and the containerd line it runs, read from the daemon.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { availableContainerdLines, containerdBinaries, isLabDistro, type ContainerdLine, type LabDistro } from './containerd.ts';
import { run } from './exec.ts';
import { DISTRO_MARKER, type LabNodeView } from './node.ts';

const socketOf = (root: string): string => join(root, 'run-k3s', 'containerd', 'containerd.sock');

async function isSocket(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

/** Names of the nodes in a lab dir whose containerd socket exists (a running lab). */
export async function labNodeNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) if (e.isDirectory() && (await isSocket(socketOf(join(dir, e.name))))) out.push(e.name);
  return out.sort();
}

/** The containerd line serving a socket, from its server version (any cached ctr can ask). */
async function lineOf(socket: string): Promise<ContainerdLine> {
  let last = '';
  for (const line of availableContainerdLines()) {
    try {
      const out = await run([containerdBinaries(line).ctr, '--connect-timeout', '2s', '-a', socket, 'version'], { timeoutMs: 10_000 });
      const v = /Server:[\s\S]*?Version:\s+v?(\d+)\.(\d+)/.exec(out);
      if (!v) throw new Error(`no server version in: ${out.trim()}`);
      const found = v[1] === '2' ? '2' : `${v[1]}.${v[2]}`;
      if (found === '2' || found === '1.7' || found === '1.6') return found;
      throw new Error(`containerd ${found} is no lab line`);
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
  }
  throw new Error(`could not ask the containerd at ${socket} its version: ${last || 'no ctr available'}`);
}

/** The distro the node was shaped as (node.ts writes it at start; none: a lab from before, k3s). */
async function distroOf(root: string): Promise<LabDistro> {
  const text = (await readFile(join(root, DISTRO_MARKER), 'utf8').catch(() => '')).trim();
  return isLabDistro(text) ? text : 'k3s';
}

/** Node `name` of the running lab in `dir`, for emulateK3sStart and friends. */
export async function attachLabNode(dir: string, name: string): Promise<LabNodeView> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/.test(name)) throw new Error(`bad node name ${name}`);
  const root = join(dir, name);
  const hostSocket = socketOf(root);
  if (!(await isSocket(hostSocket))) {
    const names = await labNodeNames(dir);
    throw new Error(`no running lab node ${name} in ${dir} (no containerd socket at ${hostSocket}); running there: ${names.join(', ') || 'none'}`);
  }
  const containerdLine = await lineOf(hostSocket);
  const { ctr } = containerdBinaries(containerdLine);
  const distro = await distroOf(root);
  return {
    name,
    root,
    hostSocket,
    hostImagesDir: join(root, 'rancher', distro, 'agent', 'images'),
    distro,
    containerdLine,
    ctr: (args, opts = {}) => run([ctr, '--connect-timeout', '2s', '-a', hostSocket, '-n', 'k8s.io', ...args], { input: opts.input }),
  };
}
