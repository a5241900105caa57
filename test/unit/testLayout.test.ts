// Unit tests mirror the code (issue #47): a test of src/<layer>/<path> sits in
// test/unit/<layer>/<path>, so a reader finds a module's tests by its path. Only the cross-cutting
// suites below sit at the top; CONTRIBUTING.md's "Where a test lives" says the same.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Suites about the whole repository, not one module. */
const TOP_LEVEL = ['deploy.test.ts', 'docs.test.ts', 'functionSize.test.ts', 'headerComments.test.ts', 'layers.test.ts', 'names.test.ts', 'testLayout.test.ts'];

/** Folders that mirror no src/ folder: fuzz suites over many modules, tests of the lab's code (lab/). */
const CROSS_CUTTING_DIRS: Record<string, string> = { fuzz: '', lab: 'lab' };

/**
 * Layers whose loose tests must name a module at their own level: a test directly in
 * test/unit/core/ tests src/core/<name>.ts (env, limits, log). A test of src/core/<folder>/ sits in
 * test/unit/core/<folder>/.
 */
const NAMED_LIKE_THEIR_MODULE = ['core'];

/** Every *.test.ts under test/unit, as paths relative to test/unit. */
function unitTests(): string[] {
  const dir = path.join(root, 'test/unit');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => f.endsWith('.test.ts'));
}

/** The tests (relative to test/unit) that sit where no reader would look for them. */
function misplaced(tests: string[], dirExists: (repoPath: string) => boolean, fileExists: (repoPath: string) => boolean): string[] {
  return tests.filter((t) => {
    const parts = t.split('/');
    if (parts.length === 1) return !TOP_LEVEL.includes(t);
    if (parts.length === 2 && NAMED_LIKE_THEIR_MODULE.includes(parts[0]!)) return !fileExists(`src/${t.replace(/\.test\.tsx?$/, '.ts')}`);
    const [top = '', ...rest] = parts.slice(0, -1);
    if (top in CROSS_CUTTING_DIRS) return CROSS_CUTTING_DIRS[top] !== '' && !dirExists([CROSS_CUTTING_DIRS[top], ...rest].join('/'));
    return !dirExists(['src', top, ...rest].join('/'));
  });
}

const srcDirs = new Set(
  ['src', 'lab'].flatMap((d) => [
    d,
    ...readdirSync(path.join(root, d), { recursive: true, withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')),
  ]),
);
const dirExists = (p: string) => srcDirs.has(p);
const fileExists = (p: string) => existsSync(path.join(root, p));

describe('test/unit mirrors src/', () => {
  it('every unit test sits in the folder of the src/ folder it tests, or is a listed cross-cutting suite', () => {
    expect(misplaced(unitTests(), dirExists, fileExists)).toEqual([]);
  });

  it('sees a planted loose file, a folder src/ lacks, a lab folder lab/ lacks and a core test beside no module', () => {
    const planted = ['directSpool.test.ts', 'disk/store.test.ts', 'core/nowhere/x.test.ts', 'lab/nowhere/y.test.ts', 'core/configLock.test.ts'];
    const fine = ['docs.test.ts', 'core/disk/store.test.ts', 'core/env.test.ts', 'fuzz/archives.fuzz.test.ts', 'lab/ctrStdout.test.ts', 'renderer/model/jobs.test.ts'];
    expect(misplaced([...planted, ...fine], dirExists, fileExists)).toEqual(planted);
  });
});
