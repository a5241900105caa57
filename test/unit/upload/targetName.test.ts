// The names an archive may be uploaded under (core/usecases/upload/targetName): a suffix k3s imports, as
// the node's release walks the images dir, and a compression that matches the bytes.
import { describe, expect, it } from 'vitest';
import { HoldfastError } from '../../../src/core/errors';
import { checkArchiveName, renamedFor } from '../../../src/core/usecases/upload/targetName';

const refusal = (f: () => unknown): HoldfastError => {
  try {
    f();
  } catch (e) {
    if (e instanceof HoldfastError) return e;
    throw e;
  }
  throw new Error('not refused');
};
const modern = { walk: 'recursive-case-sensitive' as const };

describe('checkArchiveName', () => {
  it('refuses a pre-pull list name: k3s would pull what it names', () => {
    const e = refusal(() => checkArchiveName('x.txt', { ...modern, compression: 'gzip' }));
    expect(e.code).toBe('REFUSED');
    expect(e.message).toMatch(/x\.txt is not a name k3s imports this archive under: k3s reads a \.txt file as a list of image references to pull/);
    expect(e.hint).toBe('Upload it as x.tar.gz (--as x.tar.gz).');
  });

  it('refuses a suffix k3s ignores, and an upper-case one on releases that match case-sensitively', () => {
    expect(refusal(() => checkArchiveName('y.tar.xz', modern)).message).toMatch(/k3s ignores it \(it imports only \.tar \.tar\.lz4/);
    expect(refusal(() => checkArchiveName('APP.TAR', modern)).message).toMatch(/case-sensitively since v1\.34\.0/);
    expect(checkArchiveName('APP.TAR', { walk: 'top-level-case-insensitive' })).toEqual([]);
  });

  it('refuses a name whose compression is not what the archive is', () => {
    const e = refusal(() => checkArchiveName('z.tar.gz', { ...modern, compression: 'none' }));
    expect(e.message).toMatch(/the name says gzip, but the archive is an uncompressed tar: k3s would fail to read it/);
    expect(e.hint).toBe('Upload it as z.tar (--as z.tar).');
    expect(checkArchiveName('z.tgz', { ...modern, compression: 'gzip' })).toEqual([]);
    expect(checkArchiveName('z.tzst', { ...modern, compression: 'zstd' })).toEqual([]);
    // bytes Holdfast cannot name (not a known magic) are left to the local inspection
    expect(checkArchiveName('z.tar.gz', { ...modern, compression: null })).toEqual([]);
  });

  it('refuses hidden names and folders (RKE2 skips them; Holdfast stages under such names)', () => {
    expect(refusal(() => checkArchiveName('.app.tar', modern)).message).toMatch(/starting with "\." is hidden/);
    expect(refusal(() => checkArchiveName('.d/app.tar', modern)).message).toMatch(/hidden/);
  });

  it('refuses a subfolder on releases that read the top level only, and warns when the release is unknown', () => {
    expect(refusal(() => checkArchiveName('apps/app.tar', { walk: 'top-level-case-insensitive' })).message).toMatch(/reads only the top level/);
    expect(checkArchiveName('apps/app.tar', modern)).toEqual([]);
    expect(checkArchiveName('apps/app.tar', { walk: 'unknown' })[0]).toMatch(/apps\/app\.tar is in a subfolder: k3s releases before v1\.34\.0/);
    expect(checkArchiveName('app.tar', { walk: 'unknown' })).toEqual([]);
  });
});

describe('renamedFor', () => {
  it('swaps the suffix for the one that names the compression', () => {
    expect(renamedFor('z.tar.gz', 'none')).toBe('z.tar');
    expect(renamedFor('apps/y.tar.xz', 'zstd')).toBe('apps/y.tar.zst');
    expect(renamedFor('x.txt', 'lz4')).toBe('x.tar.lz4');
  });
});
