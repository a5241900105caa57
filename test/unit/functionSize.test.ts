// Functions a reader can hold (issue #47): no function, arrow or method in src/core, src/shared or
// src/cli spans more than 80 lines (from its first token to its last, nested functions included;
// generated files aside).
// Every file is parsed by the TypeScript compiler (its API, through tsconfig.node.json's program).
// The functions over the budget today are listed in OVER_BUDGET with their length; the list may
// only shrink: a listed function that grew, that is now within the budget, or that is gone fails
// here, so the budget holds from now on and each split removes its line.
// Components get their own budget: no function in a .tsx file of src/renderer (a component or what
// it nests) spans more than 200 lines, read through tsconfig.web.json's program; same rules.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { API } from 'typescript/unstable/sync';
import type { Node, SourceFile } from 'typescript/unstable/ast';
import {
  isArrowFunction,
  isCallExpression,
  isClassDeclaration,
  isConstructorDeclaration,
  isFunctionDeclaration,
  isFunctionExpression,
  isGetAccessorDeclaration,
  isIdentifier,
  isMethodDeclaration,
  isPropertyAccessExpression,
  isPropertyAssignment,
  isPropertyDeclaration,
  isSetAccessorDeclaration,
  isStringLiteral,
  isVariableDeclaration,
} from 'typescript/unstable/ast/is';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
const BUDGET = 80;
const LAYERS = ['src/core', 'src/shared', 'src/cli'];

/**
 * The functions still over the budget: "file: name" → lines today. Only ever remove a line (when
 * the function is split) or lower its count (when it shrank); never add one.
 */
const OVER_BUDGET: Record<string, number> = {
};

const COMPONENT_BUDGET = 200;
const RENDERER = 'src/renderer';

/** The components still over their budget, as OVER_BUDGET: only ever remove or lower a line. */
const COMPONENTS_OVER_BUDGET: Record<string, number> = {};

interface Fn {
  /** 'src/core/x.ts: outer/inner', anonymous functions named by where they stand. */
  key: string;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    // Generated code (the protobuf codecs) is read by no one: it is regenerated, not edited.
    return /\.tsx?$/.test(n) && !/\.(d|generated)\.ts$/.test(n) ? [p] : [];
  });
}

const textOf = (n: Node | undefined): string | undefined => (n && (isIdentifier(n) || isStringLiteral(n)) ? n.text : undefined);

/** The name a function goes by: its own, the variable or property it is assigned to, or the call it is passed to. */
function nameOf(n: Node): string {
  if (isFunctionDeclaration(n) || isFunctionExpression(n)) {
    const own = textOf(n.name);
    if (own) return own;
  }
  if (isMethodDeclaration(n) || isGetAccessorDeclaration(n) || isSetAccessorDeclaration(n)) return textOf(n.name) ?? '(method)';
  if (isConstructorDeclaration(n)) return 'constructor';
  const p = n.parent;
  if (p && (isVariableDeclaration(p) || isPropertyAssignment(p) || isPropertyDeclaration(p))) return textOf(p.name) ?? '(anonymous)';
  if (p && isCallExpression(p)) {
    const callee = p.expression;
    const called = isPropertyAccessExpression(callee) ? textOf(callee.name) : textOf(callee);
    return `${called ?? '(call)'}(…)`;
  }
  return '(anonymous)';
}

const isFunction = (n: Node) =>
  isFunctionDeclaration(n) ||
  isFunctionExpression(n) ||
  isArrowFunction(n) ||
  isMethodDeclaration(n) ||
  isConstructorDeclaration(n) ||
  isGetAccessorDeclaration(n) ||
  isSetAccessorDeclaration(n);

/** Every function of a file with its length in lines; two of one name in one scope are told apart by #2, #3. */
function functionsOf(sf: SourceFile, file: string): Fn[] {
  const out: Fn[] = [];
  const seen = new Map<string, number>();
  const visit = (n: Node, scope: string) => {
    let inner = scope;
    if (isClassDeclaration(n)) inner = `${scope}${textOf(n.name) ?? '(class)'}.`;
    else if (isFunction(n)) {
      const base = `${scope}${nameOf(n)}`;
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      const name = count > 1 ? `${base}#${count}` : base;
      const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(n.end).line;
      out.push({ key: `${file}: ${name}`, lines: last - first + 1 });
      inner = `${name}/`;
    }
    n.forEachChild((c) => {
      visit(c, inner);
      return undefined;
    });
  };
  for (const s of sf.statements) visit(s, '');
  return out;
}

const functions: Fn[] = [];
const components: Fn[] = [];
let api: API | undefined;

/** Every function of `files`, parsed through the program of tsconfig `name`. */
function measure(name: string, files: string[]): Fn[] {
  const config = path.join(root, name);
  const program = api?.updateSnapshot({ openProjects: [config] }).getProject(config)?.program;
  if (!program) throw new Error(`no TypeScript project for ${name}`);
  return files.flatMap((file) => {
    const sf = program.getSourceFile(file);
    if (!sf) throw new Error(`${rel(file)} is not in ${name}`);
    return functionsOf(sf, rel(file));
  });
}

beforeAll(() => {
  api = new API({ cwd: root });
  functions.push(...measure('tsconfig.node.json', LAYERS.flatMap((l) => sourceFiles(path.join(root, l)))));
  const tsx = sourceFiles(path.join(root, RENDERER)).filter((f) => f.endsWith('.tsx'));
  components.push(...measure('tsconfig.web.json', tsx));
}, 120_000);

afterAll(() => api?.close());

describe(`functions in ${LAYERS.join(', ')}`, () => {
  it('are found: the parse sees the functions it measures', () => {
    expect(functions.length).toBeGreaterThan(500);
    expect(functions.find((f) => f.key === 'src/cli/commands/node.ts: registerNodeCommands')?.lines).toBeGreaterThan(5);
  });

  it(`span at most ${BUDGET} lines, but for the listed ones, which may not grow`, () => {
    const over = functions.filter((f) => f.lines > BUDGET && !(f.key in OVER_BUDGET)).map((f) => `${f.key} (${f.lines} lines)`);
    expect(over, 'split these, do not list them').toEqual([]);
    const grown = functions.filter((f) => f.key in OVER_BUDGET && f.lines > OVER_BUDGET[f.key]!).map((f) => `${f.key}: ${OVER_BUDGET[f.key]} → ${f.lines}`);
    expect(grown, 'listed functions may only shrink').toEqual([]);
  });

  it('are listed only while over the budget, with their length today (the list only shrinks)', () => {
    const lines = new Map(functions.map((f) => [f.key, f.lines]));
    const stale = Object.entries(OVER_BUDGET)
      .filter(([key, n]) => (lines.get(key) ?? 0) <= BUDGET || lines.get(key)! < n)
      .map(([key, n]) => `${key}: listed ${n}, now ${lines.get(key) ?? 'gone'}`);
    expect(stale, 'remove (or lower) these lines of OVER_BUDGET').toEqual([]);
  });
});

describe(`components (functions in ${RENDERER}'s .tsx files)`, () => {
  it('are found: the parse sees the components it measures', () => {
    expect(components.length).toBeGreaterThan(100);
    expect(components.find((f) => f.key === 'src/renderer/components/FleetMatrix.tsx: FleetMatrix')?.lines).toBeGreaterThan(5);
  });

  it(`span at most ${COMPONENT_BUDGET} lines, but for the listed ones, which may not grow`, () => {
    const over = components
      .filter((f) => f.lines > COMPONENT_BUDGET && !(f.key in COMPONENTS_OVER_BUDGET))
      .map((f) => `${f.key} (${f.lines} lines)`);
    expect(over, 'split these by what they do, do not list them').toEqual([]);
    const grown = components
      .filter((f) => f.key in COMPONENTS_OVER_BUDGET && f.lines > COMPONENTS_OVER_BUDGET[f.key]!)
      .map((f) => `${f.key}: ${COMPONENTS_OVER_BUDGET[f.key]} → ${f.lines}`);
    expect(grown, 'listed components may only shrink').toEqual([]);
  });

  it('are listed only while over the budget, with their length today (the list only shrinks)', () => {
    const lines = new Map(components.map((f) => [f.key, f.lines]));
    const stale = Object.entries(COMPONENTS_OVER_BUDGET)
      .filter(([key, n]) => (lines.get(key) ?? 0) <= COMPONENT_BUDGET || lines.get(key)! < n)
      .map(([key, n]) => `${key}: listed ${n}, now ${lines.get(key) ?? 'gone'}`);
    expect(stale, 'remove (or lower) these lines of COMPONENTS_OVER_BUDGET').toEqual([]);
  });
});
