// The benchmark tables in docs/benchmarks.md are written by the benchmarks that measure them,
// never typed by hand: each benchmark renders its table and calls writeBenchSection, which
// replaces what lies between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` there
// (a section not there yet is added at the end of the file). The prose around the markers is
// kept as it is.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BENCHMARKS_DOC = path.resolve(import.meta.dirname, '..', 'docs', 'benchmarks.md');

/** One line naming the machine and its load, printed under every table a benchmark writes. */
export function machineLine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' / ');
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'CPU'}, load average ${load} at the end of the run, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function markers(name: string): { start: string; end: string } {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad section name ${name}`);
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

/** What a section holds now (between its markers), or '' when it is not there yet. */
export function readBenchSection(name: string, doc = BENCHMARKS_DOC): string {
  const { start, end } = markers(name);
  const text = readFileSync(doc, 'utf8');
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  return i >= 0 && j > i ? text.slice(i + start.length, j) : '';
}

export function writeBenchSection(name: string, markdown: string, doc = BENCHMARKS_DOC): void {
  const { start, end } = markers(name);
  const text = readFileSync(doc, 'utf8');
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  const next = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(doc, next);
  console.log(`${path.relative(process.cwd(), doc)}: section bench:${name} written`);
}
