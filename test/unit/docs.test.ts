// The README is the front door and docs/ the manual (issue #33). What keeps them so: the README
// stays short with tables that read in a terminal, every relative link in the README, docs/,
// CONTRIBUTING.md and lab/README.md leads to a file and heading that exist, no comment in the code
// or the tooling cites a Markdown file the repository does not hold (the team's facts sheet lived
// outside it; docs/k3s-facts.md is its home now), and what the docs say about Node versions is
// what package.json and the installed packages' `engines` say. docs/architecture.md and
// docs/concepts.md keep sentences short for people in a hurry (issue #47, item 6).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (rel: string) => readFileSync(path.join(root, rel), 'utf8');
const rel = (abs: string) => path.relative(root, abs).split(path.sep).join('/');

/** Lines outside fenced code blocks, with their 1-based line numbers. */
function prose(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of prose(readFileSync(file, 'utf8'))) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    out.add(k ? `${base}-${k}` : base);
  }
  return out;
}

/** "file:line → target: what is wrong" for every relative link of a Markdown file that leads nowhere. */
function brokenLinks(file: string): string[] {
  const abs = path.join(root, file);
  const problems: string[] = [];
  for (const { line, n } of prose(readFileSync(abs, 'utf8'))) {
    const text = line.replace(/`[^`]*`/g, '``');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [p, anchor] = target.split('#') as [string, string | undefined];
      const dest = p ? path.resolve(path.dirname(abs), p) : abs;
      if (!existsSync(dest)) problems.push(`${file}:${n} → ${target}: no such file`);
      else if (anchor !== undefined && dest.endsWith('.md') && !anchorsOf(dest).has(anchor)) problems.push(`${file}:${n} → ${target}: no heading with that anchor`);
    }
  }
  return problems;
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    if (name === 'node_modules') return [];
    const p = path.join(abs, name);
    return statSync(p).isDirectory() ? filesUnder(rel(p), keep) : keep(name) ? [rel(p)] : [];
  });
}

const markdownDocs = () => ['README.md', 'CONTRIBUTING.md', 'lab/README.md', ...filesUnder('docs', (n) => n.endsWith('.md'))];

describe('README: the front door', () => {
  const readme = read('README.md');

  it('is at most 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('has no table cell over 200 characters (the manual is in docs/)', () => {
    const long: string[] = [];
    for (const { line, n } of prose(readme)) {
      if (!line.trimStart().startsWith('|')) continue;
      for (const cell of line.replace(/\\\|/g, '¦').split('|').map((c) => c.trim())) {
        if (cell.length > 200) long.push(`README.md:${n}: ${cell.length} characters: ${cell.slice(0, 60)}…`);
      }
    }
    expect(long).toEqual([]);
  });

  it('links to docs/ pages that exist, at headings that exist', () => {
    const docsLinks = prose(readme).flatMap(({ line }) => [...line.matchAll(/\]\((docs\/[^)#\s]+\.md)(#[^)\s]*)?\)/g)].map((m) => m[1]!));
    expect(docsLinks.length).toBeGreaterThan(5);
    expect(brokenLinks('README.md')).toEqual([]);
    // and the check sees a broken one
    expect(anchorsOf(path.join(root, 'docs/cli.md')).has('holdfast-node-add')).toBe(true);
    expect(anchorsOf(path.join(root, 'docs/cli.md')).has('holdfast-node-remove')).toBe(false);
  });

  it('keeps the quick start: one command runs the app, one runs every test', () => {
    expect(readme).toContain('\nnpm ci && npm start ');
    expect(readme).toContain('\nnpm test ');
    expect(read('.ci/run')).toMatch(/^npm test$/m);
  });
});

describe('docs/, CONTRIBUTING.md and lab/README.md', () => {
  it('every relative link leads to a file, and to a heading in it', () => {
    const files = markdownDocs();
    expect(files).toEqual(expect.arrayContaining(['docs/cli.md', 'docs/architecture.md', 'docs/k3s-facts.md', 'docs/limits.md', 'docs/benchmarks.md']));
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  it('every screenshot in docs/screenshots is shown somewhere', () => {
    const shown = markdownDocs().map(read).join('\n');
    for (const png of readdirSync(path.join(root, 'docs/screenshots'))) expect(shown, png).toContain(`screenshots/${png}`);
  });
});

describe('comments cite only files the repository holds', () => {
  /** `a/b.md`-like paths (one slash at least) in the comment text of a line, or null. */
  const commentOf = (line: string): string | null => {
    const t = line.trimStart();
    if (t.startsWith('//') || t.startsWith('/*') || t.startsWith('*') || t.startsWith('#')) return t;
    const i = line.indexOf(' // ');
    return i >= 0 ? line.slice(i) : null;
  };
  const MD_PATH = /(?<![\w.-])(\.{0,2}\/)?(?:[\w.-]+\/)+[\w.-]+\.md\b/g;

  /** Where a cited path may be relative to: the repository, the citing file's folder, src/. */
  const resolves = (file: string, cited: string) =>
    !cited.startsWith('/') && [root, path.join(root, path.dirname(file)), path.join(root, 'src')].some((base) => existsSync(path.resolve(base, cited)));

  function unresolved(file: string, text: string): string[] {
    const out: string[] = [];
    text.split('\n').forEach((line, i) => {
      const comment = commentOf(line);
      if (comment === null) return;
      for (const m of comment.matchAll(MD_PATH)) if (!resolves(file, m[0])) out.push(`${file}:${i + 1}: ${m[0]}`);
    });
    return out;
  }

  it('a path to a Markdown file in a comment resolves inside the repository', () => {
    const code = ['src', 'lab', 'test', 'bench', 'scripts', 'e2e', 'bin'].flatMap((d) => filesUnder(d, (n) => /\.(ts|tsx|mts|mjs|js|cjs|sh)$/.test(n)));
    expect(code.length).toBeGreaterThan(200);
    expect(code.filter((f) => f !== 'test/unit/docs.test.ts').flatMap((f) => unresolved(f, read(f)))).toEqual([]);
  });

  it('no Markdown file among the code names a path outside the repository', () => {
    const md = ['src', 'lab', 'test', 'bench', 'scripts', 'e2e'].flatMap((d) => filesUnder(d, (n) => n.endsWith('.md')));
    const outside = md.flatMap((f) => (read(f).match(/(?<![\w.)\]-])\/(?:[\w.-]+\/)+[\w.-]+\.md\b/g) ?? []).map((m) => `${f}: ${m}`));
    expect(outside).toEqual([]);
    expect(md.flatMap(brokenLinks)).toEqual([]);
  });

  it('the check sees what it guards: a facts sheet cited outside the repository', () => {
    const outsideSheet = ['shared', 'k3s-image-pinning.md'].join('/');
    expect(unresolved('src/core/x.ts', `// see ${outsideSheet}\n// see /work/${outsideSheet}\n// see docs/k3s-facts.md`)).toEqual([
      `src/core/x.ts:1: ${outsideSheet}`,
      `src/core/x.ts:2: /work/${outsideSheet}`,
    ]);
    expect(unresolved('src/shared/x.ts', "const s = 'a/b.md'; // docs/k3s-facts.md and fixtures/none.md")).toEqual(['src/shared/x.ts:1: fixtures/none.md']);
  });
});

// ---- Node versions: what the docs say against package.json and the installed packages ----

type Version = [number, number, number];
const version = (s: string): Version => {
  const [a = 0, b = 0, c = 0] = s.split('.').map(Number);
  return [a, b, c];
};
const cmp = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `v` satisfies an `engines.node` range: `||` sets of `>=`, `>`, `<=`, `<`, `^`, `~`, `=`, bare and `x`/`*` partial versions. */
function satisfies(v: Version, range: string): boolean {
  return range.split('||').some((set) => {
    const comparators = set.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comparators.every((c) => {
      const m = /^(>=|<=|>|<|=|\^|~)?v?(\*|x|\d+)(?:\.(\*|x|\d+))?(?:\.(\*|x|\d+))?$/i.exec(c);
      if (!m) throw new Error(`cannot read the range ${JSON.stringify(range)}`);
      const op = m[1] ?? '=';
      const parts = [m[2], m[3], m[4]].map((p) => (p === undefined || /^[x*]$/i.test(p) ? null : Number(p)));
      const known = parts.findIndex((p) => p === null);
      const given = (known < 0 ? 3 : known) as 0 | 1 | 2 | 3;
      const low: Version = [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
      if (given === 0) return op === '=' || op === '>=' || op === '<=' || op === '^' || op === '~';
      /** The first version past a partial one (`14.17` → 14.18.0) or past a caret/tilde range. */
      const bump = (upTo: number): Version => (upTo === 0 ? [low[0] + 1, 0, 0] : upTo === 1 ? [low[0], low[1] + 1, 0] : [low[0], low[1], low[2] + 1]);
      switch (op) {
        case '>=':
          return cmp(v, low) >= 0;
        case '>':
          return cmp(v, bump(given - 1)) >= 0;
        case '<':
          return cmp(v, low) < 0;
        case '<=':
          return cmp(v, bump(given - 1)) < 0;
        case '^':
          return cmp(v, low) >= 0 && cmp(v, bump(low[0] > 0 ? 0 : low[1] > 0 || given < 3 ? 1 : 2)) < 0;
        case '~':
          return cmp(v, low) >= 0 && cmp(v, bump(given > 1 ? 1 : 0)) < 0;
        default:
          return cmp(v, low) >= 0 && cmp(v, bump(given - 1)) < 0;
      }
    });
  });
}

/** Every package npm installed (name, version, engines.node), as `npm ci` sees them for EBADENGINE. */
function installedEngines(): { name: string; node: string }[] {
  const out: { name: string; node: string }[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (name.startsWith('@')) {
        walk(p);
        continue;
      }
      const pj = path.join(p, 'package.json');
      if (!existsSync(pj)) continue;
      const j = JSON.parse(readFileSync(pj, 'utf8')) as { name?: string; engines?: { node?: string } };
      if (j.name && typeof j.engines?.node === 'string') out.push({ name: j.name, node: j.engines.node });
      walk(path.join(p, 'node_modules'));
    }
  };
  walk(path.join(root, 'node_modules'));
  return out;
}

describe('Node versions in the docs', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; dependencies: Record<string, string> };
  const install = read('docs/install.md');
  const row = (what: RegExp) => {
    const line = install.split('\n').find((l) => l.startsWith('|') && what.test(l));
    expect(line, `docs/install.md has a "Which Node" row matching ${what}`).toBeDefined();
    return line!;
  };
  const atLeast = (line: string) => /\|\s*≥ (\d+\.\d+(?:\.\d+)?)\s*\|\s*$/.exec(line)?.[1];
  const cliRow = row(/holdfast` CLI/);
  const buildRow = row(/a checkout/);
  const electronRow = row(/^\| Electron/);
  const cli = atLeast(cliRow)!;
  const build = atLeast(buildRow)!;
  const electron = atLeast(electronRow)!;

  it('reads the range forms installed packages use', () => {
    expect(satisfies([20, 20, 2], '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies([20, 18, 0], '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies([20, 20, 2], '>= 22.12.0')).toBe(false);
    expect(satisfies([20, 20, 2], '>=16 || 14 >=14.17')).toBe(true);
    expect(satisfies([14, 16, 0], '>=16 || 14 >=14.17')).toBe(false);
    expect(satisfies([20, 0, 0], '18 || 20 || >=22')).toBe(true);
    expect(satisfies([21, 0, 0], '18 || 20 || >=22')).toBe(false);
    expect(satisfies([20, 0, 0], '10.* || >= 12.*')).toBe(true);
    expect(satisfies([7, 1, 0], '>=6 <7 || >=8')).toBe(false);
    expect(satisfies([20, 0, 0], '*')).toBe(true);
    expect(satisfies([20, 0, 0], '>=v12.0.0')).toBe(true);
  });

  it("the CLI's Node is package.json's engines, and its dependencies run there", () => {
    expect(pkg.engines.node).toBe(`>=${cli}`);
    const deps = installedEngines().filter((p) => p.name in pkg.dependencies);
    expect(deps.filter((p) => !satisfies(version(cli), p.node)).map((p) => `${p.name} wants Node ${p.node}`)).toEqual([]);
  });

  it('a checkout needs no more than the stated Node, except the Electron packages the table names', () => {
    expect(cmp(version(build), version(cli))).toBeGreaterThanOrEqual(0);
    const named = new Set([...electronRow.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    const installed = installedEngines();
    expect(installed.length).toBeGreaterThan(100);
    const wantMore = installed.filter((p) => !satisfies(version(build), p.node));
    expect(wantMore.filter((p) => !named.has(p.name)).map((p) => `${p.name} wants Node ${p.node}`)).toEqual([]);
    // The warning the docs describe is real: the named packages do want more than the checkout's Node…
    expect([...named].filter((n) => !wantMore.some((p) => p.name === n))).toEqual([]);
    // …and the Electron row's Node is enough for every installed package.
    expect(installed.filter((p) => !satisfies(version(electron), p.node)).map((p) => `${p.name} wants Node ${p.node}`)).toEqual([]);
  });

  it('the README and CONTRIBUTING.md say the same as docs/install.md', () => {
    const statement = `Node.js ${build}`;
    for (const f of ['README.md', 'CONTRIBUTING.md']) {
      const text = read(f);
      expect(text, f).toContain(statement);
      expect(text, f).toContain(`${electron}+ to fetch Electron`);
    }
  });
});

describe('docs/cli.md: what it lists is what the code writes (issue #49, item 14)', () => {
  it("the --csv column list is the fleet CSV's header, in order", async () => {
    const { FLEET_CSV_COLUMNS } = await import('../../src/core/usecases/fleet/csv');
    const cli = read('docs/cli.md');
    const listed = cli.match(/`--csv FILE` writes one RFC 4180 row per node × reference:\n\s*`([^`]+)`/)?.[1];
    expect(listed, 'docs/cli.md lists the --csv columns').toBeDefined();
    expect(listed!.split(',')).toEqual([...FLEET_CSV_COLUMNS]);
  });
});

/** Words per sentence of a Markdown text's prose: no code blocks, tables, headings or inline code. */
function sentenceLengths(text: string): number[] {
  const blocks: string[] = [];
  let current: string[] = [];
  const end = () => {
    if (current.length) blocks.push(current.join(' '));
    current = [];
  };
  for (const { line } of prose(text)) {
    if (!line.trim() || /^\s*(\||#{1,6}\s|<)/.test(line)) end();
    else {
      if (/^\s*([-*+]|\d+\.)\s/.test(line)) end(); // a list item starts a new thought
      current.push(line.replace(/^\s*([-*+>]|\d+\.)\s+/, ''));
    }
  }
  end();
  return blocks.flatMap((block) =>
    block
      .replace(/`[^`]*`/g, 'code') // inline code reads as one word
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link reads as its text
      .split(/[.!?](?=\s|$)/)
      .map((s) => s.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length)
      .filter((n) => n > 0),
  );
}
const mean = (ns: number[]) => ns.reduce((a, b) => a + b, 0) / ns.length;

describe('prose for people in a hurry (issue #47, item 6)', () => {
  for (const file of ['docs/architecture.md', 'docs/concepts.md']) {
    it(`${file}: a sentence has under 20 words on average`, () => {
      const lengths = sentenceLengths(read(file));
      expect(lengths.length).toBeGreaterThan(20);
      expect(mean(lengths)).toBeLessThan(20);
    });
  }

  it('the measure counts sentences, and leaves code blocks and tables out', () => {
    const text = ['One two three. Four five!', '', '```', 'a b c d e f g. h', '```', '| x y z | w v |', '- Six `seven eight` [nine](x.md)', '  ten.'].join('\n');
    expect(sentenceLengths(text)).toEqual([3, 2, 4]);
  });
});
