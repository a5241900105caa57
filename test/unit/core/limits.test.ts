// The limits are documented once: the table in docs/limits.md is what src/core/limits.ts renders,
// and every limit's message names it the same way.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLimit, LIMITS, limitError, renderLimitsTable, type LimitName } from '../../../src/core/limits';

describe('limits', () => {
  it('the table in docs/limits.md is the one rendered from src/core/limits.ts (npx tsx scripts/limits-doc.ts writes it)', () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../../docs/limits.md'), 'utf8');
    const m = /<!-- limits:start -->\n([\s\S]*?)\n<!-- limits:end -->/.exec(doc);
    expect(m, 'docs/limits.md has the limits markers').not.toBeNull();
    expect(m![1]).toBe(renderLimitsTable());
  });

  it('values read as people write them', () => {
    expect(formatLimit('archive.jsonMemberBytes')).toBe('4 MiB');
    expect(formatLimit('archive.expansionGraceBytes')).toBe('1 GiB');
    expect(formatLimit('archive.memberNameBytes')).toBe('4 KiB');
    expect(formatLimit('archive.references')).toBe('10,000');
    expect(formatLimit('archive.expansionRatio')).toBe('1,000:1');
    for (const n of Object.keys(LIMITS) as LimitName[]) expect(LIMITS[n].value, n).toBeGreaterThan(0);
  });

  it('an error over a limit names it', () => {
    const e = limitError('http.bodyBytes', 'The body is 2 MiB.', 'INVALID_INPUT');
    expect(e.toInfo()).toEqual({ code: 'INVALID_INPUT', message: 'The body is 2 MiB: over the limit http.bodyBytes (1 MiB).' });
  });
});
