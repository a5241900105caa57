// bench/list: listing 1,000 image references on a lab node — Holdfast vs what an operator
// does by hand (`ssh node ctr -n k8s.io images ls`). Reports medians and the ratio.
//
//   npm run bench:list [-- --refs 1000 --runs 7]
import { median, timeCmd } from './util';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeImageArchive } from '../lab/fixtures';
import { emulateK3sStart } from '../lab/k3s';
import { startLab } from '../lab/lab';
import { ContainerdClient } from '../src/core/containerd/client';
import { NodeStore } from '../src/core/config/nodes';
import { NodeSession } from '../src/core/node/session';
import { inspectNode } from '../src/core/node/inspect';
import { IndexCache } from '../src/core/archives/scan';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';

const { values } = parseArgs({ options: { refs: { type: 'string', default: '1000' }, runs: { type: 'string', default: '7' } } });
const REFS = Number(values.refs);
const RUNS = Number(values.runs);
const root = path.resolve(import.meta.dirname, '..');



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
  const cd = new ContainerdClient({ target: `unix:${n.hostSocket}`, namespace: 'k8s.io' });
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
  const byHand: number[] = [];
  const byHandQ: number[] = [];
  const cliCold: number[] = [];
  const warm: number[] = [];
  let count = 0;

  for (let r = 0; r < RUNS; r++) {
    const h = await timeCmd([...sshArgv, 'ctr', '-a', '/run/k3s/containerd/containerd.sock', '-n', 'k8s.io', 'images', 'ls']);
    byHand.push(h.ms);
    byHandQ.push((await timeCmd([...sshArgv, 'ctr', '-a', '/run/k3s/containerd/containerd.sock', '-n', 'k8s.io', 'images', 'ls', '-q'])).ms);
    const c = await timeCmd([process.execPath, path.join(root, 'bin', 'holdfast.mjs'), 'images', 'bench', '--json'], { HOLDFAST_HOME: home });
    cliCold.push(c.ms);
    count = JSON.parse(c.out).length;
  }
  const session = await NodeSession.open(def);
  // What the app does on refresh: every reference with its pin and fate at the next start
  // (images dir scanned over SFTP, archive indexes from the local cache).
  const indexCache = new IndexCache(path.join(home, 'cache', 'archive-index'));
  const list = () => inspectNode(session, { indexCache });
  const coldInProcess = performance.now();
  await list();
  const coldMs = performance.now() - coldInProcess;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    await list();
    warm.push(performance.now() - t0);
  }
  await session.close();

  const result = {
    references: count,
    runs: RUNS,
    medianMs: {
      sshCtrImagesLs: Math.round(median(byHand)),
      sshCtrImagesLsQuiet: Math.round(median(byHandQ)),
      holdfastCliCold: Math.round(median(cliCold)),
      holdfastFirstListInSession: Math.round(coldMs),
      holdfastWarmList: Math.round(median(warm) * 10) / 10,
    },
  };
  const ratioCold = result.medianMs.sshCtrImagesLs / result.medianMs.holdfastCliCold;
  const ratioWarm = result.medianMs.sshCtrImagesLs / result.medianMs.holdfastWarmList;
  console.log(JSON.stringify({ ...result, ratio: { cliColdVsSshCtr: +ratioCold.toFixed(2), appWarmVsSshCtr: +ratioWarm.toFixed(1) } }, null, 2));
  console.log(
    `\n| ${count} references | ssh node ctr images ls | holdfast images --json (new process, new SSH) | Holdfast app, connected |\n|---|---|---|---|\n| median | ${result.medianMs.sshCtrImagesLs} ms | ${result.medianMs.holdfastCliCold} ms (${ratioCold.toFixed(2)}x) | ${result.medianMs.holdfastWarmList} ms (${ratioWarm.toFixed(0)}x) |`,
  );
} finally {
  await lab.stop();
}
