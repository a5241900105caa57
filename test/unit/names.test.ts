// One name per concept (issue #47): a domain type declared once in src/, one image reference
// module. Each check also runs on a planted violation, so a check that stops seeing what it
// guards fails here.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const src = path.join(root, 'src');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(n) ? [p] : [];
  });
}

/** Types that have one home; a second declaration (type, interface, class, enum) is a copy. */
const ONE_HOME = ['PinTarget'];

/** The files (of `files`: path → text) that declare `name` as a type. */
function declaring(name: string, files: Map<string, string>): string[] {
  // `type X =` (not `type X,` in an import list), `interface X`, `class X`, `enum X`.
  const decl = new RegExp(`^[ \\t]*(?:export[ \\t]+)?(?:declare[ \\t]+)?(?:type[ \\t]+${name}\\b[ \\t]*(?:<[^>]*>)?[ \\t]*=|(?:interface|class|enum)[ \\t]+${name}\\b)`, 'm');
  return [...files].filter(([, text]) => decl.test(text)).map(([file]) => file);
}

/** Modules beside shared/imageReference named for references (shared/reference.ts was one). */
const referenceModules = (names: string[]) => names.filter((f) => /(^|\/)references?\.tsx?$/.test(f));

const files = new Map(sourceFiles(src).map((f) => [rel(f), readFileSync(f, 'utf8')]));

describe('one name per concept', () => {
  it.each(ONE_HOME)('%s is declared in one file of src/', (name) => {
    expect(declaring(name, files)).toHaveLength(1);
  });

  it('sees a planted second declaration', () => {
    const planted = new Map(files).set('src/cli/planted.ts', "import x from 'y';\nexport type PinTarget = { refs: string[] };\n");
    expect(declaring('PinTarget', planted)).toHaveLength(2);
    // An import or a use is not a declaration.
    const uses = new Map([['src/a.ts', "import type { PinTarget } from './domain';\nimport {\n  type PinTarget,\n} from './domain';\nconst t: PinTarget = { refs: [] };\n"]]);
    expect(declaring('PinTarget', uses)).toEqual([]);
  });

  it('image references have one module, src/shared/imageReference.ts', () => {
    expect(existsSync(path.join(src, 'shared/imageReference.ts'))).toBe(true);
    expect(existsSync(path.join(src, 'shared/reference.ts'))).toBe(false);
    expect(referenceModules([...files.keys()])).toEqual([]);
    expect(referenceModules([...files.keys(), 'src/shared/reference.ts'])).toEqual(['src/shared/reference.ts']);
  });
});
