// bench:fleet --scale N: how far one laptop goes. One `holdfast inspect --all --json
// --openmetrics FILE` process over N light lab nodes (lab/fronts.ts: N real sshd, each a node to
// Holdfast, in front of a few real containerds), measured from outside the process as an operator
// would see it: wall time, CPU time (user + sys) and peak RSS from wait4 (GNU time), and open file
// descriptors by counting /proc/PID/fd while it runs. The same command on one node gives the fixed
// cost (starting Node, loading the CLI), so the per-node figures are the growth from 1 to N nodes.
// Writes the bench:fleet-scale table of docs/benchmarks.md and its summary in README.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeImageArchive } from '../lab/fixtures';
import { startFrontedLab } from '../lab/fronts';
import { emulateK3sStart } from '../lab/k3s';
import { NodeStore } from '../src/core/config/nodes';
import { DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS } from '../src/core/usecases/fleet/defaults';
import { machineLine, writeBenchSection } from './doc';

export const README = path.resolve(import.meta.dirname, '..', 'README.md');
const root = path.resolve(import.meta.dirname, '..');

export interface ScaleOptions {
  nodes: number;
  containerds: number;
  images: number;
}

interface Measured {
  wallMs: number;
  cpuMs: number;
  peakRssKiB: number;
  peakFds: number;
  exitCode: number;
  out: string;
}

const readChildren = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

const fdCount = (pid: number): number => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
};

/**
 * Runs the CLI under GNU time (CPU and max RSS as wait4 reports them for the exited process) and
 * samples the CLI process's open descriptors every 20 ms while it runs.
 */
function measure(args: string[], home: string): Promise<Measured> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn('/usr/bin/time', ['-f', 'HFTIME %U %S %M', process.execPath, path.join(root, 'bin', 'holdfast.mjs'), ...args], {
      // The bundle, as an installed package runs it (bin/entry.mjs would fall back to tsx, slower
      // and heavier, whenever a source file is newer than the bundle).
      env: { ...process.env, HOLDFAST_HOME: home, HOLDFAST_CLI: 'bundle' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    c.stdout.on('data', (d: Buffer) => out.push(d));
    c.stderr.on('data', (d) => (err += d));
    let peakFds = 0;
    let cli: number | undefined;
    const timer = setInterval(() => {
      cli ??= c.pid ? readChildren(c.pid)[0] : undefined;
      if (cli) peakFds = Math.max(peakFds, fdCount(cli));
    }, 20);
    c.on('close', (code) => {
      clearInterval(timer);
      const m = /HFTIME (\S+) (\S+) (\d+)/.exec(err);
      // 1: some node not inspected (reported in the JSON); anything else is a failed run.
      if (!m || (code !== 0 && code !== 1)) return reject(new Error(`holdfast ${args.join(' ')}: exit ${code}: ${err.slice(-2000)}`));
      resolve({ wallMs: performance.now() - t0, cpuMs: (Number(m[1]) + Number(m[2])) * 1000, peakRssKiB: Number(m[3]), peakFds, exitCode: code, out: Buffer.concat(out).toString() });
    });
  });
}

interface Report {
  nodes: { node: string; reachable: boolean; error?: { code: string; message: string } | null }[];
}

/** What the openmetrics file holds per node: every reached node's imagefs and GC threshold series. */
function seriesCount(file: string, name: string): number {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith(`${name}{node="`)).length;
}

export async function runScale(o: ScaleOptions): Promise<void> {
  // The bundle of the sources as they are now (npm run build:cli).
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-cli.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('scripts/build-cli.mjs failed');
  const t0 = performance.now();
  const fl = await startFrontedLab({ fronts: o.nodes, containerds: o.containerds, startConcurrency: 32 });
  const labMs = performance.now() - t0;
  try {
    // Every containerd: a few images imported and pinned the k3s way, one of them shared by all.
    await Promise.all(
      fl.lab.nodes.map(async (n, i) => {
        const images = Array.from({ length: o.images }, (_, k) => ({ name: k === 0 ? 'docker.io/library/base:1' : `registry.local/site/app-${i}-${k}:1` }));
        await writeImageArchive(path.join(n.hostImagesDir, 'site.tar'), { format: 'docker', images });
        await emulateK3sStart(n);
      }),
    );
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-bench-scale-'));
    const store = new NodeStore(home);
    await store.addMany(fl.fronts.map((f) => ({ name: f.name, host: f.host, port: f.port, identity: fl.lab.clientKey, knownHosts: fl.knownHosts, group: 'scale' })));

    // Plain `inspect` first, then with --openmetrics (which also takes every reached node's disk
    // picture on a second connection): each on one node (the fixed cost), then on all of them.
    const variants = [
      { name: '`holdfast inspect --all --json`', args: [] as string[], prom: null as string | null },
      { name: '… `--openmetrics FILE` too', args: ['--openmetrics', path.join(home, 'fleet.prom')], prom: path.join(home, 'fleet.prom') },
    ];
    const N = o.nodes;
    const per = (a: number, b: number) => (a - b) / Math.max(1, N - 1);
    const mib = (kib: number) => kib / 1024;
    const rows: string[] = [];
    const results: Record<string, unknown>[] = [];
    let plain: { one: Measured; all: Measured; reached: number; missedWhy: string } | undefined;
    let imagefs = 0;
    let gc = 0;
    for (const v of variants) {
      const one = await measure(['inspect', 'n1', '--json', ...v.args], home);
      const all = await measure(['inspect', '--all', '--json', ...v.args], home);
      const report = JSON.parse(all.out) as Report;
      const reached = report.nodes.filter((n) => n.reachable).length;
      const missed = report.nodes.filter((n) => !n.reachable);
      if (missed.length) console.error(`${v.name}: not inspected: ${missed.slice(0, 10).map((n) => `${n.node}: ${n.error?.message}`).join('; ')}${missed.length > 10 ? ` (+${missed.length - 10})` : ''}`);
      if (v.prom) {
        imagefs = seriesCount(v.prom, 'holdfast_imagefs_capacity_bytes');
        gc = seriesCount(v.prom, 'holdfast_gc_high_threshold_ratio');
      } else {
        // Why the nodes not inspected were not: their error kinds, counted.
        const kinds = new Map<string, number>();
        for (const n of missed) kinds.set(n.error?.code ?? 'unknown', (kinds.get(n.error?.code ?? 'unknown') ?? 0) + 1);
        plain = { one, all, reached, missedWhy: [...kinds].map(([k, c]) => `${c} ${k}`).join(', ') };
      }
      const p = { wallMs: per(all.wallMs, one.wallMs), cpuMs: per(all.cpuMs, one.cpuMs), rssKiB: per(all.peakRssKiB, one.peakRssKiB), fds: per(all.peakFds, one.peakFds) };
      results.push({ variant: v.name, one: { ...one, out: undefined }, all: { ...all, out: undefined }, reached, perNode: p });
      const cell = (m: Measured) => [`${(m.wallMs / 1000).toFixed(1)} s`, `${(m.cpuMs / 1000).toFixed(1)} s`, `${mib(m.peakRssKiB).toFixed(0)} MiB`, String(m.peakFds)];
      rows.push(
        `| ${v.name}, 1 node | ${cell(one).join(' | ')} | ${one.exitCode === 0 ? 1 : 0} of 1 |`,
        `| ${v.name}, ${N} nodes | ${cell(all).join(' | ')} | ${reached} of ${N} |`,
        `| ${v.name}, each node beyond the first | ${p.wallMs.toFixed(0)} ms | ${p.cpuMs.toFixed(0)} ms | ${(p.rssKiB / 1024).toFixed(2)} MiB | ${p.fds.toFixed(2)} | |`,
      );
    }
    console.log(JSON.stringify({ nodes: N, containerds: o.containerds, labStartMs: Math.round(labMs), imagefsSeries: imagefs, gcSeries: gc, results }, null, 2));
    const { one, all, reached, missedWhy } = plain!;
    const p = { cpuMs: per(all.cpuMs, one.cpuMs), rssKiB: per(all.peakRssKiB, one.peakRssKiB) };
    const withProm = results[1]!.all as Measured;
    const big = N * 10;
    const cores = os.cpus().length;
    const summary =
      `How far one laptop goes: one \`holdfast inspect\` process inspected ${reached} of ${N} nodes in ${(all.wallMs / 1000).toFixed(0)} s` +
        `${reached < N ? ` (not inspected: ${missedWhy}, with the default ${DEFAULT_NODE_TIMEOUT_MS / 1000} s per node while the lab's sshd shared the box's cores)` : ''}, ` +
        `spending ${(all.cpuMs / 1000).toFixed(0)} s of CPU (${p.cpuMs.toFixed(0)} ms per node) and at most ${mib(all.peakRssKiB).toFixed(0)} MiB of memory ` +
        `(${(p.rssKiB / 1024).toFixed(2)} MiB per node), with at most ${all.peakFds} files open (the connections in flight, ${DEFAULT_FLEET_CONCURRENCY} at a time). ` +
        `With --openmetrics, which measures each node's disk picture on that node's own inspection connection, it took ${(withProm.wallMs / 1000).toFixed(0)} s and held at most ${withProm.peakFds} open. ` +
        `Node raises its soft limit on open files to the hard one (\`ulimit -Hn\`) at start, so that hard limit, not the usual soft 1024, is what bounds a run. ` +
        `At the rates above a ${big}-node run would need about ${((one.cpuMs + p.cpuMs * (big - 1)) / 60_000).toFixed(1)} min of one core and ` +
        `${((one.peakRssKiB + p.rssKiB * (big - 1)) / 1024 / 1024).toFixed(1)} GiB (extrapolated, not measured). ` +
        `Here the box's ${cores} shared cores also ran the lab (${N} sshd and every SSH session's shell), so the wall time is more the lab's than Holdfast's.`;
    const text = [
      '| one process | wall time | CPU (user + sys) | peak RSS | peak open files | nodes inspected |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      `- ${N} light lab nodes (lab/fronts.ts: one sshd each, in front of ${o.containerds} containerd 2.x with ${o.images} image${o.images === 1 ? '' : 's'} each), loopback; ` +
        `--openmetrics wrote the imagefs and GC threshold series for ${imagefs} and ${gc} of ${N} nodes; lab started in ${(labMs / 1000).toFixed(0)} s. ${machineLine()}`,
    ].join('\n');
    // The README says how far one laptop goes; docs/benchmarks.md has the table behind it.
    writeBenchSection('fleet-scale', text);
    writeBenchSection('fleet-scale-summary', `${summary} [The table](docs/benchmarks.md#how-far-one-laptop-goes).`, README);
  } finally {
    await fl.stop();
  }
}
