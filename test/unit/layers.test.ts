// The layers, as the import graph of src/ shows them (issue #14). Every .ts/.tsx file under src is
// parsed by the TypeScript compiler (its API, through the programs of tsconfig.node/web/preload
// .json), each import, re-export and import() is resolved, and the rules below are checked:
//   core      no electron, renderer, server, main, cli, preload
//   renderer  its own files and shared, npm packages for the web; no Node builtins, no electron
//   main      no server (the transport-neutral dispatcher lives in shared), no renderer
//   shared    nothing from other src layers, no Node builtins, no electron; no npm package but zod and yaml
//   printers  the CLI's printers import only shared, packages and other printers (no core)
//   preload   only shared and electron, and no zod at run time (the sandboxed bundle)
//   core      one direction inside: each part imports only the parts below it (CORE_PARTS)
//   src       no import cycles (type-only imports included: they still tie the modules together)
//   src       nothing from outside src (lab/, test/, e2e/, bench/ are tooling, never shipped)
// "electron" means the package family (electron, electron-log, electron-log/node, …), and
// require('x') and createRequire(…)('x') count as imports. Each rule is also run against an
// injected violation, so a rule that stops seeing what it guards fails here.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { API } from 'typescript/unstable/sync';
import { SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import { isCallExpression, isExportDeclaration, isIdentifier, isImportDeclaration, isImportEqualsDeclaration, isStringLiteral } from 'typescript/unstable/ast/is';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const src = path.join(root, 'src');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');

interface Edge {
  /** As written. */
  spec: string;
  /** src-relative target file for a relative import, else undefined (an npm package or builtin). */
  target?: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(n) ? [p] : [];
  });
}

function resolveRelative(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(js|mjs|ts|tsx)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.d.ts`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')]) {
    if (existsSync(c) && statSync(c).isFile()) return c;
  }
  return undefined;
}

const isTypeOnlyImport = (n: Node): boolean => {
  if (!isImportDeclaration(n)) return false;
  const clause = n.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if ((clause as unknown as { isTypeOnly?: boolean }).isTypeOnly || clause.phaseModifier === SyntaxKind.TypeKeyword) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && named.kind === SyntaxKind.NamedImports && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
};

function importsOf(sf: SourceFile): { spec: string; typeOnly: boolean }[] {
  const out: { spec: string; typeOnly: boolean }[] = [];
  const visit = (n: Node) => {
    if ((isImportDeclaration(n) || isExportDeclaration(n)) && n.moduleSpecifier && isStringLiteral(n.moduleSpecifier)) {
      const typeOnly = isImportDeclaration(n) ? isTypeOnlyImport(n) : n.isTypeOnly;
      out.push({ spec: n.moduleSpecifier.text, typeOnly });
      return;
    }
    if (isImportEqualsDeclaration(n) && n.moduleReference.kind === SyntaxKind.ExternalModuleReference) {
      const e = (n.moduleReference as unknown as { expression: Node }).expression;
      if (isStringLiteral(e)) out.push({ spec: e.text, typeOnly: n.isTypeOnly });
      return;
    }
    if (isCallExpression(n)) {
      const callee = n.expression;
      // import('x'), require('x') and createRequire(…)('x') all load a module at run time
      const loads =
        callee.kind === SyntaxKind.ImportKeyword ||
        (isIdentifier(callee) && callee.text === 'require') ||
        (isCallExpression(callee) && isIdentifier(callee.expression) && callee.expression.text === 'createRequire');
      const a = n.arguments[0];
      if (loads && a && isStringLiteral(a)) out.push({ spec: a.text, typeOnly: false });
    }
    if (n.kind === SyntaxKind.ImportType) {
      const arg = (n as unknown as { argument?: { literal?: Node } }).argument?.literal;
      if (arg && isStringLiteral(arg)) out.push({ spec: arg.text, typeOnly: true });
    }
    n.forEachChild((c) => {
      visit(c);
      return undefined;
    });
  };
  for (const s of sf.statements) visit(s);
  return out;
}

/** src-relative file → its imports. */
const graph = new Map<string, Edge[]>();
let api: API | undefined;

beforeAll(() => {
  api = new API({ cwd: root });
  const configs = ['tsconfig.node.json', 'tsconfig.web.json', 'tsconfig.preload.json'].map((c) => path.join(root, c));
  const snapshot = api.updateSnapshot({ openProjects: configs });
  const programs = configs.map((c) => {
    const p = snapshot.getProject(c);
    if (!p) throw new Error(`no TypeScript project for ${c}`);
    return p.program;
  });
  for (const file of sourceFiles(src)) {
    const sf = programs.map((p) => p.getSourceFile(file)).find((s) => s !== undefined);
    if (!sf) throw new Error(`${rel(file)} is in none of tsconfig.node/web/preload.json`);
    graph.set(
      rel(file),
      importsOf(sf).map(({ spec, typeOnly }) => {
        if (!spec.startsWith('.')) return { spec, typeOnly };
        const target = resolveRelative(file, spec);
        if (!target) throw new Error(`${rel(file)}: cannot resolve "${spec}"`);
        return { spec, target: rel(target), typeOnly };
      }),
    );
  }
}, 120_000);

afterAll(() => api?.close());

/** 'src/core/x.ts' → 'core'. */
const layerOf = (file: string) => file.split('/')[1] ?? '';
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const isBuiltin = (spec: string) => spec.startsWith('node:') || BUILTINS.has(spec) || BUILTINS.has(spec.split('/')[0]!);
const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

/** "file → import" for every import of a file in `layer` that `bad` says is out of bounds. */
function violations(layer: string, bad: (e: Edge, file: string) => boolean, g: Map<string, Edge[]> = graph): string[] {
  const out: string[] = [];
  for (const [file, edges] of g) {
    if (layer !== '*' && layerOf(file) !== layer) continue;
    for (const e of edges) if (bad(e, file)) out.push(`${file} → ${e.target ?? e.spec}`);
  }
  return out;
}
const intoLayers = (...layers: string[]) => (e: Edge) => e.target !== undefined && e.target.startsWith('src/') && layers.includes(layerOf(e.target));
const outsideLayers = (...layers: string[]) => (e: Edge) => e.target !== undefined && (!e.target.startsWith('src/') || !layers.includes(layerOf(e.target)));
/** The electron package family: electron itself, electron-log (and its subpaths), electron-*. */
const isElectron = (e: Edge) => e.target === undefined && /^electron($|-)/.test(packageOf(e.spec));
const isPackage = (e: Edge) => e.target === undefined;

/**
 * The direction inside core (docs/architecture.md): each part of src/core, lowest first. A file may
 * import its own part and the parts below it, never one above it, so adapters never reach into
 * use cases and the parts form one stack rather than a web. A new part must be placed here.
 */
const CORE_PARTS: readonly string[] = [
  'errors', // foundation: no I/O of their own
  'env',
  'log',
  'limits',
  'payload',
  'localTools',
  'config', // the node store, known hosts, the home dir
  'standalone', // where bundled assets are
  'appPaths',
  'ssh', // adapters: an SSH connection and its tunnel …
  'sftp', // … the SFTP channel …
  'containerd', // … containerd's API through the tunnel …
  'credentials', // … passwords and passphrases asked for while connecting …
  'access', // … and the node's files (SFTP as root, sudo otherwise)
  'archives', // reading what is on a node: image archives and k3s's lists …
  'signatures', // … the signatures carried with images, checked offline …
  'images', // … the images containerd holds …
  'node', // … one session tying a node's adapters together …
  'audit', // … what Holdfast recorded …
  'needs', // … and what the site's workloads need
  'disk', // the image filesystem and kubelet's GC thresholds
  'jobs', // long work with progress and cancel
  'usecases', // inventory, pin, remove, prune, upload, import, fleet: the adapters put to work
  'live', // events while the app watches
  'service', // the composition root every transport calls
];
const coreRank = new Map(CORE_PARTS.map((p, i) => [p, i] as const));
/** 'src/core/usecases/import/run.ts' → 'usecases'; 'src/core/errors.ts' → 'errors'. */
const corePartOf = (file: string) => file.split('/')[2]!.replace(/\.tsx?$/, '');
/** An import from one part of core into a part above it (or one the table does not place). */
const againstCoreDirection = (file: string) => (e: Edge) => {
  if (!e.target?.startsWith('src/core/')) return false;
  const from = corePartOf(file);
  const to = corePartOf(e.target);
  if (from === to) return false;
  const a = coreRank.get(from);
  const b = coreRank.get(to);
  return a === undefined || b === undefined || b >= a;
};

/**
 * The npm packages a verdict or record (src/shared) may use, pure parsers and checks: zod (the
 * contract's schemas, the pin set's format) and yaml (a pin set file's text). No other: an
 * adapter's package (ssh2, grpc-js…) never reaches a rule, so a verdict stays a pure function.
 */
const SHARED_PACKAGES: ReadonlySet<string> = new Set(['zod', 'yaml']);

/**
 * The CLI's printers: modules whose job is turning results into text for the terminal. They import
 * only shared, npm packages and each other, so no core type or code reaches one, not even through
 * another CLI module; whatever they need is passed in (#47). Every src/cli/*Text.ts is one.
 */
const CLI_PRINTERS: ReadonlySet<string> = new Set(
  ['output', 'format', 'fit', 'screen', 'progress', 'help', 'pinPlan', 'lostPins', 'transferRows', 'pinText', 'peersText', 'registriesText', 'kubeNodeText', 'remedyText', 'commandLine'].map(
    (m) => `src/cli/${m}.ts`,
  ),
);
const isPrinter = (file: string) => CLI_PRINTERS.has(file) || /^src\/cli\/[^/]+Text\.ts$/.test(file);

interface Rule {
  name: string;
  /** A src layer, or '*' for every file under src. */
  layer: string;
  bad: (e: Edge, file: string) => boolean;
  /** One import this rule must catch (file, edge): checked against the rule on its own graph. */
  injected: [string, Edge];
}

const RULES: Rule[] = [
  {
    name: 'core imports no electron, renderer, server, main, cli or preload',
    layer: 'core',
    bad: (e) => isElectron(e) || intoLayers('renderer', 'server', 'main', 'cli', 'preload')(e),
    injected: ['src/core/x.ts', { spec: 'electron-log/node', typeOnly: false }],
  },
  {
    name: 'core reaches no layer above it (cli)',
    layer: 'core',
    bad: intoLayers('renderer', 'server', 'main', 'cli', 'preload'),
    injected: ['src/core/x.ts', { spec: '../cli/format', target: 'src/cli/format.ts', typeOnly: false }],
  },
  {
    name: 'renderer imports only its own files, shared and web packages: no Node builtins, no electron, no core',
    layer: 'renderer',
    bad: (e) => outsideLayers('renderer', 'shared')(e) || (isPackage(e) && (isBuiltin(e.spec) || isElectron(e))),
    injected: ['src/renderer/x.ts', { spec: 'node:fs', typeOnly: false }],
  },
  { name: 'main does not import server or renderer', layer: 'main', bad: intoLayers('server', 'renderer'), injected: ['src/main/x.ts', { spec: '../server/http', target: 'src/server/http.ts', typeOnly: true }] },
  { name: 'server does not import main, renderer or preload', layer: 'server', bad: intoLayers('main', 'renderer', 'preload'), injected: ['src/server/x.ts', { spec: '../main/ipc', target: 'src/main/ipc.ts', typeOnly: false }] },
  { name: 'cli does not import main, renderer or preload', layer: 'cli', bad: intoLayers('main', 'renderer', 'preload'), injected: ['src/cli/x.ts', { spec: '../renderer/model/images', target: 'src/renderer/model/images.ts', typeOnly: false }] },
  {
    name: "the CLI's output module (src/cli/output.ts) imports no core: printers print what they are given (#47)",
    layer: 'cli',
    bad: (e, file) => file === 'src/cli/output.ts' && intoLayers('core')(e),
    injected: ['src/cli/output.ts', { spec: '../core/errors', target: 'src/core/errors.ts', typeOnly: true }],
  },
  {
    name: "printers (CLI_PRINTERS, src/cli/*Text.ts) import only shared, packages and other printers: never core, not even through the CLI's other modules (#47)",
    layer: 'cli',
    bad: (e, file) => isPrinter(file) && e.target !== undefined && !e.target.startsWith('src/shared/') && !isPrinter(e.target),
    // the type of the CLI's context, which imports core: a printer is handed its output instead
    injected: ['src/cli/pinPlan.ts', { spec: './context', target: 'src/cli/context.ts', typeOnly: true }],
  },
  {
    name: 'shared imports nothing from the other layers, no Node builtins and no electron',
    layer: 'shared',
    bad: (e) => outsideLayers('shared')(e) || (isPackage(e) && (isBuiltin(e.spec) || isElectron(e))),
    injected: ['src/shared/x.ts', { spec: 'electron', typeOnly: false }],
  },
  {
    name: 'verdicts and records (src/shared) import no adapter: no core, no Node builtin, no npm package but SHARED_PACKAGES (#47)',
    layer: 'shared',
    bad: (e) => intoLayers('core')(e) || (isPackage(e) && (isBuiltin(e.spec) || !SHARED_PACKAGES.has(packageOf(e.spec)))),
    // an adapter's package, type-only: the general shared rule above lets it through
    injected: ['src/shared/fate.ts', { spec: 'ssh2', typeOnly: true }],
  },
  {
    name: 'preload imports only shared and electron',
    layer: 'preload',
    bad: (e) => outsideLayers('shared')(e) || (isPackage(e) && e.spec !== 'electron'),
    injected: ['src/preload/x.ts', { spec: 'electron-log/renderer', typeOnly: false }],
  },
  {
    name: 'inside core, each part imports only itself and the parts below it (CORE_PARTS)',
    layer: 'core',
    bad: (e, file) => againstCoreDirection(file)(e),
    injected: ['src/core/access/x.ts', { spec: '../usecases/upload/upload', target: 'src/core/usecases/upload/upload.ts', typeOnly: true }],
  },
  {
    name: 'nothing under src imports lab/, test/, e2e/ or bench/ (tooling, never shipped)',
    layer: '*',
    bad: (e) => e.target !== undefined && !e.target.startsWith('src/'),
    injected: ['src/core/x.ts', { spec: '../../lab/index.ts', target: 'lab/index.ts', typeOnly: false }],
  },
];

describe('layers (the import graph of src/)', () => {
  it('parses every source file, and sees the imports it should', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/preload/index.ts')!.map((e) => e.target ?? e.spec)).toEqual(expect.arrayContaining(['electron', 'src/shared/channels.ts']));
    // type-only imports are told apart (the cycle rule counts them; the zod rule does not)
    expect(graph.get('src/preload/index.ts')!.find((e) => e.target === 'src/shared/contract.ts')?.typeOnly).toBe(true);
    // createRequire(…)('x') is an import too (src/core/standalone.ts loads node:sea so)
    expect(graph.get('src/core/standalone.ts')!.map((e) => e.spec)).toContain('node:sea');
  });

  it.each(RULES.map((r) => [r.name, r] as const))('%s', (_name, rule) => {
    expect(violations(rule.layer, rule.bad)).toEqual([]);
  });

  it.each(RULES.map((r) => [r.name, r] as const))('catches an injected violation: %s', (_name, rule) => {
    const [file, edge] = rule.injected;
    expect(violations(rule.layer, rule.bad, new Map([[file, [edge]]]))).toEqual([`${file} → ${edge.target ?? edge.spec}`]);
  });

  it('preload pulls no zod at run time (type-only imports are erased)', () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const e of graph.get(file) ?? []) {
        if (e.typeOnly) continue;
        if (e.target) walk(e.target);
        else packages.add(`${packageOf(e.spec)} (from ${file})`);
      }
    };
    walk('src/preload/index.ts');
    expect([...packages]).toEqual(['electron (from src/preload/index.ts)']);
  });

  it('src has no import cycles', () => {
    // Tarjan's strongly connected components; each one of more than a file (or a file importing
    // itself) is reported as one concrete cycle through it.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const components: string[][] = [];
    let next = 0;
    const targets = (f: string) => (graph.get(f) ?? []).flatMap((e) => (e.target && graph.has(e.target) ? [e.target] : []));
    const strong = (v: string) => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of targets(v)) {
        if (!index.has(w)) {
          strong(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const c: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          c.push(w);
        } while (w !== v);
        if (c.length > 1 || targets(v).includes(v)) components.push(c);
      }
    };
    for (const f of [...graph.keys()].sort()) if (!index.has(f)) strong(f);

    const cycleThrough = (component: string[]): string => {
      const inside = new Set(component);
      const start = [...component].sort()[0]!;
      // breadth-first from start back to start, within the component
      const prev = new Map<string, string>();
      const queue = [start];
      while (queue.length) {
        const v = queue.shift()!;
        for (const w of targets(v)) {
          if (!inside.has(w)) continue;
          if (w === start) {
            const pathBack = [v];
            while (pathBack[0] !== start) pathBack.unshift(prev.get(pathBack[0]!)!);
            return [...pathBack, start].join(' → ');
          }
          if (!prev.has(w)) {
            prev.set(w, v);
            queue.push(w);
          }
        }
      }
      return component.join(', ');
    };
    expect(components.map(cycleThrough).sort()).toEqual([]);
  });
});
