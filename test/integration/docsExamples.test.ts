// The examples in docs/cli.md are what the CLI prints (issue #49, item 14): a seeded lab started
// as the docs start it (`npm run lab -- --seed --name lab2`), its first node added as the docs add
// it, and the example's command run on a pseudo-terminal 100 columns wide. The block must match
// the output line for line, so a change to the CLI's words fails here until the docs follow.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTerminal, repoRoot, runCli, tempHome } from './support';

const home = tempHome();
const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-docs-lab-'));
const claims = mkdtempSync(path.join(os.tmpdir(), 'hf-docs-claims-'));
const env = { HOLDFAST_HOME: home, HOLDFAST_LAB_CLAIMS: claims };
let lab: ChildProcess | undefined;

/** The lab's banner, once it says the lab is up (or why it could not start). */
function startSeededLab(): Promise<string> {
  const child = spawn(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), ['lab/cli.ts', '--seed', '--name', 'lab2', '--dir', dir], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  lab = child;
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('Ctrl-C stops everything.')) resolve(out);
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('close', (code) => reject(new Error(`the lab exited (${code}) before it was up: ${err}`)));
  });
}

/** The fenced block in docs/cli.md whose first line is `$ <command>`, without that line. */
function docsExample(command: string): string[] {
  const lines = readFileSync(path.join(repoRoot, 'docs', 'cli.md'), 'utf8').split('\n');
  const start = lines.indexOf(`$ ${command}`);
  if (start < 1 || !lines[start - 1]!.startsWith('```')) throw new Error(`docs/cli.md has no example of \`${command}\``);
  const end = lines.indexOf('```', start);
  return lines.slice(start + 1, end);
}

beforeAll(async () => {
  const banner = await startSeededLab();
  const port = banner.match(/^lab2-n1: root@127\.0\.0\.1 port (\d+)$/m)?.[1];
  if (!port) throw new Error(`no lab2-n1 in the lab's banner:\n${banner}`);
  const add = await runCli(['node', 'add', 'lab2-n1', '--host', '127.0.0.1', '--port', port, '--identity', path.join(dir, 'id_ed25519'), '--known-hosts', path.join(dir, 'known_hosts')], env);
  expect(add.code, add.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  if (lab && lab.exitCode === null) {
    const closed = new Promise((resolve) => lab!.once('close', resolve));
    lab.kill('SIGTERM');
    await closed;
  }
  for (const d of [home, dir, claims]) rmSync(d, { recursive: true, force: true });
});

describe('docs/cli.md examples, as the CLI prints them', () => {
  it('holdfast images on a terminal 100 columns wide', async () => {
    const printed = await onTerminal(['images', 'lab2-n1'], 100, env);
    while (printed.length && printed[printed.length - 1] === '') printed.pop();
    expect(printed).toEqual(docsExample('holdfast images lab2-n1'));
  });
});
