import { describe, expect, it } from 'vitest';
import { jsonNestingDepth } from '../../../src/shared/jsonDepth';

describe('jsonNestingDepth', () => {
  it('counts objects and arrays, not what strings hold', () => {
    expect(jsonNestingDepth('3')).toBe(0);
    expect(jsonNestingDepth('{}')).toBe(1);
    expect(jsonNestingDepth('{"a":[1,{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonNestingDepth('{"[[[{{{": "]]]}}}[[["}')).toBe(1);
    expect(jsonNestingDepth('{"a\\"[[[": "\\\\", "b": [[]]}')).toBe(3);
  });
  it('stops once past the bound', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    expect(jsonNestingDepth(deep, 64)).toBe(65);
    expect(jsonNestingDepth(deep)).toBe(1_000_000);
  });
});
