// `npm run lab -- [--nodes N] [--dir D] [--seed]`: start simulated k3s nodes on loopback and keep
// them (and their k3s watchers) running until Ctrl-C / SIGTERM.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { CONTAINERD_LINES, defaultContainerdLine, isContainerdLine } from './containerd.ts';
import { checkLabPrerequisites, startLab, type Lab } from './lab.ts';
import { emulateK3sStart, startK3sWatcher, type FailedImport, type K3sWatcher } from './k3s.ts';
import { writeImageArchive } from './fixtures.ts';

const USAGE = 'usage: npm run lab -- [--nodes N] [--dir D] [--seed] [--containerd 2|1.7|1.6]';

/** k3s logs a failed import and goes on: so does the lab, where the user sees it. */
function printFailed(node: string, f: FailedImport): void {
  const pinned = f.images?.length ? ` (pinned anyway: ${f.images.join(', ')})` : '';
  process.stderr.write(`lab: ${node}: import of ${f.archive} failed: ${f.error}${pinned}\n`);
}

function fail(message: string): never {
  process.stderr.write(`lab: ${message}\n`);
  process.exit(1);
}

/** Parent pid of a process, from /proc (undefined when it is gone). */
function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid … — comm may contain spaces and parentheses
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * `npm run lab` puts npm → sh → tsx → node between the user and us, and npm's sh does not pass
 * SIGTERM on: a SIGTERM to npm would orphan the lab. So we also stop when any ancestor goes away.
 */
function onAncestorExit(cb: () => void): void {
  const chain: { pid: number; ppid: number }[] = [];
  let pid = process.ppid;
  while (pid > 1 && chain.length < 8) {
    const ppid = ppidOf(pid);
    if (ppid === undefined) break;
    chain.push({ pid, ppid });
    pid = ppid;
  }
  const timer = setInterval(() => {
    if (chain.some((a) => ppidOf(a.pid) !== a.ppid)) {
      clearInterval(timer);
      cb();
    }
  }, 500);
  timer.unref();
}

async function main(): Promise<void> {
  let values: { nodes?: string; dir?: string; seed?: boolean; help?: boolean; containerd?: string };
  try {
    ({ values } = parseArgs({
      options: {
        nodes: { type: 'string', short: 'n' },
        dir: { type: 'string', short: 'd' },
        seed: { type: 'boolean', short: 's' },
        containerd: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const count = values.nodes === undefined ? 3 : Number(values.nodes);
  if (!Number.isInteger(count) || count < 1 || count > 50) fail(`--nodes wants a whole number from 1 to 50\n${USAGE}`);

  const line = values.containerd ?? defaultContainerdLine();
  if (!isContainerdLine(line)) fail(`--containerd wants one of ${CONTAINERD_LINES.join(', ')}\n${USAGE}`);
  try {
    await checkLabPrerequisites(line);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }

  let lab: Lab | undefined;
  const watchers: K3sWatcher[] = [];
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping the lab…\n`);
    await Promise.all(watchers.map((w) => w.stop()));
    await lab?.stop();
    process.stdout.write('lab stopped\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  onAncestorExit(() => void shutdown('parent process exited'));

  const t0 = Date.now();
  try {
    lab = await startLab({ nodes: count, dir: values.dir, containerd: line });
  } catch (e) {
    fail(`could not start the lab: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (stopping) return;
  const startedMs = Date.now() - t0;

  for (const node of lab.nodes) {
    if (values.seed) {
      await writeImageArchive(join(node.hostImagesDir, 'holdfast-sample.tar.gz'), {
        format: 'docker',
        compression: 'gzip',
        images: [{ name: 'docker.io/library/holdfast-sample:1.0', seed: 'holdfast-sample' }],
      });
      await writeImageArchive(join(node.hostImagesDir, 'extra', 'holdfast-multi.tar.zst'), {
        format: 'oci',
        compression: 'zstd',
        images: [{ name: 'docker.io/library/holdfast-multi:2.0', platforms: ['linux/amd64', 'linux/arm64'] }],
      });
    }
    const report = await emulateK3sStart(node);
    for (const f of report.failed) printFailed(node.name, f);
    watchers.push(
      startK3sWatcher(node, {
        onImported: (a) => process.stdout.write(`lab: ${node.name}: imported ${a.archive}: ${a.images.length ? a.images.join(', ') : 'no named image'}\n`),
        onFailed: (f) => printFailed(node.name, f),
      }),
    );
  }

  const out: string[] = [];
  const version = (await lab.nodes[0]!.ctr(['version']).catch(() => '')).match(/Server:[\s\S]*?Version:\s+(\S+)/)?.[1] ?? line;
  out.push(`Holdfast lab: ${lab.nodes.length} k3s node(s) up in ${startedMs} ms on containerd ${version} (CRI plugin on), lab dir ${lab.dir}`);
  out.push(`  identity file: ${lab.clientKey}`);
  out.push(`  known_hosts:   ${lab.knownHosts}`);
  for (const n of lab.nodes) {
    out.push('');
    out.push(`${n.name}: ${n.user}@${n.host} port ${n.port}`);
    out.push(`  host key:    ${n.hostKeyFingerprint}`);
    out.push(`  socket:      /run/k3s/containerd/containerd.sock (host side ${n.hostSocket})`);
    out.push(`  images dir:  /var/lib/rancher/k3s/agent/images (host side ${n.hostImagesDir})`);
    out.push(
      // bin/holdfast.mjs, not npx: npx's own package resolution adds about 2 s to every command.
      `  bin/holdfast.mjs node add ${n.name} --host ${n.host} --port ${n.port} --identity ${lab.clientKey} --known-hosts ${lab.knownHosts}`,
    );
    out.push(`  ssh -i ${lab.clientKey} -p ${n.port} -o UserKnownHostsFile=${lab.knownHosts} ${n.user}@${n.host}`);
  }
  out.push('');
  out.push('k3s watchers are running: drop archives into an images dir to import and pin them. Ctrl-C stops everything.');
  process.stdout.write(out.join('\n') + '\n');
  // keep the event loop alive until a signal arrives
  setInterval(() => undefined, 1 << 30);
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
