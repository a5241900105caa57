// Holdfast's environment variables have one home, src/core/env.ts: no other file under src/ reads
// a HOLDFAST_* variable from an environment object, every HOLDFAST_* name src/ mentions is listed
// there, and every one listed there is in docs/cli.md's Environment table. The reader detector is
// run against samples too, so a detector that stops seeing reads fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bzip2InJs, codeCacheOff, HOLDFAST_ENV, homeOverride, logLevelSetting, opensshSetting } from '../../../src/core/env';

const root = path.resolve(import.meta.dirname, '../../..');
const ENV_MODULE = 'src/core/env.ts';

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const abs = path.join(dir, name);
    if (statSync(abs).isDirectory()) return sourcesUnder(abs);
    return /\.(m?[jt]sx?)$/.test(name) ? [abs] : [];
  });
}

/** The code of a file without its comments (a comment may name a variable; only code reads one). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** The HOLDFAST_* variables a piece of code reads off an object (`x.HOLDFAST_Y`, `x['HOLDFAST_Y']`, `{ HOLDFAST_Y } = env`). */
function readsIn(text: string): string[] {
  const c = code(text);
  const found = [...c.matchAll(/(?:\.\s*|\[\s*['"`])(HOLDFAST_[A-Z0-9_]+)/g)].map((m) => m[1]!);
  for (const m of c.matchAll(/\{([^{}]*)\}\s*=\s*[\w.]*env\b/g)) found.push(...(m[1]!.match(/HOLDFAST_[A-Z0-9_]+/g) ?? []));
  return found;
}

const sources = sourcesUnder(path.join(root, 'src')).map((abs) => ({ file: path.relative(root, abs).split(path.sep).join('/'), text: readFileSync(abs, 'utf8') }));

describe('environment variables', () => {
  it('the reader detector sees every form of read, and not a name in a message or a comment', () => {
    expect(readsIn('const a = process.env.HOLDFAST_A;')).toEqual(['HOLDFAST_A']);
    expect(readsIn('if (env.HOLDFAST_B) go();')).toEqual(['HOLDFAST_B']);
    expect(readsIn("const c = (opts.env ?? process.env).HOLDFAST_C === 'off';")).toEqual(['HOLDFAST_C']);
    expect(readsIn("const d = process.env['HOLDFAST_D'];")).toEqual(['HOLDFAST_D']);
    expect(readsIn('const { HOLDFAST_E, PATH } = process.env;')).toEqual(['HOLDFAST_E']);
    expect(readsIn("// reads process.env.HOLDFAST_F\nthrow new Error('set HOLDFAST_G'); /* $HOLDFAST_H */")).toEqual([]);
  });

  it(`are read only in ${ENV_MODULE}`, () => {
    const readers = sources.filter((s) => s.file !== ENV_MODULE).flatMap((s) => readsIn(s.text).map((v) => `${s.file}: ${v}`));
    expect(readers).toEqual([]);
  });

  it(`every HOLDFAST_* name src/ mentions is listed in ${ENV_MODULE}`, () => {
    const listed = new Set(Object.keys(HOLDFAST_ENV));
    const named = new Set(sources.flatMap((s) => s.text.match(/HOLDFAST_[A-Z0-9_]+/g) ?? []));
    named.delete('HOLDFAST_ENV'); // the list itself
    expect([...named].filter((v) => !listed.has(v))).toEqual([]);
  });

  it("every listed variable is in docs/cli.md's Environment table", () => {
    const doc = readFileSync(path.join(root, 'docs/cli.md'), 'utf8');
    const section = /^## Environment\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1] ?? '';
    const documented = new Set([...section.matchAll(/^\| `(HOLDFAST_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
    expect(documented.size).toBeGreaterThan(0);
    expect(Object.keys(HOLDFAST_ENV).filter((v) => !documented.has(v))).toEqual([]);
  });

  it('the accessors read the environment they are given; empty is unset', () => {
    expect(homeOverride({ HOLDFAST_HOME: '/tmp/h' })).toBe('/tmp/h');
    expect(homeOverride({ HOLDFAST_HOME: '' })).toBeUndefined();
    expect(logLevelSetting({ HOLDFAST_LOG: 'debug' })).toBe('debug');
    expect(opensshSetting({})).toBeUndefined();
    expect(codeCacheOff({ HOLDFAST_CODE_CACHE: 'off' })).toBe(true);
    expect(codeCacheOff({ HOLDFAST_CODE_CACHE: 'on' })).toBe(false);
    expect(bzip2InJs({ HOLDFAST_BZIP2_JS: '1' })).toBe(true);
    expect(bzip2InJs({})).toBe(false);
  });
});
