// bench/fleet: inspecting a fleet of lab nodes — Holdfast `inspect` (in-process surveyFleet and
// the CLI end to end, every node's pins, fates, archives and disk) vs what an operator does by
// hand: a sequential loop of `ssh node ctr images ls` (image names and labels only).
// Medians of --runs, the ratio, and a markdown table line for docs/benchmarks.md.
//
// Holdfast's own CPU (process.cpuUsage) and memory per node are reported apart from the rest of
// the box's CPU (/proc/stat minus Holdfast's: the lab nodes' sshd and containerd, the proxy, other
// jobs), so a run shows whether the lab or Holdfast is the limit. It also times surveyFleet at
// --before-concurrency (16) beside the default in the same run, and writes its row into the
// bench:fleet section of docs/benchmarks.md (one row per nodes × images × RTT, others kept).
//
//   npx tsx bench/fleet.ts [--nodes 10] [--runs 3] [--images 3] [--rtt-ms 0] [--before-concurrency 16]
//
// --scale N (e.g. 500) instead: one `holdfast inspect` process over N light lab nodes (N sshd in
// front of --containerds 4 containerds), its CPU, peak RSS and open files, into README.md (see
// bench/fleetScale.ts).
import { spawn } from 'node:child_process';
import { median, timeCmd } from './util';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { machineLine, readBenchSection, writeBenchSection } from './doc';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeImageArchive } from '../lab/fixtures';
import { emulateK3sStart } from '../lab/k3s';
import { startLab } from '../lab/lab';
import { IndexCache } from '../src/core/archives/scan';
import { AuditLog } from '../src/core/audit/log';
import { NodeStore } from '../src/core/config/nodes';
import { DEFAULT_FLEET_CONCURRENCY, surveyFleet } from '../src/core/usecases/fleet';

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '10' }, runs: { type: 'string', default: '3' }, images: { type: 'string', default: '3' }, 'rtt-ms': { type: 'string', default: '0' }, 'before-concurrency': { type: 'string', default: '16' }, singles: { type: 'string', default: '0' }, 'no-by-hand': { type: 'boolean', default: false }, scale: { type: 'string' }, containerds: { type: 'string', default: '4' } },
});
if (values.scale) {
  const { runScale } = await import('./fleetScale');
  await runScale({ nodes: Number(values.scale), containerds: Number(values.containerds), images: Number(values.images) });
  process.exit(0);
}
const NODES = Number(values.nodes);
const RUNS = Number(values.runs);
const IMAGES = Number(values.images);
const root = path.resolve(import.meta.dirname, '..');
const BEFORE = Number(values['before-concurrency']);
// --singles N: time only every k-th node alone (N of them) — the slowest of a sample is at most
// the true slowest, so the fleet's ratio to it errs on the unflattering side. 0: every node.
const SINGLES = Number(values.singles);
const BY_HAND = !values['no-by-hand'];

/** Busy and total CPU time of the whole machine so far (ms), from /proc/stat. */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const tick = 10; // USER_HZ = 100 on Linux
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (total - idle) * tick, total: total * tick };
}


const mib = (b: number) => Math.round(b / 1024 / 1024);

const RTT = Number(values['rtt-ms']);
let proxy: ReturnType<typeof spawn> | null = null;
const t0 = performance.now();
const lab = await startLab({ nodes: NODES });
const labMs = performance.now() - t0;
try {
  // A few images per node, some shared, some per node, all imported and pinned the k3s way.
  await Promise.all(
    lab.nodes.map(async (n, i) => {
      const images = Array.from({ length: IMAGES }, (_, k) => ({ name: k === 0 ? 'docker.io/library/base:1' : `registry.local/site/app-${i}-${k}:1` }));
      await writeImageArchive(path.join(n.hostImagesDir, 'site.tar'), { format: 'docker', images });
      await emulateK3sStart(n);
    }),
  );
  const home = mkdtempSync(path.join(os.tmpdir(), 'hf-bench-fleet-'));
  // --rtt-ms N: reach every node through a delaying proxy, as over a WAN link to remote sites,
  // so node-side time is network time rather than this box's two shared cores.
  const portOf = new Map(lab.nodes.map((n) => [n.name, n.port]));
  let knownHosts = lab.knownHosts;
  if (RTT > 0) {
    proxy = spawn(process.execPath, [path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(root, 'bench', 'delayProxy.ts'), String(RTT), ...lab.nodes.map((n) => String(n.port))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const map = await new Promise<Record<string, number>>((resolve) => proxy!.stdout!.once('data', (d) => resolve(JSON.parse(String(d)))));
    knownHosts = path.join(home, 'known_hosts');
    writeFileSync(knownHosts, lab.nodes.map((n) => n.knownHostsLine.replace(`]:${n.port} `, `]:${map[n.port]} `)).join('\n') + '\n');
    for (const n of lab.nodes) portOf.set(n.name, map[n.port]!);
  }
  const store = new NodeStore(home);
  const defs = await store.addMany(lab.nodes.map((n) => ({ name: n.name, host: n.host, port: portOf.get(n.name)!, identity: lab.clientKey, knownHosts, group: 'bench' })));
  const ctx = { audit: new AuditLog(home), indexCache: new IndexCache(path.join(home, 'cache', 'archive-index')) };

  const byHand: number[] = [];
  const inProcess: number[] = [];
  const cli: number[] = [];
  // Holdfast's own CPU per node: on real nodes only this competes for the laptop's cores.
  const cpuPerNode: number[] = [];
  // The rest of the box during surveyFleet: share of all cores busy with anything but Holdfast.
  const restShare: number[] = [];
  const before: number[] = [];
  const unreachable: number[] = [];
  const unreachableBefore: number[] = [];
  let refs = 0;
  const rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  for (let r = 0; r < RUNS; r++) {
    const h0 = performance.now();
    for (const n of BY_HAND ? lab.nodes : []) {
      await timeCmd(['ssh', '-i', lab.clientKey, '-p', String(portOf.get(n.name)), '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes',
        'root@127.0.0.1', 'ctr', '-a', '/run/k3s/containerd/containerd.sock', '-n', 'k8s.io', 'images', 'ls']);
    }
    byHand.push(performance.now() - h0);

    const b0 = performance.now();
    const old = await surveyFleet(defs, { ctx, concurrency: BEFORE });
    before.push(performance.now() - b0);
    if (old.summary.unreachable) {
      unreachableBefore.push(old.summary.unreachable);
      console.error(`before (--concurrency ${BEFORE}): ${old.summary.unreachable} nodes missed the deadline`);
    }

    const p0 = performance.now();
    const cpu0 = process.cpuUsage();
    const m0 = machineCpu();
    const rep = await surveyFleet(defs, { ctx, onNode: () => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)) });
    inProcess.push(performance.now() - p0);
    const cpu = process.cpuUsage(cpu0);
    const m1 = machineCpu();
    const own = (cpu.user + cpu.system) / 1000;
    cpuPerNode.push(own / NODES);
    restShare.push(Math.max(0, m1.busy - m0.busy - own) / Math.max(1, m1.total - m0.total));
    // Reported, not thrown: on an overloaded box nodes miss their deadline, and that is a result too.
    if (rep.summary.unreachable) {
      unreachable.push(rep.summary.unreachable);
      console.error(`unreachable: ${rep.nodes.filter((n) => !n.reachable).map((n) => `${n.node}: ${n.error?.message}`).join('; ')}`);
    }
    refs = rep.nodes.reduce((s, n) => s + (n.images?.length ?? 0), 0);

    // Exit 1: some node missed its deadline (reported above for the in-process run); still timed.
    const c = await timeCmd([process.execPath, path.join(root, 'bin', 'holdfast.mjs'), 'inspect', '--all', '--json'], { HOLDFAST_HOME: home }, [0, 1]);
    cli.push(c.ms);
  }
  // The slowest single node, inspected alone (what a fleet run should approach).
  const single: number[] = [];
  const step = SINGLES > 0 ? Math.max(1, Math.floor(defs.length / SINGLES)) : 1;
  for (const d of defs.filter((_, i) => i % step === 0)) {
    const s0 = performance.now();
    await surveyFleet([d], { ctx });
    single.push(performance.now() - s0);
  }

  const result = {
    nodes: NODES,
    referencesTotal: refs,
    runs: RUNS,
    labStartMs: Math.round(labMs),
    medianMs: {
      sshCtrImagesLsLoop: Math.round(median(byHand)),
      holdfastInspectInProcess: Math.round(median(inProcess)),
      holdfastInspectCli: Math.round(median(cli)),
      slowestSingleNodeInProcess: Math.round(Math.max(...single)),
      medianSingleNodeInProcess: Math.round(median(single)),
    },
    rssMiB: { before: mib(rss0), peakDuringInspect: mib(rssPeak) },
    holdfastCpuMsPerNode: Math.round(median(cpuPerNode)),
    holdfastRssKiBPerNode: Math.round((rssPeak - rss0) / 1024 / NODES),
    restOfBoxCpuShare: +median(restShare).toFixed(2),
    beforeMs: Math.round(median(before)),
  };
  const rIn = result.medianMs.sshCtrImagesLsLoop / result.medianMs.holdfastInspectInProcess;
  const rCli = result.medianMs.sshCtrImagesLsLoop / result.medianMs.holdfastInspectCli;
  console.log(JSON.stringify({ ...result, ratio: { loopVsInProcess: +rIn.toFixed(2), loopVsCli: +rCli.toFixed(2), inProcessVsSlowestNode: +(result.medianMs.holdfastInspectInProcess / result.medianMs.slowestSingleNodeInProcess).toFixed(2) } }, null, 2));
  const slow = result.medianMs.slowestSingleNodeInProcess;
  const key = `${NODES} nodes × ${IMAGES} image${IMAGES === 1 ? '' : 's'}, ${RTT ? `${RTT} ms RTT` : 'loopback'}`;
  const row =
    `| ${key} | ${BY_HAND ? `${result.medianMs.sshCtrImagesLsLoop} ms` : 'not run'} | ${result.medianMs.holdfastInspectCli} ms (${(result.medianMs.holdfastInspectCli / slow).toFixed(2)}× slowest) | ` +
    `${result.beforeMs} ms (${(result.beforeMs / slow).toFixed(2)}× slowest${unreachableBefore.length ? `; ${Math.max(...unreachableBefore)} nodes missed the deadline` : ''}) | ` +
    `${result.medianMs.holdfastInspectInProcess} ms (${(result.medianMs.holdfastInspectInProcess / slow).toFixed(2)}× slowest${unreachable.length ? `; ${Math.max(...unreachable)} nodes missed the deadline` : ''}) | ` +
    `${slow} ms${step > 1 ? ` (of ${single.length} sampled)` : ''} | ${result.holdfastCpuMsPerNode} ms, ${(result.holdfastRssKiBPerNode / 1024).toFixed(1)} MiB | ${Math.round(result.restOfBoxCpuShare * 100)} % |`;
  const header = [
    `| median of ${RUNS} run(s) | sequential \`ssh node ctr images ls\` | \`holdfast inspect --json\` (new process) | surveyFleet, --concurrency ${BEFORE} (before) | surveyFleet, default ${DEFAULT_FLEET_CONCURRENCY} (after) | slowest single node | Holdfast's CPU and RSS growth per node | rest of the box busy (lab nodes, proxy, other jobs) |`,
    '|---|---|---|---|---|---|---|---|',
  ];
  // Keep the rows of other configurations already in the section; this one's row is replaced.
  const sec = readBenchSection('fleet');
  const kept = sec.split('\n').filter((l) => /^\| \d+ nodes × /.test(l) && !l.startsWith(`| ${key} |`));
  const rows = [...kept, row].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const machines = sec.split('\n').filter((l) => l.startsWith('- ') && !l.includes(`${key}:`));
  writeBenchSection('fleet', [...header, ...rows, '', ...machines, `- ${key}: ${machineLine()}`].join('\n'));
  console.log(
    `\n| ${NODES} nodes, ${IMAGES} images each${RTT ? `, ${RTT} ms RTT` : ''} | sequential \`ssh node ctr images ls\` | \`holdfast inspect --json\` (new process) | surveyFleet in process | slowest single node |\n|---|---|---|---|---|\n| median of ${RUNS} | ${result.medianMs.sshCtrImagesLsLoop} ms | ${result.medianMs.holdfastInspectCli} ms (${rCli.toFixed(2)}x) | ${result.medianMs.holdfastInspectInProcess} ms (${rIn.toFixed(2)}x) | ${result.medianMs.slowestSingleNodeInProcess} ms |`,
  );
} finally {
  proxy?.kill();
  await lab.stop();
}
