// What is wrong with the images dir's own path (core/access/imagesDirCheck), from what stat and
// lstat say of it: each case the file system distinguishes.
import { describe, expect, it } from 'vitest';
import { imagesDirProblem } from '../../../../src/core/access/imagesDirCheck';
import type { FileAccess, RemoteFileType, RemoteStat } from '../../../../src/core/access/types';

const ROOT = '/var/lib/rancher/k3s/agent/images';
type Stat = RemoteFileType | null | 'error';
/** A node whose images dir path has `own` as its lstat and `target` as its stat ('error': ELOOP). */
const node = (own: Stat, target: Stat = own): Pick<FileAccess, 'stat'> => ({
  async stat(p: string, opts?: { lstat?: boolean }): Promise<RemoteStat | null> {
    expect(p).toBe(ROOT);
    const t = opts?.lstat ? own : target;
    if (t === 'error') throw new Error('Too many levels of symbolic links');
    return t === null ? null : { type: t, size: 0, mtime: 0 };
  },
});

describe('imagesDirProblem', () => {
  it.each([
    ['a folder', node('dir'), null],
    ['missing (k3s creates it)', node(null), null],
    ['a link to a folder', node('symlink', 'dir'), null],
    ['a dangling link', node('symlink', null), 'is a symlink that leads nowhere (its target is missing, or the links loop)'],
    ['a link loop', node('symlink', 'error'), 'is a symlink that leads nowhere (its target is missing, or the links loop)'],
    ['a link to a file', node('symlink', 'file'), 'is a symlink to a file, not to a folder'],
    ['a link to a FIFO', node('symlink', 'other'), 'is a symlink to a special file, not to a folder'],
    ['a file', node('file'), 'is a file, not a folder'],
    ['a FIFO', node('other'), 'is a special file, not a folder'],
  ] as const)('%s', async (_, files, want) => {
    expect(await imagesDirProblem(files, `${ROOT}/`)).toBe(want);
  });
});
