// `npm run lab -- [--nodes N] [--dir D] [--seed] [--distro k3s|rke2] [--k3s VERSION] [--name P]`:
// start simulated k3s (or RKE2) nodes on loopback, named P-n1… (lab/names.ts: lab1-n1… by default,
// never a name another lab or the node store holds), and keep them (and their k3s watchers)
// running until Ctrl-C / SIGTERM.
// `npm run lab -- k3s-start NODE --dir D`: emulate a k3s start on a node of that running lab.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { CONTAINERD_LINES, LAB_DISTROS, defaultContainerdLine, defaultLabDistro, isContainerdLine, isLabDistro, type LabDistro } from './containerd.ts';
import { checkLabPrerequisites, startLab, type Lab } from './lab.ts';
import { emulateK3sStart, listImages, startK3sWatcher, type FailedImport, type K3sStartReport, type K3sWatcher } from './k3s.ts';
import { writeImageArchive } from './fixtures.ts';
import { attachLabNode } from './attach.ts';
import { BANNER_WIDTH, labBanner } from './banner.ts';
import { workloadList } from './workloads.ts';
import { seedWorkloads, writeSeedArchive } from './seed.ts';
import { claimLabPrefix, storedNodeNames, type LabPrefix } from './names.ts';

const USAGE = [
  'usage: npm run lab -- [--nodes N] [--dir D] [--seed] [--containerd 2|1.7|1.6] [--distro k3s|rke2] [--k3s VERSION] [--name P]',
  '       (nodes are named P-n1, P-n2, …; P defaults to the first free lab1, lab2, …)',
  '       --distro: how the nodes are shaped (default k3s, or $HOLDFAST_LAB_DISTRO); on rke2 nodes',
  '       --k3s names the RKE2 release of that line and build (v1.33.7+k3s1 → v1.33.7+rke2r1)',
  '       npm run lab -- k3s-start NODE --dir D    (emulate a k3s start on a node of a running lab)',
].join('\n');
const DEFAULT_K3S = 'v1.33.7+k3s1';

/**
 * The distro's release for `--k3s`: `v1.33.7+k3s1`, or `v1.33.7` taken as its first build; on RKE2
 * nodes the RKE2 release of that line and build (`v1.33.7+rke2r1`, also accepted as given).
 */
function parseRelease(v: string, distro: LabDistro): string | null {
  const m = /^(v\d{1,3}\.\d{1,3}\.\d{1,3})(?:\+(?:k3s|rke2r)(\d{1,3}))?$/.exec(v);
  if (!m) return null;
  return `${m[1]}+${distro === 'k3s' ? 'k3s' : 'rke2r'}${m[2] ?? '1'}`;
}

function printStartReport(node: string, dir: string, r: K3sStartReport): void {
  const out = [`${node}: k3s start emulated (lab dir ${dir})`];
  const section = (label: string, items: string[]): void => {
    out.push(`  ${label.padEnd(10)}${items.length}`);
    for (const i of items) out.push(`    ${i}`);
  };
  section('cleared:', r.cleared);
  section('imported:', r.imported.map((a) => `${a.archive}: ${a.images.length ? a.images.join(', ') : 'no named image'}`));
  section('cached:', r.skippedByCache.map((f) => `${f} (unchanged in .cache.json: not re-imported)`));
  section('repinned:', r.repinned);
  section('failed:', r.failed.map((f) => `${f.archive}: ${f.error}`));
  process.stdout.write(out.join('\n') + '\n');
}

async function k3sStart(node: string | undefined, dir: string | undefined): Promise<void> {
  if (!node || !dir) fail(`k3s-start wants a node name and --dir\n${USAGE}`);
  let report: K3sStartReport;
  try {
    report = await emulateK3sStart(await attachLabNode(dir, node));
  } catch (e) {
    fail(`k3s-start ${node}: ${e instanceof Error ? e.message : String(e)}`);
  }
  printStartReport(node, dir, report);
}

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
  let values: { nodes?: string; dir?: string; seed?: boolean; help?: boolean; containerd?: string; distro?: string; k3s?: string; name?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      options: {
        nodes: { type: 'string', short: 'n' },
        dir: { type: 'string', short: 'd' },
        seed: { type: 'boolean', short: 's' },
        containerd: { type: 'string', short: 'c' },
        distro: { type: 'string' },
        k3s: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (positionals[0] === 'k3s-start') {
    // The node's distro is the one its lab was started with (attach.ts reads it).
    if (positionals.length > 2 || values.nodes || values.seed || values.containerd || values.distro || values.k3s || values.name) fail(`k3s-start takes a node name and --dir only\n${USAGE}`);
    await k3sStart(positionals[1], values.dir);
    return;
  }
  if (positionals.length) fail(`unexpected argument ${positionals[0]}\n${USAGE}`);
  let given: string;
  try {
    given = values.distro ?? defaultLabDistro();
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
  }
  if (!isLabDistro(given)) fail(`--distro wants one of ${LAB_DISTROS.join(', ')}\n${USAGE}`);
  const distro: LabDistro = given;
  const k3s = parseRelease(values.k3s ?? DEFAULT_K3S, distro);
  if (!k3s) fail(`--k3s wants a k3s release such as ${DEFAULT_K3S} (or v1.33.7)\n${USAGE}`);
  const count = values.nodes === undefined ? 3 : Number(values.nodes);
  if (!Number.isInteger(count) || count < 1 || count > 50) fail(`--nodes wants a whole number from 1 to 50\n${USAGE}`);

  const line = values.containerd ?? defaultContainerdLine();
  if (!isContainerdLine(line)) fail(`--containerd wants one of ${CONTAINERD_LINES.join(', ')}\n${USAGE}`);
  try {
    await checkLabPrerequisites(line);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }

  let prefix: LabPrefix;
  try {
    prefix = await claimLabPrefix({ requested: values.name, taken: await storedNodeNames() });
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
    await prefix.release();
    process.stdout.write('lab stopped\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  onAncestorExit(() => void shutdown('parent process exited'));

  const t0 = Date.now();
  try {
    lab = await startLab({ nodes: prefix.names(count), dir: values.dir, containerd: line, distro });
  } catch (e) {
    await prefix.release();
    fail(`could not start the lab: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (stopping) return;
  const startedMs = Date.now() - t0;

  for (const node of lab.nodes) {
    if (values.seed) {
      await writeSeedArchive(node.hostImagesDir);
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

  const version = (await lab.nodes[0]!.ctr(['version']).catch(() => '')).match(/Server:[\s\S]*?Version:\s+(\S+)/)?.[1] ?? line;
  // The first node is the server (kubectl answers); the others are agents. Running containers'
  // imageIDs carry the digests the server's node really has.
  const server = lab.nodes[0]!;
  const digests = Object.fromEntries((await listImages(server).catch(() => [])).map((i) => [i.name, i.digest]));
  const fixture = workloadList(seedWorkloads(lab.nodes.map((n) => n.name), k3s, `containerd://${version}`, digests, Boolean(values.seed)));
  for (const node of lab.nodes) await node.installDistroBinary(distro, k3s, node === server ? { workloads: fixture } : {});
  const banner = labBanner(
    {
      distro,
      release: k3s,
      containerdVersion: version,
      startedMs,
      dir: lab.dir,
      clientKey: lab.clientKey,
      knownHosts: lab.knownHosts,
      seed: Boolean(values.seed),
      nodes: lab.nodes.map((n) => ({
        name: n.name,
        user: n.user,
        host: n.host,
        port: n.port,
        hostKeyFingerprint: n.hostKeyFingerprint,
        hostSocket: n.hostSocket,
        hostImagesDir: n.hostImagesDir,
        ctrBinary: n.ctrBinary,
        server: n === server,
      })),
    },
    // A terminal's width; anywhere else (a log, a test) what a terminal usually has.
    process.stdout.isTTY ? process.stdout.columns || 80 : BANNER_WIDTH,
  );
  process.stdout.write(banner + '\n');
  // keep the event loop alive until a signal arrives
  setInterval(() => undefined, 1 << 30);
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
