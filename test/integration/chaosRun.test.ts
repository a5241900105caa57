// A chaos run (issue #51, "Done when"): faults drawn at random, from a fixed seed so a failure
// can be replayed ($HOLDFAST_CHAOS_SEED), against one real lab node reached through a loopback
// proxy that can cut the link: the connection cut at a random byte of an upload, containerd
// stopped under a command, FIFOs and broken links in the images dir, the images dir's own path
// broken, the node's disk full, and the local audit log on a full disk. After every round:
//   - the exit code is true to the outcome (0 only when the work is done and verified on the
//     node; otherwise non-zero with a message);
//   - nothing is left running on the node (sshd's sessions for this node all end);
//   - nothing changed without a record (a refused pin left the labels as they were; a pin that
//     succeeded is in the audit log).
// Bounded: ROUNDS rounds, each with its own time limit; one line of figures at the end.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { runCli, sha256File, tempHome, type CliResult } from './support';
import { cuttingProxy, type CuttingProxy } from './cuttingProxy';

const MiB = 1024 * 1024;
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const NODE = 'cr1';
const IMAGE = 'registry.local/chaos/run:1';
const ROUNDS = 14;
const SEED = Number(process.env.HOLDFAST_CHAOS_SEED ?? 51);
const FAULTS = ['cut', 'containerd', 'fifos', 'links', 'broken-dir', 'node-disk-full', 'local-disk-full'] as const;
type Fault = (typeof FAULTS)[number];

/** mulberry32: a small seeded generator, so a run can be replayed exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let lab: Lab;
let n: LabNodeHandle;
let home: string;
let local: string;
let bundle: string;
let bundleSha: string;
let proxy: CuttingProxy;

/** Every process below the node's sshd listener: its live sessions and what they run. */
function sessionsOnNode(): string[] {
  const out = execFileSync('ss', ['-Htlnp', `( sport = :${n.port} )`], { encoding: 'utf8' });
  const roots = [...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
  const found: string[] = [];
  const walk = (pid: number) => {
    let kids = '';
    try {
      kids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
    } catch {
      return; // pgrep exits 1 when there are none
    }
    for (const k of kids.split('\n').filter(Boolean).map(Number)) {
      let comm = '?';
      try {
        comm = readFileSync(`/proc/${k}/comm`, 'utf8').trim();
      } catch {
        continue; // gone meanwhile
      }
      found.push(`${k} ${comm}`);
      walk(k);
    }
  };
  for (const r of [...new Set(roots)]) walk(r);
  return found;
}

/** Waits (bounded) until no session of the node is left; returns what is still there. */
async function leftRunning(): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const left = sessionsOnNode();
    if (left.length === 0) return [];
    await new Promise((r) => setTimeout(r, 100));
  }
  return sessionsOnNode();
}

const cli = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(args, { HOLDFAST_HOME: home, ...env }, 180_000);
const said = (r: CliResult) => `exit ${r.code}\n${r.stdout}${r.stderr}`;
const finalFile = () => path.join(n.hostImagesDir, path.basename(bundle));
const inNodeImagesDir = '/var/lib/rancher/k3s/agent/images';

beforeAll(async () => {
  lab = await startLab({ nodes: [NODE] });
  n = lab.node(NODE);
  home = tempHome();
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-chaos-run-'));
  bundle = path.join(local, 'chaos-run.tar');
  await writeImageArchive(bundle, { format: 'oci', images: [{ name: 'registry.local/chaos/bundle:1', layerBytes: 12 * MiB }] });
  bundleSha = await sha256File(bundle);
  // The image the pin rounds work on, imported and pinned by the emulated k3s.
  await writeImageArchive(path.join(n.hostImagesDir, 'run.tar'), { format: 'oci', images: [{ name: IMAGE }] });
  await emulateK3sStart(n);
  proxy = await cuttingProxy(n.port);
  const kh = path.join(local, 'known_hosts');
  execFileSync('sh', ['-c', 'printf "%s\\n" "$1" > "$2"', 'sh', `[127.0.0.1]:${proxy.port} ${n.knownHostsLine.split(' ').slice(1).join(' ')}`, kh]);
  const add = await cli(['node', 'add', NODE, '--host', '127.0.0.1', '--port', String(proxy.port), '--identity', lab.clientKey, '--known-hosts', kh]);
  expect(add.code, said(add)).toBe(0);
});

afterAll(async () => {
  await proxy?.close();
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

/** One fault, its command(s), and what the outcome must be. Returns a word for the tally. */
async function round(fault: Fault, draw: () => number): Promise<string> {
  const dir = n.hostImagesDir;
  switch (fault) {
    case 'cut': {
      rmSync(finalFile(), { force: true });
      // Anywhere from the handshake to a little past the last byte: a cut after the end must still be 0.
      proxy.cutAfter = Math.floor(1024 + draw() * 1.1 * statSync(bundle).size);
      const r = await cli(['upload', NODE, bundle], { HOLDFAST_OPENSSH: 'off' });
      proxy.cutAfter = null;
      if (r.code === 0) {
        expect(await sha256File(finalFile()), said(r)).toBe(bundleSha);
      } else {
        expect(r.code, said(r)).toBe(1); // the connection's code, never a refusal or a success
        expect(r.stderr, said(r)).toMatch(/holdfast: .*(dropped|closed|connect)/i);
        expect(existsSync(finalFile()), 'a partial upload is never under its final name').toBe(false);
        const again = await cli(['upload', NODE, bundle], { HOLDFAST_OPENSSH: 'off' });
        expect(again.code, said(again)).toBe(0);
        expect(await sha256File(finalFile())).toBe(bundleSha);
      }
      return r.code === 0 ? 'cut after the end' : 'cut, resumed';
    }
    case 'containerd': {
      await n.stopContainerd();
      let r: CliResult;
      try {
        r = await cli(['images', NODE]);
      } finally {
        await n.startContainerd();
      }
      expect(r.code, said(r)).not.toBe(0);
      expect(r.stderr, said(r)).toMatch(/containerd/);
      expect(r.stderr).not.toMatch(/Resolution note|Last error/);
      const back = await cli(['images', NODE]);
      expect(back.code, said(back)).toBe(0);
      return 'containerd stopped';
    }
    case 'fifos': {
      const fifos = ['evil.tar', '.cache.json', `sub-${Math.floor(draw() * 1000)}.tar.gz`].map((f) => path.join(dir, f));
      for (const f of fifos) execFileSync('mkfifo', [f]);
      try {
        for (const args of [['archives', NODE], ['images', NODE], ['rm-archive', NODE, 'run.tar', '--dry-run']]) {
          const r = await cli(args);
          expect([0, 3], said(r)).toContain(r.code); // answered (rm-archive: not safe is 3), never hung
        }
        for (const f of fifos) {
          // Nothing holds it open, or waits in open() to read it.
          expect(() => closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK)), f).toThrow(/ENXIO/);
        }
      } finally {
        for (const f of fifos) rmSync(f, { force: true });
      }
      return 'FIFOs';
    }
    case 'links': {
      const links: [string, string][] = [
        ['loop.tar', 'loop.tar'],
        ['dangling.tar.gz', '/nonexistent/archive.tar.gz'],
        ['dir-link.tar', '.'],
      ];
      for (const [name, to] of links) symlinkSync(to, path.join(dir, name));
      try {
        const r = await cli(['archives', NODE]);
        expect(r.code, said(r)).toBe(0);
        expect(r.stdout).toContain('run.tar');
      } finally {
        for (const [name] of links) rmSync(path.join(dir, name), { force: true });
      }
      return 'links in the dir';
    }
    case 'broken-dir': {
      const aside = `${dir}.aside`;
      renameSync(dir, aside);
      symlinkSync(draw() < 0.5 ? '/nonexistent/images' : path.basename(dir), dir);
      try {
        for (const args of [['archives', NODE], ['upload', NODE, bundle]]) {
          const r = await cli(args, { HOLDFAST_OPENSSH: 'off' });
          expect(r.code, said(r)).toBe(2);
          expect(r.stderr, said(r)).toContain(`The images dir ${inNodeImagesDir} on ${NODE} is a symlink that leads nowhere`);
        }
      } finally {
        rmSync(dir, { force: true });
        renameSync(aside, dir);
      }
      return 'broken images dir';
    }
    case 'node-disk-full': {
      // A 2 MiB file system over the images dir, in the node's own mount namespace.
      await n.limitImagesDir(2 * MiB);
      try {
        const r = await cli(['upload', NODE, bundle], { HOLDFAST_OPENSSH: 'off' });
        expect(r.code, said(r)).toBe(3);
        expect(r.stderr, said(r)).toMatch(/free|room|space/i);
        const there = await n.execInNode(['ls', '-A', inNodeImagesDir]);
        expect(there.trim(), 'nothing left on the full disk').toBe('');
      } finally {
        await n.execInNode(['umount', inNodeImagesDir]);
      }
      return 'node disk full';
    }
    case 'local-disk-full': {
      // The image pinned by k3s again, so a pin has work to do.
      await n.ctr(['images', 'label', IMAGE, `${K3S}=pinned`, `${CRI}=pinned`]);
      const before = await labelsOf(n, IMAGE);
      const log = path.join(home, 'audit.jsonl');
      const aside = `${log}.aside`;
      if (existsSync(log)) renameSync(log, aside);
      symlinkSync('/dev/full', log);
      let refused: CliResult;
      try {
        refused = await cli(['pin', NODE, IMAGE]);
      } finally {
        rmSync(log, { force: true });
        if (existsSync(aside)) renameSync(aside, log);
      }
      expect(refused.code, said(refused)).toBe(3);
      expect(refused.stderr).toContain('nothing was changed');
      expect(await labelsOf(n, IMAGE), 'a refused pin changes nothing').toEqual(before);
      // With the log back, the same pin is made and recorded.
      const pinned = await cli(['pin', NODE, IMAGE]);
      expect(pinned.code, said(pinned)).toBe(0);
      expect((await labelsOf(n, IMAGE))[K3S]).toBeUndefined();
      expect(readFileSync(log, 'utf8')).toContain(IMAGE);
      return 'audit log on a full disk';
    }
  }
}

describe('a chaos run: random faults, true exit codes, nothing left running, nothing unrecorded', () => {
  it(`${ROUNDS} rounds from seed ${SEED}`, async () => {
    const draw = rng(SEED);
    // Every fault at least once, the rest drawn; the order shuffled.
    const plan: Fault[] = [...FAULTS, ...Array.from({ length: ROUNDS - FAULTS.length }, () => FAULTS[Math.floor(draw() * FAULTS.length)]!)];
    for (let i = plan.length - 1; i > 0; i--) {
      const j = Math.floor(draw() * (i + 1));
      [plan[i], plan[j]] = [plan[j]!, plan[i]!];
    }
    const tally = new Map<string, number>();
    for (const [i, fault] of plan.entries()) {
      const what = await round(fault, draw);
      tally.set(what, (tally.get(what) ?? 0) + 1);
      expect(await leftRunning(), `round ${i + 1} (${fault}): processes left on the node`).toEqual([]);
    }
    // The bundle's own bytes never changed under Holdfast.
    expect(createHash('sha256').update(readFileSync(bundle)).digest('hex')).toBe(bundleSha);
    console.log(`chaos run (seed ${SEED}): ${[...tally].map(([k, v]) => `${v}× ${k}`).join(', ')}; ${proxy.cuts} link cuts; nothing left running`);
  }, 1_200_000);
});
