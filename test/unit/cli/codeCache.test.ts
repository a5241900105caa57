// The CLI bundle's V8 code cache (src/cli/codeCache.ts), with V8's real cachedData: written
// after a command's first run, taken by the next, rejected for other source, never read from a
// file someone else owns, off with HOLDFAST_CODE_CACHE=off.
import { chownSync, existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { cacheKey, runWithCodeCache } from '../../../src/cli/codeCache';

// A module with enough functions for V8 to cache, exporting what it computed.
const SOURCE = `${Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x * ${i} + ${i}; }`).join('\n')}
module.exports = { total: [${Array.from({ length: 50 }, (_, i) => `f${i}(2)`).join(', ')}].reduce((a, b) => a + b, 0), file: __filename };`;

let dir: string;
const run = (over: Partial<Parameters<typeof runWithCodeCache>[0]> = {}) =>
  runWithCodeCache<{ total: number; file: string }>({ source: SOURCE, filename: path.join(dir, 'bundle.cjs'), cacheDir: path.join(dir, 'cache'), prefix: 'v', key: 'images', env: {}, ...over });
const cacheFile = () => path.join(dir, 'cache', 'v-images.bin');

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hf-cc-'));
});

describe('runWithCodeCache', () => {
  it('evaluates the module, writes its cache after the first run and takes it on the next', () => {
    const first = run();
    expect(first.exports).toEqual({ total: 3675, file: path.join(dir, 'bundle.cjs') });
    expect(first.fromCache).toBe(false);
    first.save();
    expect(statSync(cacheFile()).size).toBeGreaterThan(0);
    const written = statSync(cacheFile()).mtimeMs;

    const second = run();
    expect(second.exports.total).toBe(3675);
    expect(second.fromCache).toBe(true);
    second.save(); // taken: left alone
    expect(statSync(cacheFile()).mtimeMs).toBe(written);
    expect(readdirSync(path.join(dir, 'cache'))).toEqual(['v-images.bin']); // no temporary files left
  });

  it('keeps one cache per command', () => {
    run().save();
    expect(run({ key: 'node' }).fromCache).toBe(false);
    expect(run().fromCache).toBe(true);
  });

  it('compiles as without a cache when V8 rejects it (other source), and replaces it', () => {
    run().save();
    const changed = run({ source: `${SOURCE}\nmodule.exports.more = 1;` });
    expect(changed.fromCache).toBe(false);
    expect(changed.exports).toMatchObject({ total: 3675, more: 1 });
    changed.save();
    expect(run({ source: `${SOURCE}\nmodule.exports.more = 1;` }).fromCache).toBe(true);
  });

  it.runIf(process.getuid?.() === 0)('does not read a cache owned by another user', () => {
    run().save();
    chownSync(cacheFile(), 4242, 4242);
    expect(run().fromCache).toBe(false);
    expect(run({ owner: 4242 }).fromCache).toBe(true); // the bundle's owner is trusted
  });

  it('HOLDFAST_CODE_CACHE=off neither reads nor writes one', () => {
    run().save();
    const off = run({ env: { HOLDFAST_CODE_CACHE: 'off' } });
    expect(off.fromCache).toBe(false);
    off.save();
    const none = run({ key: 'log', env: { HOLDFAST_CODE_CACHE: 'off' } });
    none.save();
    expect(existsSync(path.join(dir, 'cache', 'v-log.bin'))).toBe(false);
  });

  it('a cache directory that cannot be made only costs the cache', () => {
    writeFileSync(path.join(dir, 'file'), '');
    const r = run({ cacheDir: path.join(dir, 'file', 'cache') });
    expect(() => r.save()).not.toThrow();
    expect(r.exports.total).toBe(3675);
  });
});

describe('cacheKey', () => {
  it('is the command word, or a fixed name for none and for anything else', () => {
    expect(cacheKey(['images', 'n1', '--json'])).toBe('images');
    expect(cacheKey(['--verbose', 'rm-archive', 'n1', 'x.tar'])).toBe('rm-archive');
    expect(cacheKey(['--help'])).toBe('_');
    expect(cacheKey([])).toBe('_');
    for (const odd of ['../../etc/passwd', 'Images', 'a'.repeat(40), 'x.y']) expect(cacheKey([odd])).toBe('_other');
  });
});
