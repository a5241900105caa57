// The CLI's contract: help with no build step, node inventory, exit codes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../lab/lab';
import { NodeStore } from '../../src/core/config/nodes';
import { labNodeDef, runCli, tempHome } from './support';

let lab: Lab;

beforeAll(async () => {
  lab = await startLab({ nodes: ['k1'] });
});

afterAll(async () => {
  await lab?.stop();
});

describe('holdfast CLI', () => {
  it('prints help and exits 0', async () => {
    const r = await runCli(['--help'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: holdfast');
    for (const cmd of ['node', 'images', 'serve']) expect(r.stdout).toContain(cmd);
  });

  it('exits 2 on a usage error', async () => {
    const r = await runCli(['images'], { HOLDFAST_HOME: tempHome() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('name the node (or --local, on the node itself)');
    const bad = await runCli(['node', 'add', 'x', '--host', 'h', '--port', 'ninety'], { HOLDFAST_HOME: tempHome() });
    expect(bad.code).toBe(2);
  });

  it('exits 1 with one clear line for an unknown node', async () => {
    const r = await runCli(['images', 'nope'], { HOLDFAST_HOME: tempHome() });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('holdfast: no node named "nope" — List nodes with `holdfast node ls`; add one with `holdfast node add`.');
  });

  it('adds, lists and removes nodes; refuses an unknown host key with exit 3 and saves nothing', async () => {
    const home = tempHome();
    const n = lab.node('k1');
    const emptyKh = path.join(home, 'kh');
    const base = ['node', 'add', 'k1', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', emptyKh];

    const refused = await runCli(base, { HOLDFAST_HOME: home });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(n.hostKeyFingerprint);
    expect(refused.stderr).toContain('--accept-new-host-key');
    expect((await runCli(['node', 'ls', '--json'], { HOLDFAST_HOME: home })).stdout.trim()).toBe('[]');

    const ok = await runCli([...base, `--accept-new-host-key=${n.hostKeyFingerprint}`], { HOLDFAST_HOME: home });
    expect(ok.stderr).toBe(`recording host key ssh-ed25519 ${n.hostKeyFingerprint} of 127.0.0.1:${n.port} in ${emptyKh}\n`);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^added k1: containerd /);
    expect(readFileSync(emptyKh, 'utf8')).toContain(`[127.0.0.1]:${n.port} ssh-ed25519`);

    const ls = JSON.parse((await runCli(['node', 'ls', '--json'], { HOLDFAST_HOME: home })).stdout);
    expect(ls).toEqual([
      expect.objectContaining({ name: 'k1', host: '127.0.0.1', port: n.port, user: 'root', socket: '/run/k3s/containerd/containerd.sock', namespace: 'k8s.io' }),
    ]);
    const table = await runCli(['node', 'ls'], { HOLDFAST_HOME: home });
    expect(table.stdout).toMatch(/NAME\s+GROUP\s+ADDRESS/);
    expect(table.stdout).toContain(`127.0.0.1:${n.port}`);

    const dup = await runCli([...base, '--no-check'], { HOLDFAST_HOME: home });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');

    expect((await runCli(['node', 'rm', 'k1'], { HOLDFAST_HOME: home })).code).toBe(0);
    expect((await runCli(['node', 'ls', '--json'], { HOLDFAST_HOME: home })).stdout.trim()).toBe('[]');
  });

  it('connects once per command, as soon as its arguments parse, and not at all for a usage error', async () => {
    // The head start (src/cli/headStart.ts) opens the node's session while the service loads; the
    // operation must adopt it, not open a second connection, and a command that never runs must not
    // reach the node. sshd logs each login.
    const home = tempHome();
    const n = lab.node('k1');
    await new NodeStore(home).add(labNodeDef(lab, n));
    const logins = async () => ((await n.sshdLog()).match(/Accepted publickey/g) ?? []).length;
    const before = await logins();

    const listed = await runCli(['images', 'k1', '--json'], { HOLDFAST_HOME: home });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(Array.isArray(JSON.parse(listed.stdout))).toBe(true);
    expect(await logins()).toBe(before + 1);

    const pinned = await runCli(['pin', 'k1', '--all-k3s', '--dry-run'], { HOLDFAST_HOME: home });
    expect(pinned.code).toBe(0);
    expect(await logins()).toBe(before + 2);

    const typo = await runCli(['images', 'k1', '--jsno'], { HOLDFAST_HOME: home });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown option '--jsno'");
    expect(await logins()).toBe(before + 2);
  });
});
