// `npx tsx scripts/limits-doc.ts`: writes the limits table of docs/limits.md (between
// `<!-- limits:start -->` and `<!-- limits:end -->`) from src/core/limits.ts, the one place the
// values live. test/unit/core/limits.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderLimitsTable } from '../src/core/limits.ts';

const doc = path.resolve(import.meta.dirname, '..', 'docs', 'limits.md');
const START = '<!-- limits:start -->';
const END = '<!-- limits:end -->';
const text = readFileSync(doc, 'utf8');
const i = text.indexOf(START);
const j = text.indexOf(END);
if (i < 0 || j < i) {
  process.stderr.write(`${doc} has no ${START} … ${END} markers: put them where the table goes\n`);
  process.exit(1);
}
const next = `${text.slice(0, i)}${START}\n${renderLimitsTable()}\n${text.slice(j)}`;
if (next === text) console.log('docs/limits.md: the limits table is up to date');
else {
  writeFileSync(doc, next);
  console.log('docs/limits.md: the limits table written from src/core/limits.ts');
}
