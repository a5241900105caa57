// bench/upload: pushing one large archive to a lab node — Holdfast's uploadArchive (pipelined
// SFTP, SHA-256 computed while sending and verified on the node) vs OpenSSH scp, and vs
// scp followed by `ssh node sha256sum` (the same guarantee by hand). Medians of N runs, plus the
// Holdfast process's RSS growth during the send, to show memory stays flat.
//
//   npx tsx bench/upload.ts [--mib 1024] [--runs 3] [--inflight 16]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, rm, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startLab } from '../lab/lab';
import { NodeSession } from '../src/core/node/session';
import { uploadArchive } from '../src/core/upload';
import { labNodeDef } from '../test/integration/support';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '1024' },
    runs: { type: 'string', default: '3' },
    inflight: { type: 'string', default: '16' },
  },
});
const MIB = Number(values.mib);
const RUNS = Number(values.runs);
const INFLIGHT = Number(values.inflight);
const SIZE = MIB * 1024 * 1024;
const REMOTE_DIR = '/var/lib/rancher/k3s/agent/images';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const fmt = (n: number) => n.toFixed(0);

function run(argv: string[]): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${argv[0]}: ${err}`))));
  });
}

/** A random file of SIZE bytes in /tmp, made once and reused across runs. */
async function localFile(): Promise<string> {
  const file = `/tmp/hf-bench-upload-${MIB}MiB.bin`;
  const st = await stat(file).catch(() => null);
  if (st?.size === SIZE) return file;
  console.error(`generating ${file} …`);
  const fh = await open(file, 'w');
  for (let done = 0; done < SIZE; ) {
    const n = Math.min(16 * 1024 * 1024, SIZE - done);
    await fh.write(randomBytes(n), 0, n, done);
    done += n;
  }
  await fh.close();
  return file;
}

const file = await localFile();
const lab = await startLab({ nodes: ['bench'] });
try {
  const n = lab.node('bench');
  const ssh = ['-i', lab.clientKey, '-o', `UserKnownHostsFile=${lab.knownHosts}`, '-o', 'BatchMode=yes'];
  const clean = () => rm(n.hostImagesDir, { recursive: true, force: true }).then(() => undefined);

  const hf: { total: number; send: number; rss: number }[] = [];
  const session = await NodeSession.open(labNodeDef(lab, n));
  for (let i = 0; i < RUNS; i++) {
    await clean();
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let sendStart = 0;
    let sendEnd = 0;
    const t0 = performance.now();
    const r = await uploadArchive(session, file, {
      remoteName: `hf-${i}.tar`,
      inflight: INFLIGHT,
      onProgress: (p) => {
        if (p.phase === 'uploading' && !sendStart) sendStart = performance.now();
        if (p.phase === 'verifying' && !sendEnd) sendEnd = performance.now();
      },
    });
    const total = performance.now() - t0;
    clearInterval(sampler);
    if (r.bytesSent !== SIZE) throw new Error(`sent ${r.bytesSent} bytes`);
    hf.push({ total, send: sendEnd - sendStart, rss: peak - base });
    console.error(`holdfast run ${i + 1}: ${fmt(mbps(SIZE, total))} MB/s end to end, ${fmt(mbps(SIZE, sendEnd - sendStart))} MB/s sending, RSS +${fmt((peak - base) / 2 ** 20)} MiB`);
  }
  await session.close();

  const scp: number[] = [];
  const scpSum: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await clean();
    await run(['ssh', ...ssh, '-p', String(n.port), 'root@127.0.0.1', 'mkdir', '-p', REMOTE_DIR]);
    const dest = `${REMOTE_DIR}/scp-${i}.tar`;
    const a = await run(['scp', '-q', ...ssh, '-P', String(n.port), file, `root@127.0.0.1:${dest}`]);
    const b = await run(['ssh', ...ssh, '-p', String(n.port), 'root@127.0.0.1', 'sha256sum', '--', dest]);
    scp.push(a.ms);
    scpSum.push(a.ms + b.ms);
    console.error(`scp run ${i + 1}: ${fmt(mbps(SIZE, a.ms))} MB/s; with ssh sha256sum ${fmt(mbps(SIZE, a.ms + b.ms))} MB/s`);
  }
  await clean();

  const hfTotal = mbps(SIZE, median(hf.map((x) => x.total)));
  const hfSend = mbps(SIZE, median(hf.map((x) => x.send)));
  const scpR = mbps(SIZE, median(scp));
  const scpSumR = mbps(SIZE, median(scpSum));
  const rss = Math.max(...hf.map((x) => x.rss)) / 2 ** 20;
  console.log(`upload of ${MIB} MiB to a lab node over loopback, median of ${RUNS} runs (inflight ${INFLIGHT}):`);
  console.log(`  Holdfast uploadArchive (hash while sending + sha256sum on the node + rename): ${fmt(hfTotal)} MB/s`);
  console.log(`    of which the SFTP send alone:                                            ${fmt(hfSend)} MB/s`);
  console.log(`  OpenSSH scp:                                                                 ${fmt(scpR)} MB/s  (Holdfast/scp ${(hfTotal / scpR).toFixed(2)}×, send only ${(hfSend / scpR).toFixed(2)}×)`);
  console.log(`  scp + ssh sha256sum (like for like):                                         ${fmt(scpSumR)} MB/s  (Holdfast ${(hfTotal / scpSumR).toFixed(2)}×)`);
  console.log(`  Holdfast RSS growth during the send (max − baseline):                         ${rss.toFixed(1)} MiB`);
  console.log('');
  console.log('| upload 1 file | Holdfast (verified) | send only | scp | scp + sha256sum | Holdfast / (scp + sha256sum) | RSS growth |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  console.log(
    `| ${MIB} MiB, loopback | ${fmt(hfTotal)} MB/s | ${fmt(hfSend)} MB/s | ${fmt(scpR)} MB/s | ${fmt(scpSumR)} MB/s | ${(hfTotal / scpSumR).toFixed(2)}× | +${rss.toFixed(0)} MiB |`,
  );
} finally {
  await lab.stop();
}
