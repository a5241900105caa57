// Light lab nodes for scale runs (bench:fleet --scale): many SSH front doors, few containerds.
// Each front is a real OpenSSH sshd with its own port and host key, started inside a full lab
// node's mount namespace (nsenter into its containerd's), so it sees that node's containerd socket,
// images dir and /root as its own. To Holdfast every front is one more node; the box pays one idle
// sshd (a few MiB, no CPU) per front instead of a containerd per node. startLab is unchanged.
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, sleep } from './exec.ts';
import { startLab, type Lab, type StartLabOptions } from './lab.ts';
import { SSHD, freePort, spawnGroup, sshBanner, sshdConfig, stopGroup, type LabNodeHandle } from './node.ts';
import { mapLimit } from '../src/shared/mapLimit.ts';

export interface FrontNode {
  name: string;
  host: '127.0.0.1';
  port: number;
  /** '[127.0.0.1]:PORT ssh-ed25519 AAAA…' */
  knownHostsLine: string;
  /** The lab node whose containerd and images dir this front reaches. */
  backend: string;
}

export interface FrontedLab {
  /** The full nodes behind the fronts (names c1..cN). */
  lab: Lab;
  fronts: FrontNode[];
  /** known_hosts listing every front (the lab's own lists the full nodes). */
  knownHosts: string;
  stop(): Promise<void>;
}

export interface StartFrontedLabOptions {
  /** How many fronts (names n1..nN), spread round-robin over the full nodes. */
  fronts: number;
  /** How many full nodes (containerd + sshd each) stand behind them. */
  containerds: number;
  dir?: string;
  containerd?: StartLabOptions['containerd'];
  /** Fronts started at once (each is an ssh-keygen and an sshd start). */
  startConcurrency?: number;
}

// Fronts still up when the process exits without stop() (a crashed bench): SIGKILL their groups,
// as lab/node.ts does for the nodes (a front outlives its node's own clean-up otherwise only until
// the node's stop, which ends everything in its namespace).
const liveFronts = new Set<ChildProcess>();
let exitHook = false;

async function startFront(name: string, backend: LabNodeHandle, dir: string, authorizedKeysFile: string): Promise<{ front: FrontNode; child: ChildProcess }> {
  const root = join(dir, name);
  await mkdir(root, { recursive: true });
  const hostKey = join(root, 'ssh_host_ed25519_key');
  await rm(hostKey, { force: true });
  await rm(hostKey + '.pub', { force: true });
  await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `holdfast-lab-${name}`, '-f', hostKey]);
  const [type, blob] = (await readFile(hostKey + '.pub', 'utf8')).trim().split(/\s+/);
  const nsPid = await backend.containerdPid();
  if (nsPid === null) throw new Error(`front ${name}: ${backend.name}'s containerd is not running`);
  const log = join(root, 'sshd.log');
  let lastErr = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort(); // may race with another front: retried
    const config = join(root, 'sshd_config');
    await writeFile(config, sshdConfig({ port, hostKey, pidFile: join(root, 'sshd.pid'), authorizedKeysFile }));
    const child = spawnGroup(['nsenter', '-t', String(nsPid), '-m', '--', SSHD, '-D', '-f', config, '-E', log], log);
    liveFronts.add(child);
    // sshd re-executes itself for every connection: on two cores busy with hundreds of them the
    // banner can take seconds, so the probe waits longer than lab/node.ts's.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (await sshBanner(port, 5000)) return { front: { name, host: '127.0.0.1', port, knownHostsLine: `[127.0.0.1]:${port} ${type} ${blob}`, backend: backend.name }, child };
      await sleep(20);
    }
    lastErr = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').slice(-3).join('\n');
    await stopGroup(child);
    liveFronts.delete(child);
  }
  throw new Error(`front ${name}: sshd did not start: ${lastErr}`);
}

export async function startFrontedLab(opts: StartFrontedLabOptions): Promise<FrontedLab> {
  if (!(opts.containerds >= 1) || !(opts.fronts >= 1)) throw new Error('startFrontedLab: at least one front and one containerd');
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of liveFronts) {
        try {
          if (c.pid) process.kill(-c.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    });
  }
  const lab = await startLab({ nodes: Array.from({ length: opts.containerds }, (_, i) => `c${i + 1}`), ...(opts.dir ? { dir: opts.dir } : {}), ...(opts.containerd ? { containerd: opts.containerd } : {}) });
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await mapLimit(children.splice(0), 32, async (c) => {
      await stopGroup(c, 1000);
      liveFronts.delete(c);
    });
    await lab.stop();
  };
  try {
    const dir = join(lab.dir, 'fronts');
    const names = Array.from({ length: opts.fronts }, (_, i) => `n${i + 1}`);
    const fronts = await mapLimit(names, opts.startConcurrency ?? 16, async (name) => {
      const { front, child } = await startFront(name, lab.nodes[Number(name.slice(1)) % lab.nodes.length]!, dir, join(lab.dir, 'authorized_keys'));
      children.push(child);
      return front;
    });
    const knownHosts = join(lab.dir, 'fronts_known_hosts');
    await writeFile(knownHosts, fronts.map((f) => f.knownHostsLine).join('\n') + '\n');
    return { lab, fronts, knownHosts, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
