// bench/direct: direct delivery (issue #35) against the two ways images reach a k3s node today,
// on real lab nodes (containerd + OpenSSH sshd), for a fresh bundle and for an update that shares
// most of its layers, to one node and to --nodes nodes:
//   - `holdfast import NODE... FILE --direct`: only the blobs a node lacks, into containerd over
//     the tunnel, unpacked and pinned durably;
//   - by hand: `scp FILE node:/tmp/… && ssh node ctr -n k8s.io images import --local /tmp/…`
//     (unpacks, as Holdfast does); to many nodes both all at once (`&` and `wait`) and the
//     operator's loop, one node after the other;
//   - today's images dir: `holdfast import NODE... FILE --pin` with the lab's k3s watcher running
//     (k3s imports without unpacking, after the file has stayed unchanged for 2 s).
// Bytes on the wire are counted at the TCP level by a proxy in front of every node's sshd
// (countProxy.ts), the same for all three ways: SSH handshakes, framing and MACs included. Peak
// extra disk on a node: its containerd root, images dir, lab tmp and the by-hand /tmp file, `du`
// (allocated bytes) every ~100 ms; "extra" is the peak above the start less what containerd keeps
// at the end (content and unpacked snapshots), as a share of the bundle's image content.
// Every run starts from wiped nodes; an update's nodes first get the old bundle straight from
// the host (`ctr images import`, not on the wire, unpacked). Holdfast runs as the CLI bundle
// (built here), a new process per command, `--parallel` set to the node count.
// The table goes into the bench:direct section of docs/benchmarks.md, its verdicts into README.md.
//
//   npm run bench:direct [-- --nodes 5 --runs 1 --base-mib 60 --deps-mib 28 --top-mib 2 --no-docs]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { K3S_SOCKET, startK3sWatcher, startLab, type K3sWatcher, type LabNodeHandle } from '../lab';
import { writeLayeredArchive, type LayeredImage, type LayeredImageSpec } from '../lab/layered';
import { NodeStore } from '../src/core/config/nodes';
// @ts-expect-error -- plain .mjs build scripts, no type declarations
import { buildCli } from '../scripts/build-cli.mjs';
import { machineLine, writeBenchSection } from './doc';
import { median, timeCmd } from './util';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5' },
    runs: { type: 'string', default: '1' },
    images: { type: 'string', default: '3' },
    'base-mib': { type: 'string', default: '60' },
    'deps-mib': { type: 'string', default: '28' },
    'top-mib': { type: 'string', default: '2' },
    'no-docs': { type: 'boolean', default: false },
  },
});
const NODES = Number(values.nodes);
const RUNS = Number(values.runs);
const IMAGES = Number(values.images);
const MiB = 1024 * 1024;
const root = path.resolve(import.meta.dirname, '..');
const HOLDFAST = [process.execPath, path.join(root, 'bin', 'holdfast.mjs')];

// ---------------------------------------------------------------------------------------------
// The bundles: every image = one base layer all share + its own dependencies layer (kept by the
// update) + a small top layer (replaced by the update). Pseudo-random payloads: incompressible.

const spec = (version: number): LayeredImageSpec[] =>
  Array.from({ length: IMAGES }, (_, i) => ({
    name: `registry.local/site/app-${i + 1}:${version}`,
    layers: [
      { seed: 'bench-site-base', bytes: Number(values['base-mib']) * MiB },
      { seed: `bench-app-${i + 1}-deps`, bytes: Number(values['deps-mib']) * MiB },
      { seed: `bench-app-${i + 1}-top-${version}`, bytes: Number(values['top-mib']) * MiB },
    ],
  }));

/** Distinct blobs of a bundle: digest → size. */
const blobsOf = (images: LayeredImage[]): Map<string, number> => new Map(images.flatMap((i) => i.blobs.map((b) => [b.digest, b.size] as const)));
const sum = (xs: Iterable<number>): number => [...xs].reduce((a, b) => a + b, 0);

const work = mkdtempSync(path.join(os.tmpdir(), 'hf-bench-direct-'));
console.error('writing the bundles …');
const v1File = path.join(work, 'site-v1.tar');
const v2File = path.join(work, 'site-v2.tar');
const v1 = blobsOf(await writeLayeredArchive(v1File, spec(1)));
const v2 = blobsOf(await writeLayeredArchive(v2File, spec(2)));
const names = (version: number): string[] => spec(version).map((s) => s.name);

interface Scenario {
  key: 'fresh' | 'update';
  file: string;
  names: string[];
  /** Image content of the bundle (every distinct blob). */
  content: number;
  /** What one node lacks before the run. */
  lacks: number;
}
const scenarios: Scenario[] = [
  { key: 'fresh', file: v1File, names: names(1), content: sum(v1.values()), lacks: sum(v1.values()) },
  { key: 'update', file: v2File, names: names(2), content: sum(v2.values()), lacks: sum([...v2].filter(([d]) => !v1.has(d)).map(([, s]) => s)) },
];

console.error('building the CLI bundle …');
await buildCli();
const CLI_ENV = { HOLDFAST_CLI: 'bundle' };

// ---------------------------------------------------------------------------------------------
// Lab, counting proxy, a Holdfast home whose nodes are reached through the proxy.

const lab = await startLab({ nodes: NODES });
let proxy: ReturnType<typeof spawn> | null = null;
const watchers: K3sWatcher[] = [];
let home = '';
try {
  const containerd = await lab.nodes[0]!.containerdVersion();
  proxy = spawn(process.execPath, [path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(root, 'bench', 'countProxy.ts'), ...lab.nodes.map((n) => String(n.port))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: proxy.stdout! })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<unknown> => {
    const r = await lines.next();
    if (r.done) throw new Error('the counting proxy exited');
    return JSON.parse(r.value as string);
  };
  const portMap = (await nextLine()) as Record<string, number>;
  type Counts = Record<string, { up: number; down: number }>;
  const counts = async (): Promise<Counts> => {
    proxy!.stdin!.write('\n');
    return (await nextLine()) as Counts;
  };
  const via = (n: LabNodeHandle): number => portMap[n.port]!;

  home = mkdtempSync(path.join(os.tmpdir(), 'hf-bench-direct-home-'));
  const knownHosts = path.join(home, 'known_hosts');
  writeFileSync(knownHosts, lab.nodes.map((n) => n.knownHostsLine.replace(`]:${n.port} `, `]:${via(n)} `)).join('\n') + '\n');
  await new NodeStore(home).addMany(lab.nodes.map((n) => ({ name: n.name, host: n.host, port: via(n), user: 'root', identity: lab.clientKey, knownHosts })));
  const ssh = ['-i', lab.clientKey, '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes'];
  // On a real node /tmp is its own; the lab's nodes share the host's, so each gets its own name.
  const remoteTmp = (n: LabNodeHandle): string => `/tmp/hfbench-${n.name}.tar`;
  const local = (n: LabNodeHandle): string[] => (n.containerdLine === '2' ? ['--local'] : []);

  for (const n of lab.nodes) watchers.push(startK3sWatcher(n));

  // -------------------------------------------------------------------------------------------
  // Disk on a node: containerd's root apart (what it keeps at the end is the images themselves).

  const ctrRoot = (n: LabNodeHandle): string => path.join(n.root, 'containerd', 'root');
  const otherDirs = (n: LabNodeHandle): string[] => [n.hostImagesDir, path.join(n.root, 'tmp'), remoteTmp(n)];
  type Usage = { ctr: number; total: number };
  const du = async (nodes: LabNodeHandle[]): Promise<Usage[]> => {
    // exit 1: a path missing (no /tmp file yet) or a file gone while counting (an ingest committed)
    const { out } = await timeCmd(['du', '-s', '-B1', '--', ...nodes.flatMap((n) => [ctrRoot(n), ...otherDirs(n)])], {}, [0, 1]);
    const size = new Map(out.split('\n').filter(Boolean).map((l) => [l.slice(l.indexOf('\t') + 1), Number(l.slice(0, l.indexOf('\t')))] as const));
    return nodes.map((n) => {
      const ctr = size.get(ctrRoot(n)) ?? 0;
      return { ctr, total: ctr + sum(otherDirs(n).map((d) => size.get(d) ?? 0)) };
    });
  };

  /** Runs `fn` while sampling the nodes' disk; the worst node's extra bytes and the wall time. */
  const measured = async (nodes: LabNodeHandle[], fn: () => Promise<void>): Promise<{ ms: number; extra: number; up: number; down: number }> => {
    const base = await du(nodes);
    const peak = base.map((u) => u.total);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        (await du(nodes)).forEach((u, i) => (peak[i] = Math.max(peak[i]!, u.total)));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const c0 = await counts();
    const t0 = performance.now();
    try {
      await fn();
    } finally {
      sampling = false;
      await sampler;
    }
    const ms = performance.now() - t0;
    const c1 = await counts();
    const end = await du(nodes);
    const extra = Math.max(...nodes.map((_, i) => peak[i]! - base[i]!.total - (end[i]!.ctr - base[i]!.ctr)));
    const port = (n: LabNodeHandle) => String(n.port);
    return {
      ms,
      extra: Math.max(0, extra),
      up: sum(nodes.map((n) => c1[port(n)]!.up - c0[port(n)]!.up)),
      down: sum(nodes.map((n) => c1[port(n)]!.down - c0[port(n)]!.down)),
    };
  };

  // -------------------------------------------------------------------------------------------
  // Node state between runs.

  const nonEmpty = (s: string): string[] => s.split('\n').map((l) => l.trim()).filter(Boolean);
  /**
   * Removes every image but `keep` (and every lease: a failed run's), collects what is then
   * unreferenced, and empties the images dir and the /tmp copies.
   */
  const wipe = async (n: LabNodeHandle, keep: string[] = []): Promise<void> => {
    const refs = nonEmpty(await n.ctr(['images', 'ls', '-q'])).filter((r) => !keep.includes(r));
    if (refs.length) await n.ctr(['images', 'rm', '--sync', ...refs]);
    const leases = nonEmpty(await n.ctr(['leases', 'ls', '-q']));
    if (leases.length) await n.ctr(['leases', 'rm', '--sync', ...leases]);
    for (const d of [n.hostImagesDir, path.join(n.root, 'tmp')]) {
      for (const f of await readdir(d).catch(() => [])) await rm(path.join(d, f), { recursive: true, force: true });
    }
    await rm(remoteTmp(n), { force: true });
  };
  /**
   * Fresh: nothing on the nodes. Update: the old bundle and nothing else — imported straight from
   * the host once (unpacked, as a node running it has it), kept across the update's runs.
   */
  const prepare = async (s: Scenario, nodes: LabNodeHandle[]): Promise<void> => {
    const old = s.key === 'update' ? names(1) : [];
    for (const n of nodes) {
      await wipe(n, old);
      const held = new Set(nonEmpty(await n.ctr(['content', 'ls', '-q'])));
      const extra = [...held].filter((d) => !(s.key === 'update' && v1.has(d)));
      if (extra.length) throw new Error(`${n.name}: ${extra.length} blobs left after the wipe`);
      if (s.key === 'update' && held.size < v1.size) await n.ctr(['images', 'import', ...local(n), v1File]);
    }
    // the watcher sees the images dir emptied before an archive of the same name comes back
    await new Promise((r) => setTimeout(r, 600));
  };
  const check = async (s: Scenario, nodes: LabNodeHandle[], way: string): Promise<void> => {
    for (const n of nodes) {
      const have = new Set(nonEmpty(await n.ctr(['images', 'ls', '-q'])));
      const missing = s.names.filter((x) => !have.has(x));
      if (missing.length) throw new Error(`${way}: ${n.name} lacks ${missing.join(', ')}`);
    }
  };

  // -------------------------------------------------------------------------------------------
  // The ways.

  type Way = 'direct' | 'byHand' | 'byHandLoop' | 'imagesDir';
  const byHandOne = async (file: string, n: LabNodeHandle): Promise<void> => {
    await timeCmd(['scp', '-q', ...ssh, '-P', String(via(n)), file, `root@127.0.0.1:${remoteTmp(n)}`]);
    await timeCmd(['ssh', ...ssh, '-p', String(via(n)), 'root@127.0.0.1', n.ctrBinary, '-a', K3S_SOCKET, '-n', 'k8s.io', 'images', 'import', ...local(n), remoteTmp(n)]);
  };
  const holdfast = async (args: string[]): Promise<void> => {
    const r = await timeCmd([...HOLDFAST, ...args], { ...CLI_ENV, HOLDFAST_HOME: home });
    console.error(r.out.trim());
  };
  const ways: Record<Way, (s: Scenario, nodes: LabNodeHandle[]) => Promise<void>> = {
    direct: (s, nodes) => holdfast(['import', ...nodes.map((n) => n.name), s.file, '--direct', '--parallel', String(nodes.length)]),
    byHand: async (s, nodes) => void (await Promise.all(nodes.map((n) => byHandOne(s.file, n)))),
    byHandLoop: async (s, nodes) => {
      for (const n of nodes) await byHandOne(s.file, n);
    },
    imagesDir: (s, nodes) => holdfast(['import', ...nodes.map((n) => n.name), s.file, '--pin', '--parallel', String(nodes.length)]),
  };

  type Result = { ms: number[]; up: number[]; down: number[]; extra: number[] };
  const results = new Map<string, Result>();
  const keyOf = (s: Scenario, k: number, w: Way) => `${s.key}/${k}/${w}`;
  const nodeCounts = [...new Set([1, NODES])];
  const order: Way[] = ['direct', 'byHand', 'byHandLoop', 'imagesDir'];
  const waysFor = (k: number): Way[] => order.filter((w) => k > 1 || w !== 'byHandLoop');
  const t0 = performance.now();
  for (let r = 0; r < RUNS; r++) {
    for (const s of scenarios) {
      for (const k of nodeCounts) {
        const nodes = lab.nodes.slice(0, k);
        const list = waysFor(k);
        // each run starts with another way, so none always goes first after the lab's idle
        for (const w of [...list.slice(r % list.length), ...list.slice(0, r % list.length)]) {
          await prepare(s, nodes);
          const m = await measured(nodes, () => ways[w](s, nodes));
          await check(s, nodes, w);
          const res = results.get(keyOf(s, k, w)) ?? { ms: [], up: [], down: [], extra: [] };
          res.ms.push(m.ms);
          res.up.push(m.up);
          res.down.push(m.down);
          res.extra.push(m.extra);
          results.set(keyOf(s, k, w), res);
          console.error(
            `run ${r + 1}: ${s.key} → ${k} node(s), ${w}: ${(m.ms / 1000).toFixed(1)} s, ${(m.up / MiB).toFixed(1)} MiB up (${(m.up / (s.lacks * k)).toFixed(2)}× lacked), ` +
              `${(m.down / MiB).toFixed(2)} MiB down, peak extra disk ${(m.extra / MiB).toFixed(1)} MiB (${((100 * m.extra) / s.content).toFixed(1)} %)`,
          );
        }
      }
    }
  }
  const totalS = (performance.now() - t0) / 1000;
  for (const n of lab.nodes) await wipe(n);

  // -------------------------------------------------------------------------------------------
  // The table.

  const mib = (b: number): string => `${(b / MiB).toFixed(1)} MiB`;
  const med = (s: Scenario, k: number, w: Way) => {
    const r = results.get(keyOf(s, k, w))!;
    return { ms: median(r.ms), up: median(r.up), down: median(r.down), extra: Math.max(...r.extra) };
  };
  const WAY_LABEL: Record<Way, (k: number) => string> = {
    direct: () => '**`holdfast import --direct`**',
    byHand: (k) => (k > 1 ? '`scp` + `ssh node ctr images import --local`, all nodes at once' : '`scp` + `ssh node ctr images import --local`'),
    byHandLoop: () => 'the same, one node after the other',
    imagesDir: () => '`holdfast import --pin` (images dir, k3s imports)',
  };
  /** The faster of the by-hand ways (to many nodes: all at once or the loop): the unflattering reference. */
  const byHandMs = (s: Scenario, k: number): number => Math.min(...waysFor(k).filter((w) => w.startsWith('byHand')).map((w) => med(s, k, w).ms));
  const rows: string[] = [];
  for (const s of scenarios) {
    for (const k of nodeCounts) {
      const ref = byHandMs(s, k);
      for (const w of waysFor(k)) {
        const m = med(s, k, w);
        const what = `${s.key === 'fresh' ? 'fresh' : 'update'}, ${k} node${k === 1 ? '' : 's'}`;
        rows.push(
          `| ${what} | ${WAY_LABEL[w](k)} | ${(m.ms / 1000).toFixed(1)} s | ${(m.ms / ref).toFixed(2)}× | ${mib(m.up)} (${mib(m.down)} back) | ${(m.up / (s.lacks * k)).toFixed(2)}× | ${((100 * m.extra) / s.content).toFixed(1)} % (${mib(m.extra)}) |`,
        );
      }
    }
  }
  const [fresh, update] = scenarios as [Scenario, Scenario];
  const worst = (xs: number[]) => Math.max(...xs);
  const sendRatio = worst(nodeCounts.map((k) => med(update, k, 'direct').up / (update.lacks * k)));
  const timeRatio = worst(nodeCounts.map((k) => med(fresh, k, 'direct').ms / byHandMs(fresh, k)));
  const diskShare = worst(scenarios.flatMap((s) => nodeCounts.map((k) => med(s, k, 'direct').extra / s.content)));
  const verdict = (v: number, target: number, unit: (x: number) => string) =>
    v <= target ? `met (${unit(v)})` : `**missed**: ${unit(v)}, ${((v / target - 1) * 100).toFixed(0)} % over`;
  const x = (v: number) => `${v.toFixed(2)}×`;
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  const targets = `Targets (issue #35), direct delivery: an update sends ≤ 1.1× what a node lacks — ${verdict(sendRatio, 1.1, x)}; a fresh bundle takes ≤ 1.0× the time of scp + ctr import — ${verdict(timeRatio, 1.0, x)}${nodeCounts.length > 1 ? ` (the worse of 1 and ${NODES} nodes, each against the faster by-hand way)` : ''}; peak extra disk on a node ≤ 5 % of the image content — ${verdict(diskShare, 0.05, pct)}.`;
  const table = [
    `Bundles: ${IMAGES} images (OCI, gzip layers of pseudo-random bytes): one ${values['base-mib']} MiB base layer all share, a ${values['deps-mib']} MiB layer of each image's own, and a ${values['top-mib']} MiB top layer; the update replaces the top layers. Fresh: ${mib(fresh.content)} of image content, all lacking. Update: ${mib(update.content)}, of which a node lacks ${mib(update.lacks)} (${pct(update.lacks / update.content)}). ${RUNS === 1 ? 'One run' : `Median of ${RUNS} runs`} of each; containerd ${containerd}.`,
    '',
    '| bundle → nodes | way | wall time | × scp + ctr import (the faster by-hand way) | sent to the nodes (TCP) | × what they lacked | peak extra disk on a node (% of image content) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    targets,
    '',
    `Wall time: from the command's start to its exit (Holdfast: a new process reading the archive into its local spool, connecting, sending, unpacking, pinning, reading every reference back). By hand and --direct unpack the layers for CRI; k3s imports without unpacking (kubelet unpacks at the first pod start), once the archive has stayed unchanged for 2 s. "Back": bytes from the nodes. Extra disk: above what containerd keeps at the end — for the images dir the archive itself, left there by \`--pin\`; by hand the /tmp copy.`,
    '',
    `${machineLine()}; the whole run ${Math.round(totalS)} s. Lab nodes, Holdfast and the proxy share the machine's cores; the nodes' disk is the host's.`,
  ].join('\n');
  console.log(table);
  if (!values['no-docs']) {
    writeBenchSection('direct', table);
    // The README states the verdicts (a missed target with its measured floor).
    writeBenchSection('direct-summary', `${targets} [The table](docs/benchmarks.md#direct-delivery-only-what-a-node-lacks).`, path.join(root, 'README.md'));
  }
} finally {
  for (const w of watchers) await w.stop();
  proxy?.stdin?.end();
  proxy?.kill();
  await lab.stop();
  await rm(work, { recursive: true, force: true });
  if (home) await rm(home, { recursive: true, force: true });
}
