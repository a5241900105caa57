// bench/upload: pushing one large archive to a lab node — Holdfast's uploadArchive (SHA-256
// computed on the laptop and verified on the node before the rename) vs OpenSSH scp, and vs
// scp followed by `ssh node sha256sum` (the same guarantee by hand). Medians of N runs, plus the
// Holdfast process's RSS growth during the send, to show memory stays flat. Three ways Holdfast
// has sent, each run in turn with scp and scp + sha256sum, so the ratios compare the same box at
// the same load: the first (pipelined SFTP over ssh2, `sha256sum` on the node after the
// transfer: verifyAfterSending), the second (SFTP, the node hashing while it is sent:
// transport 'sftp'), and the default now (the bytes through the machine's OpenSSH client,
// upload/openssh.ts, hashed on the node by the probe's hasher once written). --rss-mib N adds
// one default upload of an N MiB file for the RSS figure (e.g. 4096). The table goes into the
// bench:upload section of docs/benchmarks.md.
//
//   npx tsx bench/upload.ts [--mib 1024] [--runs 3] [--inflight 16] [--rss-mib 0]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, rm, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startLab } from '../lab/lab';
import { NodeSession } from '../src/core/node/session';
import { uploadArchive } from '../src/core/usecases/upload';
import { labNodeDef } from '../test/integration/support';
import { machineLine, writeBenchSection } from './doc';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '1024' },
    runs: { type: 'string', default: '3' },
    inflight: { type: 'string', default: '16' },
    'rss-mib': { type: 'string', default: '0' },
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

/** A random file of `mib` MiB in /tmp, made once and reused across runs. */
async function localFile(mib = MIB): Promise<string> {
  const SIZE = mib * 1024 * 1024;
  const file = `/tmp/hf-bench-upload-${mib}MiB.bin`;
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

const RSS_MIB = Number(values['rss-mib']);
const file = await localFile();
const lab = await startLab({ nodes: ['bench'] });
try {
  const n = lab.node('bench');
  const ssh = ['-i', lab.clientKey, '-o', `UserKnownHostsFile=${lab.knownHosts}`, '-o', 'BatchMode=yes'];
  const clean = () => rm(n.hostImagesDir, { recursive: true, force: true }).then(() => undefined);
  const session = await NodeSession.open(labNodeDef(lab, n));
  const tools = await session.hashTools();

  type Run = { total: number; send: number; rss: number; nodeHash: string };
  type Way = 'first' | 'sftp' | 'now';
  const holdfast = async (src: string, bytes: number, name: string, way: Way): Promise<Run> => {
    await clean();
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let sendStart = 0;
    let sendEnd = 0;
    const t0 = performance.now();
    const r = await uploadArchive(session, src, {
      remoteName: name,
      inflight: INFLIGHT,
      verifyAfterSending: way === 'first',
      transport: way === 'now' ? 'auto' : 'sftp',
      onProgress: (p) => {
        if (p.phase === 'uploading' && !sendStart) sendStart = performance.now();
        if (p.phase === 'verifying' && !sendEnd) sendEnd = performance.now();
      },
    });
    const total = performance.now() - t0;
    clearInterval(sampler);
    if (r.bytesSent !== bytes) throw new Error(`sent ${r.bytesSent} bytes`);
    if (r.transport !== (way === 'now' ? 'openssh' : 'sftp')) throw new Error(`${way}: sent by ${r.transport}`);
    return { total, send: sendEnd - sendStart, rss: peak - base, nodeHash: r.nodeHash };
  };

  const hfBefore: Run[] = [];
  const hfSftp: Run[] = [];
  const hfAfter: Run[] = [];
  const scp: number[] = [];
  const scpSum: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const b = await holdfast(file, SIZE, `hf-before-${i}.tar`, 'first');
    hfBefore.push(b);
    const f = await holdfast(file, SIZE, `hf-sftp-${i}.tar`, 'sftp');
    hfSftp.push(f);
    const a = await holdfast(file, SIZE, `hf-after-${i}.tar`, 'now');
    hfAfter.push(a);
    await clean();
    await run(['ssh', ...ssh, '-p', String(n.port), 'root@127.0.0.1', 'mkdir', '-p', REMOTE_DIR]);
    const dest = `${REMOTE_DIR}/scp-${i}.tar`;
    const c = await run(['scp', '-q', ...ssh, '-P', String(n.port), file, `root@127.0.0.1:${dest}`]);
    const d = await run(['ssh', ...ssh, '-p', String(n.port), 'root@127.0.0.1', 'sha256sum', '--', dest]);
    scp.push(c.ms);
    scpSum.push(c.ms + d.ms);
    console.error(
      `run ${i + 1}: SFTP + sha256sum after ${fmt(mbps(SIZE, b.total))} MB/s (${b.nodeHash}), SFTP hashed while sending ${fmt(mbps(SIZE, f.total))} MB/s (sending ${fmt(mbps(SIZE, f.send))} MB/s), ` +
        `OpenSSH client ${fmt(mbps(SIZE, a.total))} MB/s (${a.nodeHash}; RSS +${fmt(a.rss / 2 ** 20)} MiB), ` +
        `scp ${fmt(mbps(SIZE, c.ms))} MB/s, scp + ssh sha256sum ${fmt(mbps(SIZE, c.ms + d.ms))} MB/s`,
    );
  }
  let big: Run | null = null;
  if (RSS_MIB > 0) {
    const bigFile = await localFile(RSS_MIB);
    big = await holdfast(bigFile, RSS_MIB * 1024 * 1024, 'hf-big.tar', 'now');
    console.error(`${RSS_MIB} MiB: ${fmt(mbps(RSS_MIB * 1024 * 1024, big.total))} MB/s verified, RSS +${fmt(big.rss / 2 ** 20)} MiB`);
  }
  await session.close();
  await clean();

  const rate = (xs: Run[], k: 'total' | 'send') => mbps(SIZE, median(xs.map((x) => x[k])));
  const before = rate(hfBefore, 'total');
  const sftp = rate(hfSftp, 'total');
  const after = rate(hfAfter, 'total');
  const send = rate(hfSftp, 'send');
  const scpR = mbps(SIZE, median(scp));
  const scpSumR = mbps(SIZE, median(scpSum));
  const rss = Math.max(...hfAfter.map((x) => x.rss), ...(big ? [big.rss] : [])) / 2 ** 20;
  const rssSftp = Math.max(...hfSftp.map((x) => x.rss)) / 2 ** 20;
  const x = (v: number) => `${(v / scpR).toFixed(2)}×`;
  const table = [
    `| ${MIB} MiB, median of ${RUNS} | first: SFTP, \`sha256sum\` on the node after sending | SFTP, hashed on the node while sending (\`${tools.hasher ?? 'none'}\`) | SFTP sending alone | now: OpenSSH client, hashed on the node once written (\`${tools.hasher ?? 'none'}\`) | \`scp\` | \`scp\` + \`ssh node sha256sum\` | RSS growth while sending (now / SFTP) |`,
    '|---|---|---|---|---|---|---|---|',
    `| MB/s | ${fmt(before)} | ${fmt(sftp)} | ${fmt(send)} | ${fmt(after)} | ${fmt(scpR)} | ${fmt(scpSumR)} | +${rss.toFixed(0)} MiB / +${rssSftp.toFixed(0)} MiB${big ? ` (${RSS_MIB / 1024} GiB, now: +${(big.rss / 2 ** 20).toFixed(0)} MiB)` : ''} |`,
    `| × scp | ${x(before)} | ${x(sftp)} | ${x(send)} | **${x(after)}** | 1.00× | ${x(scpSumR)} | |`,
    '',
    `${machineLine()}; SFTP inflight ${INFLIGHT}; the lab node's hasher from the probe: ${tools.hasher ?? 'none'}${tools.follow ? ', can follow a growing file' : ''}. The OpenSSH client's own memory is not in the RSS column: it reads the file in fixed buffers.`,
  ].join('\n');
  console.log(table);
  writeBenchSection('upload', table);
} finally {
  await lab.stop();
}
