// What the CLI loads before it runs anything: `--help` none of the code that reaches a node,
// `node ls` only the store and its validator (zod). Recorded with a module load hook on the
// real sources, whose import graph the bundle keeps (each dynamic import stays lazy there).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const NODE_CODE = ['ssh2', '@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs', 'tar-stream', 'fzstd', 'unbzip2-stream'];

/** The packages a `holdfast ARGS` run loads, and its result. */
function packagesLoadedBy(args: string[], home = mkdtempSync(path.join(os.tmpdir(), 'hf-loads-'))) {
  const loads = path.join(mkdtempSync(path.join(os.tmpdir(), 'hf-loads-')), 'loads.txt');
  const run = `const { main } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'src/cli/main.ts')).href)});
process.exitCode = await main(['node', 'holdfast', ...${JSON.stringify(args)}]);`;
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', pathToFileURL(path.join(import.meta.dirname, 'fixtures', 'recordLoads.mjs')).href, '--input-type=module', '-e', run],
    { cwd: root, encoding: 'utf8', env: { ...process.env, HOLDFAST_HOME: home, HOLDFAST_TEST_LOADS: loads, HOLDFAST_LOG: 'error' } },
  );
  const packages = new Set<string>();
  for (const url of readFileSync(loads, 'utf8').split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) packages.add(m[1]!);
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, packages };
}

describe('what a CLI start loads', () => {
  it('--help: the command definitions only, nothing that reaches a node and no zod', () => {
    const r = packagesLoadedBy(['--help']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: holdfast');
    expect(r.packages).toContain('commander'); // the hook sees packages at all
    for (const p of [...NODE_CODE, 'zod']) expect(r.packages, p).not.toContain(p);
  }, 30_000);

  it('node ls: the node store and its validator, still nothing that reaches a node', () => {
    const r = packagesLoadedBy(['node', 'ls', '--json']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('[]');
    expect(r.packages).toContain('zod');
    for (const p of NODE_CODE) expect(r.packages, p).not.toContain(p);
  }, 30_000);

  it('a command that reaches a node loads ssh2 when it runs, grpc-js only once SSH is up', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-loads-'));
    // Port 1 on loopback: nothing listens, so the connection is refused at once.
    expect(packagesLoadedBy(['node', 'add', 'n1', '--host', '127.0.0.1', '--port', '1', '--no-check'], home).status).toBe(0);
    const r = packagesLoadedBy(['images', 'n1'], home);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^holdfast: /);
    expect(r.packages).toContain('ssh2');
    // The connection was refused: containerd's client (grpc-js, protobufjs) was never needed.
    for (const p of ['@grpc/grpc-js', 'protobufjs']) expect(r.packages, p).not.toContain(p);
  }, 30_000);
});
