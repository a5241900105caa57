// Remedies are data (issue #47, item 2): core and the shared rules hand out shared/remedy's Remedy
// and never word a command, so no string literal in src/core or src/shared holds `holdfast …`
// command text (comments aside), none builds one as an argv (['holdfast', …]) and none declares
// the CLI's commandLine or remedyCommand. Read through the TypeScript compiler's parse, as
// functionSize.test.ts reads functions.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { API } from 'typescript/unstable/sync';
import type { Node, SourceFile } from 'typescript/unstable/ast';
import {
  isArrayLiteralExpression,
  isFunctionDeclaration,
  isIdentifier,
  isNoSubstitutionTemplateLiteral,
  isStringLiteral,
  isTemplateHead,
  isTemplateMiddle,
  isTemplateTail,
  isVariableDeclaration,
} from 'typescript/unstable/ast/is';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
const LAYERS = ['src/core', 'src/shared'];

/** Command text: the program's lower-case name (not a path's last part), a space, then a word or a placeholder (…). */
const COMMAND_TEXT = /(?<![\w/.-])holdfast [a-z…]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return n.endsWith('.ts') && !/\.(d|generated)\.ts$/.test(n) ? [p] : [];
  });
}

interface Literal {
  where: string;
  text: string;
  /** An element of an array literal (an argv). */
  inArray?: true;
}

/** The CLI's words for a Holdfast command (src/cli/commandLine, src/cli/remedyText): never declared below the CLI. */
const CLI_ONLY = new Set(['commandLine', 'remedyCommand']);

/** Builds a Holdfast command line: the program's name as an argv's word. */
const buildsCommand = (l: Literal): boolean => l.inArray === true && l.text === 'holdfast';

/** Every string and template literal of a file (a template's literal parts, its ${…} left out). */
function literalsOf(sf: SourceFile, file: string): Literal[] {
  const out: Literal[] = [];
  const visit = (n: Node) => {
    if (isStringLiteral(n) || isNoSubstitutionTemplateLiteral(n) || isTemplateHead(n) || isTemplateMiddle(n) || isTemplateTail(n)) {
      out.push({ where: `${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`, text: n.text, ...(isArrayLiteralExpression(n.parent) ? { inArray: true as const } : {}) });
    }
    if ((isFunctionDeclaration(n) || isVariableDeclaration(n)) && n.name && isIdentifier(n.name)) declared.push({ where: `${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`, text: n.name.text });
    n.forEachChild((c) => {
      visit(c);
      return undefined;
    });
  };
  for (const s of sf.statements) visit(s);
  return out;
}

const literals: Literal[] = [];
/** Every function and variable a file declares, by name. */
const declared: Literal[] = [];
let api: API | undefined;

beforeAll(() => {
  api = new API({ cwd: root });
  const config = path.join(root, 'tsconfig.node.json');
  const program = api.updateSnapshot({ openProjects: [config] }).getProject(config)?.program;
  if (!program) throw new Error('no TypeScript project for tsconfig.node.json');
  for (const file of LAYERS.flatMap((l) => sourceFiles(path.join(root, l)))) {
    const sf = program.getSourceFile(file);
    if (!sf) throw new Error(`${rel(file)} is not in tsconfig.node.json`);
    literals.push(...literalsOf(sf, rel(file)));
  }
}, 120_000);

afterAll(() => api?.close());

describe(`string literals in ${LAYERS.join(' and ')}`, () => {
  it('are found: the parse sees the literals it reads, template parts included', () => {
    expect(literals.length).toBeGreaterThan(2000);
    expect(literals).toContainEqual({ where: expect.stringMatching(/^src\/core\/node\/localSession\.ts:/), text: 'Run Holdfast as root on the node.' });
    expect(literals.some((l) => l.where.startsWith('src/shared/nodeSelection.ts:') && l.text === 'no node in group "')).toBe(true);
  });

  it('tell command text from the product and its labels', () => {
    const planted = ['List nodes with `holdfast node ls`.', 'Run it as root (sudo holdfast … --local).', 'make them durable with holdfast pin, or upgrade'];
    const fine = ['Run Holdfast as root on the node.', '~/.config/holdfast on Linux', 'holdfast', 'io.holdfast.pinned-by', 'holdfast_check_success', 'holdfast-fleet-'];
    expect(planted.filter((t) => COMMAND_TEXT.test(t))).toEqual(planted);
    expect(fine.filter((t) => COMMAND_TEXT.test(t))).toEqual([]);
  });

  it('hold no holdfast command text: a remedy is data (shared/remedy), worded by the CLI and the app', () => {
    expect(literals.filter((l) => COMMAND_TEXT.test(l.text)).map((l) => `${l.where}: ${l.text}`)).toEqual([]);
  });

  it('see argv words and declarations, and tell a Holdfast argv from a ctr one', () => {
    expect(literals.some((l) => l.where.startsWith('src/shared/lostPins.ts:') && l.text === 'ctr' && l.inArray)).toBe(true);
    expect(declared.some((d) => d.where.startsWith('src/shared/shellQuote.ts:') && d.text === 'shellLine')).toBe(true);
    const planted: Literal[] = [{ where: 'src/shared/x.ts:1', text: 'holdfast', inArray: true }];
    const fine: Literal[] = [{ where: 'src/core/config/home.ts:1', text: 'holdfast' }, { where: 'src/shared/x.ts:1', text: 'ctr', inArray: true }, { where: 'src/shared/x.ts:1', text: 'holdfast/v1', inArray: true }];
    expect(planted.filter(buildsCommand)).toEqual(planted);
    expect(fine.filter(buildsCommand)).toEqual([]);
    expect(['commandLine', 'shellLine'].filter((n) => CLI_ONLY.has(n))).toEqual(['commandLine']);
  });

  it("build no holdfast command line and declare none of the CLI's words for one", () => {
    expect(literals.filter(buildsCommand).map((l) => l.where)).toEqual([]);
    expect(declared.filter((d) => CLI_ONLY.has(d.text)).map((d) => `${d.where}: ${d.text}`)).toEqual([]);
  });
});
