import { describe, expect, it } from 'vitest';
import { isAbsoluteLocalPath, parsePathInput } from '../../../../src/renderer/model/paths';

describe('archive paths typed or pasted', () => {
  it('path input: one per line, quotes dropped; only absolute paths count', () => {
    expect(parsePathInput(' "/a b/x.tar" \n\n\'/y.tar.gz\'\r\n/z.tzst ')).toEqual(['/a b/x.tar', '/y.tar.gz', '/z.tzst']);
    expect(isAbsoluteLocalPath('/x.tar')).toBe(true);
    expect(isAbsoluteLocalPath('C:\\bundles\\x.tar')).toBe(true);
    expect(isAbsoluteLocalPath('bundles/x.tar')).toBe(false);
  });
});
