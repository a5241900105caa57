// The CLI bundle (scripts/build-cli.mjs), built into a scratch dir of out/ and run as
// bin/holdfast.mjs runs it: what it contains, that it starts, and the code cache it keeps.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain JavaScript build script, no declarations
import { buildCli } from '../../../scripts/build-cli.mjs';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const dir = path.join(root, 'out', `.cli-test-${process.pid}`, 'cli');
const cacheDir = path.join(dir, '..', 'cli-cache');

/** The cache file of a command for the bundle as it is now (its size and mtime are in the name). */
function cacheName(key: string): string {
  const st = statSync(path.join(dir, 'holdfast.cjs'));
  return `${process.version}-${process.arch}-${st.size}-${Math.trunc(st.mtimeMs)}-${key}.bin`;
}

function holdfast(args: string[]) {
  const run = `const { main } = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'holdfast.mjs')).href)});
process.exitCode = await main(['node', 'holdfast', ...${JSON.stringify(args)}]);`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', run], { encoding: 'utf8', env: { ...process.env, HOLDFAST_HOME: path.join(dir, '..', 'home') } });
}

beforeAll(async () => {
  await buildCli(dir);
}, 120_000);

afterAll(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

describe('the CLI bundle', () => {
  it('is one CommonJS file with a loader, and lists what it was built from', () => {
    expect(readdirSync(dir).sort()).toEqual(['holdfast.cjs', 'holdfast.mjs', 'inputs.json']);
    const { builtAt, inputs } = JSON.parse(readFileSync(path.join(dir, 'inputs.json'), 'utf8')) as { builtAt: number; inputs: string[] };
    expect(builtAt).toBeLessThanOrEqual(Date.now());
    // Lazily loaded code is in it too, and dependencies count through the lock file.
    for (const f of ['src/cli/main.ts', 'src/cli/commands/node.ts', 'src/core/node/session.ts', 'src/cli/codeCache.ts', 'package-lock.json']) expect(inputs).toContain(f);
    expect(inputs.filter((f) => f.includes('node_modules'))).toEqual([]);
  });

  it("loads ssh2's native addons from the installed ssh2, not from the bundle", () => {
    const cjs = readFileSync(path.join(dir, 'holdfast.cjs'), 'utf8');
    expect(cjs).toContain('require("ssh2/lib/protocol/crypto/build/Release/sshcrypto.node")');
    expect(cjs).toContain('require("cpu-features")');
  });

  it('starts, and writes one code cache per command it runs, beside out/cli (not packed, not copied into packages)', () => {
    const first = holdfast(['--help']);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('Usage: holdfast');
    const cache = path.join(cacheDir, cacheName('_'));
    expect(existsSync(cache)).toBe(true);
    const ls = holdfast(['node', 'ls', '--json']);
    expect(ls.status).toBe(0);
    expect(ls.stdout.trim()).toBe('[]');
    expect(readdirSync(cacheDir).sort()).toEqual([cacheName('_'), cacheName('node')]);
    expect(holdfast(['--version']).stdout.trim()).toBe('0.1.0');
  });

  it('a changed bundle of the same length never runs from the old cache (V8 checks only the length)', () => {
    const file = path.join(dir, 'holdfast.cjs');
    const original = readFileSync(file, 'latin1');
    expect(holdfast(['--version']).stdout.trim()).toBe('0.1.0'); // the cache for this bundle exists now
    const changed = original.replace('"0.1.0"', '"0.1.9"');
    expect(changed.length).toBe(original.length);
    expect(changed).not.toBe(original);
    const before = statSync(file).mtimeMs;
    writeFileSync(file, changed, 'latin1');
    // mtime moves with the write; pin it forward in case the clock's resolution hides the change
    utimesSync(file, new Date(), new Date(before + 2000));
    try {
      expect(holdfast(['--version']).stdout.trim()).toBe('0.1.9');
    } finally {
      writeFileSync(file, original, 'latin1');
    }
  });

  it('runs as a script too: node out/cli/holdfast.mjs …', () => {
    const r = spawnSync(process.execPath, [path.join(dir, 'holdfast.mjs'), 'node', 'ls'], { encoding: 'utf8', env: { ...process.env, HOLDFAST_HOME: path.join(dir, '..', 'home2') } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('no nodes yet');
  });
});
