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

  it('a direct delivery always pins durably and has no archive to remove (issue #35)', () => {
    expect(importOptionsProblem({ pin: true, removeArchive: true, direct: true })).toMatch(/puts no archive on the node/);
    expect(importOptionsProblem({ pin: true, removeArchive: false, direct: true })).toBeNull();
    expect(consistentImportOptions({ pin: false, removeArchive: true, direct: true, step: 'x' })).toEqual({ pin: true, removeArchive: false, direct: true, step: 'x' });
    const ok = { pin: true, removeArchive: false, direct: true };
    expect(consistentImportOptions(ok)).toBe(ok);
    // Back to the images dir: the choices stand as they are (pins off keeps removal off).
    expect(consistentImportOptions({ pin: true, removeArchive: true, direct: false })).toEqual({ pin: true, removeArchive: true, direct: false });
    for (const pin of [true, false]) for (const removeArchive of [true, false]) for (const direct of [true, false]) expect(importOptionsProblem(consistentImportOptions({ pin, removeArchive, direct }))).toBeNull();
  });
});
