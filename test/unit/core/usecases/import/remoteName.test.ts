// Where an import puts its archive (core/usecases/import/remoteName): its own name, unless k3s might
// never import a new file there.
import { describe, expect, it } from 'vitest';
import type { K3sImportCache } from '../../../../../src/core/archives/scan';
import { chooseRemoteName, freshName } from '../../../../../src/core/usecases/import/remoteName';

const SHA = 'ab'.repeat(32);
const archive = { path: '/tmp/bundle.tar.gz', size: 1000, sha256: SHA };
const noCache: K3sImportCache = { enabled: false, readable: true, entries: new Map() };
const node = (over: Partial<Parameters<typeof chooseRemoteName>[1]> = {}) => ({
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  files: [],
  importCache: noCache,
  distroVersion: 'v1.33.4+k3s1',
  ...over,
});

describe('chooseRemoteName', () => {
  it('uses the archive\'s own name when it is free', () => {
    expect(chooseRemoteName(archive, node())).toEqual({ relPath: 'bundle.tar.gz' });
  });

  it('never puts a new build under the name of another file: a fresh name from its SHA-256, the same every run', () => {
    const c = chooseRemoteName(archive, node({ files: [{ path: 'bundle.tar.gz', size: 900, mtime: 1 }] }));
    expect(c.relPath).toBe(`bundle.${SHA.slice(0, 12)}.tar.gz`);
    expect(c.renamed).toBe(`bundle.tar.gz on the node is another file: uploaded as bundle.${SHA.slice(0, 12)}.tar.gz`);
    // where k3s's watcher might not take a replacement, the reason says so
    const same = chooseRemoteName(archive, node({ files: [{ path: 'bundle.tar.gz', size: 900, mtime: 1 }], distroVersion: null }));
    expect(same.renamed).toMatch(/another file, and k3s keeps its record of that name \(a replacement might never be imported\)/);
  });

  it('keeps the name when a file of the same size is there (maybe this archive: the upload compares SHA-256s)', () => {
    expect(chooseRemoteName(archive, node({ files: [{ path: 'bundle.tar.gz', size: 1000, mtime: 1 }] })).relPath).toBe('bundle.tar.gz');
  });

  it('avoids a name .cache.json still records when no watcher would import the file first', () => {
    const cache: K3sImportCache = { enabled: true, readable: true, entries: new Map([['/var/lib/rancher/k3s/agent/images/bundle.tar.gz', { size: 1000, modTime: 1, modTimeNanos: 0, images: null }]]) };
    // a release with the watcher: renaming into place counts as new, and the watcher updates the record
    expect(chooseRemoteName(archive, node({ importCache: cache })).relPath).toBe('bundle.tar.gz');
    // unknown release: the next start may compare the new file with the old record (same size: skipped before #14284)
    const c = chooseRemoteName(archive, node({ importCache: cache, distroVersion: null }));
    expect(c.relPath).toBe(`bundle.${SHA.slice(0, 12)}.tar.gz`);
    expect(c.renamed).toMatch(/\.cache\.json still records an earlier bundle\.tar\.gz/);
  });
});

describe('freshName', () => {
  it('keeps the whole archive suffix', () => {
    expect(freshName('a.tar.zst', SHA)).toBe(`a.${SHA.slice(0, 12)}.tar.zst`);
    expect(freshName('a.tgz', SHA)).toBe(`a.${SHA.slice(0, 12)}.tgz`);
  });
});
