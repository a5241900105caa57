// bin/entry.mjs: which code `holdfast` runs — the bundle while it is at least as new as every
// file it was built from, the sources through tsx otherwise — on real files and mtimes.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain JavaScript (it runs before anything is compiled), no declarations
import { cliEntry } from '../../../bin/entry.mjs';

type Entry = { kind: 'bundle' | 'tsx'; file: string; why: string };
const entry = (root: string, env: NodeJS.ProcessEnv = {}) => cliEntry(root, env) as Entry;

let root: string;
const builtAt = Date.parse('2026-01-01T12:00:00Z');
const file = (rel: string, mtime = builtAt - 60_000) => {
  const p = path.join(root, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, '');
  utimesSync(p, mtime / 1000, mtime / 1000);
};
const INPUTS = ['src/cli/main.ts', 'src/core/errors.ts', 'package.json', 'package-lock.json'];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'hf-entry-'));
  for (const f of INPUTS) file(f);
  file('out/cli/holdfast.mjs', builtAt);
  writeFileSync(path.join(root, 'out/cli/inputs.json'), JSON.stringify({ builtAt, inputs: INPUTS }));
});

describe('cliEntry', () => {
  it('runs the bundle while no input is newer than its build', () => {
    expect(entry(root)).toEqual({ kind: 'bundle', file: path.join(root, 'out/cli/holdfast.mjs'), why: 'fresh' });
  });

  it('runs the sources when one changed after the build, or is gone', () => {
    file('src/core/errors.ts', builtAt + 1000);
    expect(entry(root)).toMatchObject({ kind: 'tsx', file: path.join(root, 'src/cli/main.ts'), why: 'src/core/errors.ts changed since the bundle was built' });
    file('src/core/errors.ts');
    rmSync(path.join(root, 'package-lock.json'));
    expect(entry(root)).toMatchObject({ kind: 'tsx', why: 'package-lock.json is gone' });
  });

  it('runs the sources when there is no bundle (right after npm ci) or no manifest', () => {
    rmSync(path.join(root, 'out/cli/inputs.json'));
    expect(entry(root)).toMatchObject({ kind: 'tsx', why: 'out/cli/inputs.json is unreadable' });
    rmSync(path.join(root, 'out'), { recursive: true });
    expect(entry(root)).toMatchObject({ kind: 'tsx', why: 'no bundle (npm run build:cli)' });
  });

  it('runs the bundle of an installed package, which has no sources', () => {
    rmSync(path.join(root, 'src'), { recursive: true });
    expect(entry(root)).toMatchObject({ kind: 'bundle', why: 'installed: no sources' });
  });

  it('HOLDFAST_CLI decides instead, and a missing bundle is then an error', () => {
    file('src/core/errors.ts', builtAt + 1000);
    expect(entry(root, { HOLDFAST_CLI: 'bundle' })).toMatchObject({ kind: 'bundle' });
    expect(entry(root, { HOLDFAST_CLI: 'tsx' })).toMatchObject({ kind: 'tsx' });
    expect(() => entry(root, { HOLDFAST_CLI: 'fast' })).toThrow('HOLDFAST_CLI must be "bundle" or "tsx", not "fast"');
    rmSync(path.join(root, 'out'), { recursive: true });
    expect(() => entry(root, { HOLDFAST_CLI: 'bundle' })).toThrow('npm run build:cli');
  });
});
