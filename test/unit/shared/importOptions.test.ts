import { describe, expect, it } from 'vitest';
import { consistentImportOptions, importOptionsProblem } from '../../../src/shared/importOptions';

describe('import options: removing the archive needs durable pins, one rule (issue #14)', () => {
  it('says why, or null', () => {
    expect(importOptionsProblem({ pin: false, removeArchive: true })).toMatch(/removing the archive needs its pins made durable first/);
    expect(importOptionsProblem({ pin: true, removeArchive: true })).toBeNull();
    expect(importOptionsProblem({ pin: true, removeArchive: false })).toBeNull();
    expect(importOptionsProblem({ pin: false, removeArchive: false })).toBeNull();
  });

  it('the wizard never keeps one without the other', () => {
    expect(consistentImportOptions({ pin: false, removeArchive: true, step: 'x' })).toEqual({ pin: false, removeArchive: false, step: 'x' });
    const ok = { pin: true, removeArchive: true };
    expect(consistentImportOptions(ok)).toBe(ok);
    for (const pin of [true, false]) for (const removeArchive of [true, false]) expect(importOptionsProblem(consistentImportOptions({ pin, removeArchive }))).toBeNull();
  });
});
