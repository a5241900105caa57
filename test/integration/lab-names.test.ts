// Labs started by hand (`npm run lab`) name their nodes so that a technician can add a second
// lab's nodes to Holdfast beside the first's: lab1-n1…, lab2-n1…, a prefix neither the node store
// nor a running lab holds (lab/names.ts). Real labs, the real CLI adding their nodes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bannerCommands } from '../../lab/banner.ts';
import { repoRoot, runCli, tempHome } from './support';

const home = tempHome();
const claims = mkdtempSync(path.join(os.tmpdir(), 'hf-claims-'));
const env = { HOLDFAST_HOME: home, HOLDFAST_LAB_CLAIMS: claims };
const running: ChildProcess[] = [];
const dirs: string[] = [];

interface StartedLab {
  child: ChildProcess;
  banner: string;
  /** The `bin/holdfast.mjs node add …` lines the banner prints, as argv. */
  addLines: string[][];
}

/** `npm run lab -- --nodes 1 …` until its banner is complete (or it exits). */
function startByHand(extra: string[] = []): Promise<StartedLab | { code: number | null; stderr: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-bylab-'));
  dirs.push(dir);
  const child = spawn(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), ['lab/cli.ts', '--nodes', '1', '--dir', dir, ...extra], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.push(child);
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('Ctrl-C stops everything.')) {
        const addLines = bannerCommands(out)
          .filter((l) => l.startsWith('bin/holdfast.mjs node add '))
          .map((l) => l.split(/\s+/).slice(1));
        resolve({ child, banner: out, addLines });
      }
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, stderr: err }));
  });
}

function stopLab(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('close', () => resolve());
    child.kill('SIGTERM');
  });
}

afterAll(async () => {
  await Promise.all(running.map(stopLab));
  for (const d of [claims, home, ...dirs]) rmSync(d, { recursive: true, force: true });
});

describe('npm run lab: node names', () => {
  it('a second lab gets names the first does not hold, and both can be added to Holdfast', async () => {
    const first = await startByHand();
    if (!('banner' in first)) throw new Error(`lab did not start: ${first.stderr}`);
    expect(first.banner).toMatch(/^lab1-n1: root@127\.0\.0\.1 port \d+$/m);
    expect(first.banner).toContain('npm run lab -- k3s-start lab1-n1 --dir ');
    const second = await startByHand();
    if (!('banner' in second)) throw new Error(`lab did not start: ${second.stderr}`);
    expect(second.banner).toMatch(/^lab2-n1: /m);

    for (const lab of [first, second]) {
      expect(lab.addLines).toHaveLength(1);
      const r = await runCli(lab.addLines[0]!, env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    const list = await runCli(['node', 'ls', '--json'], env);
    expect((JSON.parse(list.stdout) as Array<{ name: string }>).map((n) => n.name).sort()).toEqual(['lab1-n1', 'lab2-n1']);

    // The first lab stops: its claim goes, but its node is still in the store, so the next lab
    // takes neither lab1 (stored) nor lab2 (running).
    await stopLab(first.child);
    const third = await startByHand();
    if (!('banner' in third)) throw new Error(`lab did not start: ${third.stderr}`);
    expect(third.banner).toMatch(/^lab3-n1: /m);
  });

  it('refuses a --name another running lab holds, naming what to do', async () => {
    const r = await startByHand(['--name', 'lab3']);
    expect('code' in r && r.code).toBe(1);
    expect('stderr' in r && r.stderr).toContain('another running lab uses the name lab3: pick another --name');
  });

  it('refuses a --name whose nodes Holdfast already has', async () => {
    const r = await startByHand(['--name', 'lab1']);
    expect('stderr' in r && r.stderr).toContain('Holdfast already has nodes named lab1-…');
  });
});
