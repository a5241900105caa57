// The README's performance tables are written by the benchmarks that measure them, never typed
// by hand: each benchmark renders its table and calls writeReadmeSection, which replaces what
// lies between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` in README.md (the
// markers are added at the end of the Performance section the first time).
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const README = path.resolve(import.meta.dirname, '..', 'README.md');

/** One line naming the machine and its load, printed under every table a benchmark writes. */
export function machineLine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' / ');
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'CPU'}, load average ${load} at the end of the run, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function writeReadmeSection(name: string, markdown: string, readme = README): void {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad section name ${name}`);
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const text = readFileSync(readme, 'utf8');
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  let next: string;
  if (i >= 0 && j > i) next = text.slice(0, i) + block + text.slice(j + end.length);
  else {
    const layout = text.indexOf('\n## Layout');
    if (layout < 0) throw new Error('README.md has no "## Layout" section to put the table before');
    next = `${text.slice(0, layout)}\n${block}\n${text.slice(layout)}`;
  }
  writeFileSync(readme, next);
  console.log(`README.md: section bench:${name} written`);
}
