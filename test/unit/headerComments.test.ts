// File headers a reader can take in at a glance (issue #47): the comment block a .ts/.tsx file
// under src/ opens with (up to its first blank line, import or code) is at most 8 lines — the
// why, not the history. Generated files (the protobuf codecs) are skipped.
// The headers over the budget today are listed in OVER_BUDGET with their length; the list may only
// shrink: a listed header that grew, is now within the budget, or whose file is gone fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
const BUDGET = 8;

/** Headers still over the budget: file → comment lines today. Only ever remove a line or lower its count. */
const OVER_BUDGET: Record<string, number> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(n) && !/\.(d|generated)\.ts$/.test(n) ? [p] : [];
  });
}

/**
 * The opening comment block: // lines and /* … *\/ blocks up to the first blank line or code.
 * A /** block after // lines is the first declaration's own doc comment, not the header.
 */
function headerLength(text: string): number {
  const lines = text.split('\n');
  let n = 0;
  let inBlock = false;
  for (const [i, line] of lines.entries()) {
    const t = line.trim();
    if (i === 0 && t.startsWith('#!')) continue;
    if (inBlock) {
      n++;
      if (t.includes('*/')) inBlock = false;
      continue;
    }
    if (t === '') {
      if (n > 0) break; // a blank line ends the header
      continue;
    }
    if (t.startsWith('//')) {
      n++;
      continue;
    }
    if (t.startsWith('/**') && n > 0) break; // the first declaration's own doc comment
    if (t.startsWith('/*')) {
      n++;
      inBlock = !t.slice(2).includes('*/');
      continue;
    }
    break;
  }
  return n;
}

const lengths = new Map(sourceFiles(path.join(root, 'src')).map((f) => [rel(f), headerLength(readFileSync(f, 'utf8'))]));

describe('file header comments', () => {
  it('measures the // lines and /* */ blocks a file opens with', () => {
    expect(headerLength('#!/usr/bin/env node\n// a\n// b\n\nimport x from "y";\n// later\n')).toBe(2);
    expect(headerLength('/**\n * a\n * b\n */\n// c\nexport const x = 1;\n')).toBe(5);
    expect(headerLength('/* one */\nconst x = 1;\n')).toBe(1);
    expect(headerLength('import x from "y";\n// not a header\n')).toBe(0);
    expect(headerLength('// a\n/** The first export. */\nexport const x = 1;\n')).toBe(1);
    expect(headerLength('\n// a\n// b\n\n// the next declaration\'s comment\nconst x = 1;\n')).toBe(2);
  });

  it(`no file under src opens with more than ${BUDGET} comment lines, except those listed`, () => {
    const over = [...lengths].filter(([f, n]) => n > BUDGET && !(f in OVER_BUDGET)).map(([f, n]) => `${f}: ${n}`);
    expect(over).toEqual([]);
  });

  it('the list of headers over the budget only shrinks', () => {
    const stale = Object.entries(OVER_BUDGET).flatMap(([f, was]) => {
      const now = lengths.get(f);
      if (now === undefined) return [`${f}: gone, remove it from OVER_BUDGET`];
      if (now > was) return [`${f}: grew from ${was} to ${now} lines`];
      if (now <= BUDGET) return [`${f}: now ${now} lines, remove it from OVER_BUDGET`];
      if (now < was) return [`${f}: shrank to ${now} lines, lower its count`];
      return [];
    });
    expect(stale).toEqual([]);
  });
});
