// bench/list: listing 1,000 image references on a lab node — Holdfast vs what an operator
// does by hand (`ssh node ctr -n k8s.io images ls`, and its `-q` form that prints names only).
// Then the same node as a k3s server (issue #46): `holdfast images` also reads the cluster's
// workloads there, against `ssh node 'ctr -n k8s.io images ls -q; k3s kubectl get pods -A -o json'`.
// Every run starts a new `holdfast` process (new SSH connection) for each way Holdfast ships:
// the npm bundle (out/cli, built here), the standalone executable (out/exe, built here), and
// the TypeScript sources through tsx (the old start-up, for reference); plus their cold
// `--help` and `node ls`. Reports medians and the ratios.
//
//   npm run bench:list [-- --refs 1000 --runs 7 --no-docs]
// Writes its tables into docs/benchmarks.md (section bench:list) unless --no-docs.
import { median, timeCmd } from './util';
import { machineLine, writeBenchSection } from './doc';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeImageArchive } from '../lab/fixtures';
import { emulateK3sStart } from '../lab/k3s';
import { workloadList } from '../lab/workloads';
import { startLab } from '../lab/lab';
import { GrpcContainerdClient } from '../src/core/containerd/client';
import { NodeStore } from '../src/core/config/nodes';
import { NodeSession } from '../src/core/node/session';
import { readInventory } from '../src/core/usecases/inventory';
import { IndexCache } from '../src/core/archives/scan';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
// @ts-expect-error -- plain .mjs build scripts, no type declarations
import { buildCli } from '../scripts/build-cli.mjs';
// @ts-expect-error -- plain .mjs build scripts, no type declarations
import { buildExe } from '../scripts/build-cli-exe.mjs';
import { buildFloor } from './floor/build';

const { values } = parseArgs({ options: { refs: { type: 'string', default: '1000' }, runs: { type: 'string', default: '7' }, 'no-docs': { type: 'boolean', default: false } } });
const REFS = Number(values.refs);
const RUNS = Number(values.runs);
const root = path.resolve(import.meta.dirname, '..');

await buildCli();
const exe = await buildExe(path.join(mkdtempSync(path.join(os.tmpdir(), 'hf-bench-exe-')), 'holdfast'));
const floor = await buildFloor();
/** argv and env of each way to run `holdfast`. */
const ways = {
  bundle: { argv: [process.execPath, path.join(root, 'bin', 'holdfast.mjs')], env: { HOLDFAST_CLI: 'bundle' } },
  exe: { argv: [exe], env: {} },
  tsx: { argv: [process.execPath, path.join(root, 'bin', 'holdfast.mjs')], env: { HOLDFAST_CLI: 'tsx' } },
} as const;
type Way = keyof typeof ways;

const lab = await startLab({ nodes: ['bench'] });
try {
  const n = lab.node('bench');
  const { images } = await writeImageArchive(path.join(n.hostImagesDir, 'base.tar'), {
    format: 'oci',
    images: [
      { name: 'docker.io/library/base:1', platforms: ['linux/amd64', 'linux/arm64'] },
      { name: 'docker.io/library/tool:1' },
    ],
  });
  await emulateK3sStart(n);
  // Fill the store straight through the node's socket: REFS references over the two images,
  // with a mix of pin labels, as a busy edge node has.
  const cd = new GrpcContainerdClient({ target: `unix:${n.hostSocket}`, namespace: 'k8s.io' });
  const existing = (await cd.listImages()).length;
  const targets = await Promise.all(images.map((i) => cd.getImage(i.name)));
  const pins: Record<string, string>[] = [{ 'io.cri-containerd.pinned': 'pinned' }, { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' }, {}];
  for (let i = existing; i < REFS; i++) {
    const t = targets[i % targets.length]!;
    await cd.createImage({ name: `registry.local/bench/app-${i}:v${i % 7}`, labels: pins[i % 3]!, target: t.target });
  }
  cd.close();

  const home = mkdtempSync(path.join(os.tmpdir(), 'hf-bench-'));
  await new NodeStore(home).add({ name: 'bench', host: n.host, port: n.port, identity: lab.clientKey, knownHosts: lab.knownHosts });
  const def = await new NodeStore(home).get('bench');

  const sshArgv = ['ssh', '-i', lab.clientKey, '-p', String(n.port), '-o', `UserKnownHostsFile=${lab.knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', 'root@127.0.0.1'];
  const ctr = [...sshArgv, 'ctr', '-a', '/run/k3s/containerd/containerd.sock', '-n', 'k8s.io', 'images', 'ls'];
  const byHand: number[] = [];
  const byHandQ: number[] = [];
  const imagesMs: Record<Way, number[]> = { bundle: [], exe: [], tsx: [] };
  const help: Record<Way, number[]> = { bundle: [], exe: [], tsx: [] };
  const nodeLs: Record<Way, number[]> = { bundle: [], exe: [], tsx: [] };
  const warm: number[] = [];
  // What this machine charges any process, in the same run: a bare Node start, a bare SSH
  // session, and the first touch of a fresh memory page (a Node CLI touches thousands, OpenSSH
  // hundreds). On some virtual machines the last costs 15 µs instead of well under 1, which
  // moves every ratio below (the bundle's start maps and fills ~40 MiB).
  const nodeBare: number[] = [];
  // Some machines (this sandbox among them) set NODE_EXTRA_CA_CERTS: every Node start then parses
  // that CA bundle before any script runs, though Holdfast makes no TLS connection. Measured
  // without it too, so the table shows what a laptop without the variable pays.
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  const nodeBareNoCa: number[] = [];
  const imagesNoCa: number[] = [];
  const sshTrue: number[] = [];
  // The floor of any Node CLI on ssh2 (bench/floor): connect, check the host key, authenticate,
  // run `true`, close — built and started like the CLI bundle.
  const floorArgv = [process.execPath, floor, 'true', n.host, String(n.port), 'root', lab.clientKey, n.hostKeyFingerprint];
  const ssh2True: number[] = [];
  // Holdfast's own data path with nothing on top (bench/floor/listNames.ts): its SSH code, the
  // tunnel and the gRPC list, printing the names `-q` prints — no CLI, no probe, no fates.
  const namesArgv = [process.execPath, floor, 'names', n.host, String(n.port), 'root', lab.clientKey, lab.knownHosts, def.socket];
  const namesOnly: number[] = [];
  const pageTouch: number[] = [];
  const touch = [process.execPath, '-e', 'const t = process.hrtime.bigint(); Buffer.alloc(64 << 20).fill(1); console.log(Number(process.hrtime.bigint() - t) / 1e3 / 16384)'];
  let count = 0;
  const cli = (w: Way, args: string[]) => timeCmd([...ways[w].argv, ...args], { HOLDFAST_HOME: home, ...ways[w].env });

  // Not timed: each way's first run of each command, which writes its V8 code cache (and the
  // standalone file's embedded files): every later start, what an operator sees, reads them.
  for (const w of Object.keys(ways) as Way[]) for (const args of [['images', 'bench', '--json'], ['--help'], ['node', 'ls']]) await cli(w, args);
  await timeCmd(floorArgv);
  const printed = (await timeCmd(namesArgv)).out.split('\n').filter(Boolean).length;
  if (printed !== REFS) throw new Error(`bench/floor names printed ${printed} names, not ${REFS}`);
  for (let r = 0; r < RUNS; r++) {
    byHand.push((await timeCmd(ctr)).ms);
    byHandQ.push((await timeCmd([...ctr, '-q'])).ms);
    nodeBare.push((await timeCmd([process.execPath, '-e', '0'])).ms);
    if (extraCa) {
      nodeBareNoCa.push((await timeCmd([process.execPath, '-e', '0'], { NODE_EXTRA_CA_CERTS: undefined })).ms);
      imagesNoCa.push((await timeCmd([...ways.bundle.argv, 'images', 'bench', '--json'], { HOLDFAST_HOME: home, ...ways.bundle.env, NODE_EXTRA_CA_CERTS: undefined })).ms);
    }
    sshTrue.push((await timeCmd([...sshArgv, 'true'])).ms);
    ssh2True.push((await timeCmd(floorArgv)).ms);
    namesOnly.push((await timeCmd(namesArgv)).ms);
    pageTouch.push(Number((await timeCmd(touch)).out));
    for (const w of Object.keys(ways) as Way[]) {
      const c = await cli(w, ['images', 'bench', '--json']);
      imagesMs[w].push(c.ms);
      count = JSON.parse(c.out).length;
      help[w].push((await cli(w, ['--help'])).ms);
      nodeLs[w].push((await cli(w, ['node', 'ls'])).ms);
    }
  }
  const session = await NodeSession.open(def);
  // What the app does on refresh: every reference with its pin and fate at the next start
  // (images dir scanned over SFTP, archive indexes from the local cache).
  const indexCache = new IndexCache(path.join(home, 'cache', 'archive-index'));
  const list = () => readInventory(session, { indexCache });
  const coldInProcess = performance.now();
  await list();
  const coldMs = performance.now() - coldInProcess;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    await list();
    warm.push(performance.now() - t0);
  }
  await session.close();

  // The node as a k3s server: its kubectl answers a cluster of SERVER_DEPLOYMENTS Deployments, two
  // pods each, each Deployment with an image of its own (imported as an operator's `ctr images
  // import` does: each its own image id, as on a real site). `holdfast images` then reads the
  // workloads too, on the same SSH connection, while containerd lists; a technician asks for both
  // in one SSH command. Each run also times `holdfast images` on the same node without k3s (no
  // cluster to read), so what the workloads read adds is measured in the same runs.
  const SERVER_DEPLOYMENTS = 50;
  const services = Array.from({ length: SERVER_DEPLOYMENTS }, (_, i) => `registry.local/bench/svc-${i}:1`);
  const servicesTar = path.join(lab.dir, 'bench-services.tar');
  await writeImageArchive(servicesTar, { format: 'docker', images: services.map((name) => ({ name })) });
  await n.ctr(['images', 'import', ...(n.containerdLine === '2' ? ['--local'] : []), servicesTar]);
  const asServer = () =>
    n.installDistroBinary('k3s', 'v1.34.10+k3s1', {
      workloads: workloadList({
        nodes: [{ name: 'bench', role: 'server', addresses: ['127.0.0.1'] }],
        deployments: services.map((image, i) => ({ name: `svc-${i}`, image, replicas: 2, node: 'bench' })),
      }),
    });
  const serverByHand = [...sshArgv, 'ctr -a /run/k3s/containerd/containerd.sock -n k8s.io images ls -q; k3s kubectl get pods -A -o json'];
  const serverByHandMs: number[] = [];
  const serverImagesMs: number[] = [];
  const plainImagesMs: number[] = [];
  await asServer();
  const serverOut = JSON.parse((await cli('bundle', ['images', 'bench', '--json'])).out) as { need?: { workloads: unknown[] } }[]; // untimed, as above
  const serverRefs = serverOut.length;
  if (serverOut.filter((r) => (r.need?.workloads.length ?? 0) > 0).length < SERVER_DEPLOYMENTS) throw new Error('bench: holdfast images on the server node did not find every Deployment\'s image needed: the workloads were not read');
  if (!(await timeCmd(serverByHand)).out.includes('"kind": "List"')) throw new Error('bench: the by-hand command printed no kubectl List');
  for (let r = 0; r < RUNS; r++) {
    await asServer();
    serverByHandMs.push((await timeCmd(serverByHand)).ms);
    serverImagesMs.push((await cli('bundle', ['images', 'bench', '--json'])).ms);
    await n.installDistroBinary('k3s', null);
    plainImagesMs.push((await cli('bundle', ['images', 'bench', '--json'])).ms);
  }

  const med = (xs: number[]) => Math.round(median(xs));
  const perWay = (m: Record<Way, number[]>) => ({ bundle: med(m.bundle), exe: med(m.exe), tsx: med(m.tsx) });
  const result = {
    references: count,
    runs: RUNS,
    load: os.loadavg().map((l) => +l.toFixed(1)),
    medianMs: {
      sshCtrImagesLs: med(byHand),
      sshCtrImagesLsQuiet: med(byHandQ),
      holdfastImagesCold: perWay(imagesMs),
      holdfastHelp: perWay(help),
      holdfastNodeLs: perWay(nodeLs),
      holdfastFirstListInSession: Math.round(coldMs),
      holdfastWarmList: Math.round(median(warm) * 10) / 10,
      nodeBare: med(nodeBare),
      ...(extraCa ? { nodeBareWithoutExtraCaCerts: med(nodeBareNoCa), holdfastImagesColdWithoutExtraCaCerts: med(imagesNoCa) } : {}),
      sshTrue: med(sshTrue),
      nodeSsh2True: med(ssh2True),
      holdfastDataPathNamesOnly: med(namesOnly),
      serverSshCtrAndKubectl: med(serverByHandMs),
      serverHoldfastImagesCold: med(serverImagesMs),
      serverSameNodeWithoutK3s: med(plainImagesMs),
    },
    pageTouchMicros: Math.round(median(pageTouch) * 100) / 100,
  };
  const m = result.medianMs;
  const x = (byHandMs: number, ms: number) => `${(byHandMs / ms).toFixed(2)}×`;
  const signed = (ms: number) => (ms < 0 ? `−${-ms}` : `+${ms}`);
  console.log(JSON.stringify(result, null, 2));
  const table = [
    `| ${count} references, median of ${RUNS} | \`ssh node ctr images ls -q\` | \`ssh node ctr images ls\` | \`holdfast images --json\`, npm bundle | standalone file | sources via tsx | the app, connected (refresh) |`,
    '|---|---|---|---|---|---|---|',
    `| new process, new SSH connection | ${m.sshCtrImagesLsQuiet} ms | ${m.sshCtrImagesLs} ms | ${m.holdfastImagesCold.bundle} ms (${x(m.sshCtrImagesLsQuiet, m.holdfastImagesCold.bundle)} of \`-q\`'s speed) | ${m.holdfastImagesCold.exe} ms (${x(m.sshCtrImagesLsQuiet, m.holdfastImagesCold.exe)}) | ${m.holdfastImagesCold.tsx} ms (${x(m.sshCtrImagesLsQuiet, m.holdfastImagesCold.tsx)}) | ${m.holdfastWarmList} ms |`,
    '',
    `| a k3s server node (${serverRefs} references, ${SERVER_DEPLOYMENTS} Deployments), median of ${RUNS} | \`ssh node 'ctr images ls -q; k3s kubectl get pods -A -o json'\` | \`holdfast images --json\`, npm bundle | against by hand (target ≤ 1.0×) | the same node without k3s |`,
    '|---|---|---|---|---|',
    `| new process, new SSH connection | ${m.serverSshCtrAndKubectl} ms | ${m.serverHoldfastImagesCold} ms | ${(m.serverHoldfastImagesCold / m.serverSshCtrAndKubectl).toFixed(2)}× the time | ${m.serverSameNodeWithoutK3s} ms (difference: ${signed(m.serverHoldfastImagesCold - m.serverSameNodeWithoutK3s)} ms) |`,
    '',
    `| cold start, median of ${RUNS} | npm bundle | standalone file | sources via tsx |`,
    '|---|---|---|---|',
    `| \`holdfast --help\` | ${m.holdfastHelp.bundle} ms | ${m.holdfastHelp.exe} ms | ${m.holdfastHelp.tsx} ms |`,
    `| \`holdfast node ls\` | ${m.holdfastNodeLs.bundle} ms | ${m.holdfastNodeLs.exe} ms | ${m.holdfastNodeLs.tsx} ms |`,
    '',
    `The machine, same run: \`node -e 0\` ${m.nodeBare} ms, \`ssh node true\` ${m.sshTrue} ms, first touch of a new 4 KiB page ${result.pageTouchMicros} µs. The floor of any Node CLI on ssh2 (bench/floor: connect, check the host key, authenticate, run \`true\`, close; built and started like the CLI bundle): ${m.nodeSsh2True} ms, ${x(m.sshCtrImagesLsQuiet, m.nodeSsh2True)} of \`ctr images ls -q\`'s speed before it lists anything. Holdfast's own data path printing only the names, as \`-q\` does (bench/floor/listNames.ts: its SSH code, the tunnel, the gRPC list; no CLI, no probe, no images dir, no fates): ${m.holdfastDataPathNamesOnly} ms, ${x(m.sshCtrImagesLsQuiet, m.holdfastDataPathNamesOnly)}.`,
    ...(extraCa
      ? [
          '',
          `This machine sets \`NODE_EXTRA_CA_CERTS\` (${extraCa}): every Node start parses that CA bundle first, though Holdfast makes no TLS connection. Without the variable, same run: \`node -e 0\` ${m.nodeBareWithoutExtraCaCerts} ms, \`holdfast images --json\` (npm bundle) ${m.holdfastImagesColdWithoutExtraCaCerts} ms (${x(m.sshCtrImagesLsQuiet, m.holdfastImagesColdWithoutExtraCaCerts!)} of \`-q\`'s speed).`,
        ]
      : []),
    '',
    `Measured by \`npm run bench:list\` on ${machineLine()}.`,
  ].join('\n');
  console.log(`\n${table}`);
  if (!values['no-docs']) writeBenchSection('list', table);
} finally {
  await lab.stop();
}
