// `npm run lab -- --distro rke2` shapes the by-hand lab's nodes as RKE2, as HOLDFAST_LAB_DISTRO
// does for a suite's: Holdfast, adding a node from the banner's own `node add` line, finds RKE2 at
// the release the banner names and RKE2's images dir. A real lab, the real CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bannerCommands } from '../../lab/banner.ts';
import { repoRoot, runCli, tempHome } from './support';

const home = tempHome();
const claims = mkdtempSync(path.join(os.tmpdir(), 'hf-claims-'));
const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-bylab-'));
const env = { HOLDFAST_HOME: home, HOLDFAST_LAB_CLAIMS: claims };
const lab = (args: string[]) =>
  spawn(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), ['lab/cli.ts', '--nodes', '1', '--dir', dir, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env, HOLDFAST_LAB_DISTRO: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
let child: ReturnType<typeof lab> | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) await new Promise((resolve) => (child!.once('close', resolve), child!.kill('SIGTERM')));
  for (const d of [claims, home, dir]) rmSync(d, { recursive: true, force: true });
});

/** Everything the lab prints until its banner is complete, or until it exits. */
function output(c: ReturnType<typeof lab>): Promise<{ out: string; err: string; code: number | null }> {
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    c.stdout!.on('data', (d) => (out += d) && out.includes('Ctrl-C stops everything.') && resolve({ out, err, code: null }));
    c.stderr!.on('data', (d) => (err += d));
    c.on('close', (code) => resolve({ out, err, code }));
  });
}

describe('npm run lab --distro', () => {
  it('rke2: RKE2 nodes, at the RKE2 release of the --k3s line', async () => {
    child = lab(['--distro', 'rke2', '--k3s', 'v1.32.5+k3s2', '--name', 'rk']);
    const { out, err } = await output(child);
    expect(err).toBe('');
    expect(out).toContain('Holdfast lab: 1 RKE2 node(s) up');
    expect(out).toMatch(/^ {2}rke2: {8}v1\.32\.5\+rke2r2, server: /m);
    // (a line wider than the banner's 100 columns wraps at a word)
    expect(out.replace(/\s+/g, ' ')).toContain('images dir: /var/lib/rancher/rke2/agent/images (host side ');
    const add = bannerCommands(out).find((l) => l.startsWith('bin/holdfast.mjs node add '))!;
    const r = await runCli(add.split(/\s+/).slice(1), env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('added rk-n1: containerd ');
    expect(r.stdout).toContain(', RKE2 v1.32.5+rke2r2');
    expect(r.stdout).toContain('images dir: /var/lib/rancher/rke2/agent/images');
  });

  it('refuses a distro it does not know, naming the choices', async () => {
    const r = await output(lab(['--distro', 'k8s']));
    expect(r.code).toBe(1);
    expect(r.err).toContain('lab: --distro wants one of k3s, rke2');
  });
});
