// The names an archive may be uploaded under (core/usecases/upload/targetName): a suffix k3s imports, as
// the node's release walks the images dir, and a compression that matches the bytes.
import { describe, expect, it } from 'vitest';
import { HoldfastError } from '../../../../../src/core/errors';
import { checkArchiveName, renamedFor } from '../../../../../src/core/usecases/upload/targetName';

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

describe('checkArchiveName on an RKE2 node', () => {
  const rke2 = { ...modern, who: 'RKE2' };
  it('names RKE2 in every refusal and its hint, and k3s when no distro is given', () => {
    const txt = refusal(() => checkArchiveName('x.txt', { ...rke2, compression: 'gzip' }));
    expect(txt.message).toBe('x.txt is not a name RKE2 imports this archive under: RKE2 reads a .txt file as a list of image references to pull (and pin), not as an archive. Nothing was sent.');
    const ignored = refusal(() => checkArchiveName('y.tar.xz', rke2));
    expect(ignored.message).toMatch(/^y\.tar\.xz is not a name RKE2 imports this archive under: RKE2 ignores it \(it imports only \.tar /);
    expect(ignored.hint).toMatch(/^Name it with a suffix RKE2 imports: \.tar /);
    expect(refusal(() => checkArchiveName('APP.TAR', rke2)).message).toMatch(/RKE2 matches archive suffixes case-sensitively since v1\.34\.0/);
    expect(refusal(() => checkArchiveName('sub/a.tar', { walk: 'top-level-case-insensitive', who: 'RKE2' })).message).toMatch(/this RKE2 release reads only the top level/);
    expect(refusal(() => checkArchiveName('z.tar.gz', { ...rke2, compression: 'none' })).message).toMatch(/: RKE2 would fail to read it\./);
    expect(checkArchiveName('sub/a.tar', { walk: 'unknown', who: 'RKE2' })).toEqual([
      'sub/a.tar is in a subfolder: RKE2 releases before v1.34.0, v1.33.1, v1.32.5, v1.31.9, v1.30.13 read only the top level of the images dir, and this node\'s release is unknown.',
    ]);
    expect(refusal(() => checkArchiveName('y.tar.xz', modern)).message).toMatch(/not a name k3s imports this archive under: k3s ignores it/);
  });
});
