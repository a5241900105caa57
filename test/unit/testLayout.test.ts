// Unit tests mirror the code (issue #47): a test of src/<layer>/<path> sits in
// test/unit/<layer>/<path>, so a reader finds a module's tests by its path. Only the cross-cutting
// suites below sit at the top; CONTRIBUTING.md's "Where a test lives" says the same.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Suites about the whole repository, not one module. */
const TOP_LEVEL = ['deploy.test.ts', 'docs.test.ts', 'functionSize.test.ts', 'headerComments.test.ts', 'layers.test.ts', 'names.test.ts', 'testLayout.test.ts'];

/** Folders that mirror no src/ folder: fuzz suites over many modules, tests of the lab's code (lab/). */
const CROSS_CUTTING_DIRS: Record<string, string> = { fuzz: '', lab: 'lab' };

/** Every *.test.ts under test/unit, as paths relative to test/unit. */
function unitTests(): string[] {
  const dir = path.join(root, 'test/unit');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => f.endsWith('.test.ts'));
}

/** The tests (relative to test/unit) that sit where no reader would look for them. */
function misplaced(tests: string[], dirExists: (repoPath: string) => boolean): string[] {
  return tests.filter((t) => {
    const parts = t.split('/');
    if (parts.length === 1) return !TOP_LEVEL.includes(t);
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

describe('test/unit mirrors src/', () => {
  it('every unit test sits in the folder of the src/ folder it tests, or is a listed cross-cutting suite', () => {
    expect(misplaced(unitTests(), dirExists)).toEqual([]);
  });

  it('sees a planted loose file, a folder src/ lacks and a lab folder lab/ lacks', () => {
    const planted = ['directSpool.test.ts', 'disk/store.test.ts', 'core/nowhere/x.test.ts', 'lab/nowhere/y.test.ts'];
    const fine = ['docs.test.ts', 'core/disk/store.test.ts', 'fuzz/archives.fuzz.test.ts', 'lab/ctrStdout.test.ts', 'renderer/model/jobs.test.ts'];
    expect(misplaced([...planted, ...fine], dirExists)).toEqual(planted);
  });
});
