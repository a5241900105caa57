// Counts what a reader meets following `holdfast pin NODE --needed` from the flag to the label
// write (docs/architecture.md, "Following one flow: the counts"). The path is listed by hand, read
// from the code: each step is a file and the functions on the call chain in it. The script takes
// each function's text and counts the files and the named types it names.
// Usage: node scripts/flow-count.mjs [before|after] [repo dir]   (before: a checkout of 3f57b54)
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const CLI = [
  ['src/cli/commands/pin.ts', ['.action(']],
  ['src/cli/context.ts', ['call: (channel, args) =>']],
  ['src/cli/service.ts', ['async call(channel, args) {']],
];
const SERVICE = [
  ['src/shared/dispatch.ts', ['export async function dispatch(']],
  ['src/core/service/images.ts', ["'pins.apply':"]],
  ['src/core/service/parts.ts', ['async during<T>(']],
  ['src/core/node/pool.ts', ['async use<T>(']],
];
/** The steps from the service handler on; `sig:` takes a function's signature line only (called, not followed). */
const PATHS = {
  before: [
    ...CLI,
    ['src/server/dispatch.ts', ['export function dispatch(']],
    ...SERVICE,
    ['src/core/usecases/operations.ts', ['export async function applyPinChange(', 'export async function planPinChange(', 'export async function inventory(', 'export function inspectOptions(']],
    ['src/core/usecases/inspect.ts', ['sig:export async function inspectNode(']],
    ['src/core/pins/plan.ts', ['export function planPins(', 'export function selectRefs(', 'export function expandToImages(', 'export function labelDelta(']],
    ['src/core/pins/apply.ts', ['export async function applyPinPlan(']],
    ['src/core/containerd/client.ts', ['async updateImageLabels(']],
  ],
  after: [
    ...CLI,
    ...SERVICE,
    ['src/core/usecases/pin/apply.ts', ['export async function applyPinChange(', 'export async function applyPinPlan(']],
    ['src/core/usecases/pin/plan.ts', ['export async function planPinChange(', 'export function buildPinPlan(', 'export function selectRefs(', 'export function expandToImages(', 'export function labelDelta(']],
    ['src/core/usecases/inventory.ts', ['export async function inventory(', 'export function inventoryOptions(', 'sig:export async function readInventory(']],
    ['src/core/containerd/client.ts', ['async updateImageLabels(']],
  ],
};

const [which = 'after', dir = '.'] = process.argv.slice(2);
const root = path.resolve(dir);
const read = (f) => readFileSync(path.join(root, f), 'utf8');

/** Comments and plain string literals out, so only code is counted. */
const code = (s) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1').replace(/'(?:[^'\\\n]|\\.)*'/g, "''");

/** The text of the function (or one-line property) an anchor starts: to the `}` at its indentation. */
function stepText(src, anchor) {
  const sig = anchor.startsWith('sig:');
  const a = sig ? anchor.slice(4) : anchor;
  const lines = src.split('\n');
  const i = lines.findIndex((l) => l.includes(a));
  if (i < 0) throw new Error(`anchor not found: ${a}`);
  if (sig || /[,;]\s*$/.test(lines[i])) return lines[i];
  const indent = lines[i].match(/^\s*/)[0].length;
  const end = lines.findIndex((l, j) => j > i && l.match(/^\s*/)[0].length === indent && l.trim().startsWith('}'));
  return lines.slice(i, end + 1).join('\n');
}

function resolve(from, spec) {
  const base = path.join(path.dirname(from), spec);
  for (const c of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), base]) if (existsSync(path.join(root, c)) && statSync(path.join(root, c)).isFile()) return c;
  return undefined;
}

const declares = (file, name) => new RegExp(`^\\s*(export\\s+)?(declare\\s+)?(abstract\\s+)?(interface|type|class|enum)\\s+${name}\\b`, 'm').test(read(file));

/** The file that declares `name` as a type, following `export … from` re-exports; else undefined. */
function typeHome(file, name, seen = new Set()) {
  if (seen.has(file)) return undefined;
  seen.add(file);
  if (declares(file, name)) return file;
  for (const m of read(file).matchAll(/export\s+(?:type\s+)?(\{[^}]*\}|\*)\s+from\s+'([^']+)'/g)) {
    if (m[1] !== '*' && !new RegExp(`\\b${name}\\b`).test(m[1])) continue;
    const t = m[2].startsWith('.') && resolve(file, m[2]);
    const home = t && typeHome(t, name, seen);
    if (home) return home;
  }
  return undefined;
}

/** name → where it comes from, for every name a file imports (packages: type-only imports only). */
function importsOf(file) {
  const out = new Map();
  for (const m of read(file).matchAll(/import\s+(type\s+)?([\s\S]*?)\s+from\s+'([^']+)'/g)) {
    const [, allType, clause, spec] = m;
    const named = clause.match(/\{([\s\S]*)\}/)?.[1] ?? '';
    for (const part of named.split(',').map((p) => p.trim()).filter(Boolean)) {
      const isType = Boolean(allType) || part.startsWith('type ');
      const [orig, local = orig] = part.replace(/^type\s+/, '').split(/\s+as\s+/);
      out.set(local, { orig, spec, isType });
    }
  }
  return out;
}

const files = new Set();
const types = new Map(); // "Name (file)" → first step met
for (const [file, anchors] of PATHS[which]) {
  files.add(file);
  const src = read(file);
  const imported = importsOf(file);
  for (const anchor of anchors) {
    for (const id of new Set(code(stepText(src, anchor)).match(/\b[A-Z][A-Za-z0-9]*\b/g) ?? [])) {
      let home;
      const imp = imported.get(id);
      if (imp && imp.spec.startsWith('.')) home = typeHome(resolve(file, imp.spec) ?? '', imp.orig);
      else if (imp && imp.isType) home = imp.spec;
      else if (!imp && declares(file, id)) home = file;
      if (home) types.set(`${imp?.orig ?? id} (${home})`, types.get(`${imp?.orig ?? id} (${home})`) ?? file);
    }
  }
}
console.log(`${which}: ${files.size} files, ${types.size} named types`);
for (const f of files) console.log(`  ${f}: ${[...types].filter(([, s]) => s === f).map(([t]) => t.split(' ')[0]).join(', ')}`);
