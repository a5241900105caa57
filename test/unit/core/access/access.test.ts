// Pure parts of sudo file access and jump chains: find/stat output parsing, walk order, cycles.
import { describe, expect, it } from 'vitest';
import { parseFindOutput, parseStatLine } from '../../../../src/core/access';
import { sortWalkOrder } from '../../../../src/core/access/common';
import { resolveJumpChain } from '../../../../src/core/node/session';
import { completeNode } from '../../../../src/core/config/nodes';
import type { NodeDef } from '../../../../src/shared/domain/nodes';

describe('sudo find output', () => {
  it('keeps names with tabs, newlines, quotes and $(…) whole', () => {
    const odd = "a b'c$(touch x);d\n\t.tar";
    const out = `f\t10\t1700000000.5000000000\t12:1700000000.5000000000\tapp.tar\0l\t7\t1700000001.0\t13:1700000001.0\tlink.tar\0f\t3\t1700000002.9\t14:1700000009.25\tsub/${odd}\0`;
    expect(parseFindOutput(out)).toEqual([
      { type: 'f', size: 10, mtime: 1700000000, changeId: '12:1700000000.5000000000', path: 'app.tar' },
      { type: 'l', size: 7, mtime: 1700000001, changeId: '13:1700000001.0', path: 'link.tar' },
      { type: 'f', size: 3, mtime: 1700000002, changeId: '14:1700000009.25', path: `sub/${odd}` },
    ]);
  });

  it('parses stat -c "%f %s %Y %i %z" (and without the inode and ctime)', () => {
    expect(parseStatLine('81a4 1234 1700000000 131 2023-11-14 22:13:20.123456789 +0000\n')).toEqual({
      type: 'file',
      size: 1234,
      mtime: 1700000000,
      changeId: '131:2023-11-14 22:13:20.123456789 +0000',
    });
    expect(parseStatLine('81a4 1234 1700000000\n')).toEqual({ type: 'file', size: 1234, mtime: 1700000000 });
    expect(parseStatLine('41ed 4096 1')).toMatchObject({ type: 'dir' });
    expect(parseStatLine('a1ff 7 1')).toMatchObject({ type: 'symlink' });
    expect(parseStatLine('garbage')).toBeNull();
  });

  it('orders a listing like the depth-first SFTP walk', () => {
    const f = (p: string) => ({ path: p, abs: `/d/${p}`, size: 0, mtime: 0 });
    const sorted = sortWalkOrder([f('z.tar'), f('b/2.tar'), f('a.tar'), f('b/1.tar'), f('b/c/0.tar')]).map((x) => x.path);
    expect(sorted).toEqual(['a.tar', 'b/1.tar', 'b/2.tar', 'b/c/0.tar', 'z.tar']);
  });
});

describe('jump chains', () => {
  const node = (name: string, jump?: string): NodeDef => completeNode({ name, host: `${name}.example`, ...(jump ? { jump } : {}) });
  const lookup = (defs: NodeDef[]) => async (n: string) => {
    const d = defs.find((x) => x.name === n);
    if (!d) throw new Error('missing');
    return d;
  };

  it('resolves hops first hop first', async () => {
    const defs = [node('a'), node('b', 'a'), node('c', 'b')];
    expect((await resolveJumpChain(defs[2]!, lookup(defs))).map((d) => d.name)).toEqual(['a', 'b']);
    expect(await resolveJumpChain(defs[0]!, lookup(defs))).toEqual([]);
  });

  it('refuses cycles, unknown hops and missing lookups', async () => {
    const defs = [node('a', 'c'), node('b', 'a'), node('c', 'b')];
    await expect(resolveJumpChain(defs[2]!, lookup(defs))).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('c → b → a → c') });
    await expect(resolveJumpChain(node('x', 'nope'), lookup(defs))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(resolveJumpChain(node('x', 'a'))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
