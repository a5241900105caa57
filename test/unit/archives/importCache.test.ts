// k3s's import cache (.cache.json) and .txt pre-pull lists, parsed against recorded real samples
// (fixtures/k3s-import-cache/SOURCES.md says where each came from) and hostile shapes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePrepullList } from '../../../src/core/archives/prepull';
import { cacheVerdict, parseK3sImportCache, parseRfc3339Seconds, type K3sImportCache } from '../../../src/core/archives/scan';

const FIX = path.join(import.meta.dirname, 'fixtures');
const sample = (name: string) => readFileSync(path.join(FIX, 'k3s-import-cache', name), 'utf8');
const DIR = '/var/lib/rancher/k3s/agent/images';
const sec = (iso: string) => Date.parse(iso) / 1000;
const enabled = (text: string): K3sImportCache => ({ enabled: true, ...parseK3sImportCache(text) });

describe('parseK3sImportCache on recorded samples', () => {
  it('the facts sheet sample: absolute in-node path, size, RFC 3339 modTime, images', () => {
    const c = parseK3sImportCache(sample('facts-sheet-busybox-tar.json'));
    expect(c.readable).toBe(true);
    expect([...c.entries]).toEqual([
      [`${DIR}/busybox.tar`, { size: 2245120, modTime: sec('2026-07-22T22:58:25Z'), images: ['docker.io/library/busybox:latest'] }],
    ]);
  });

  it('k3s PR #14266 (a .txt list is cached too, with the names it pinned)', () => {
    const c = parseK3sImportCache(sample('pr14266-busybox-txt.json'));
    expect(c.entries.get(`${DIR}/busybox.txt`)).toEqual({ size: 33, modTime: sec('2026-06-23T18:05:52Z'), images: ['docker.io/library/busybox:latest'] });
  });

  it('v1.36.2 (issue #14270) writes no images: nothing to re-pin', () => {
    const c = parseK3sImportCache(sample('issue14270-v1.36.2-busybox-txt.json'));
    expect(c.entries.get(`${DIR}/busybox.txt`)).toEqual({ size: 33, modTime: sec('2026-07-21T23:28:05Z'), images: null });
  });

  it('a release-1.34 build with the fix (issue #14272) and a compact v1.36.2 archive entry (issue #14317)', () => {
    expect(parseK3sImportCache(sample('issue14272-v1.34.9-f3f4ec51-busybox-txt.json')).entries.get(`${DIR}/busybox.txt`)?.images).toEqual([
      'docker.io/library/busybox:latest',
    ]);
    expect(parseK3sImportCache(sample('issue14317-v1.36.2-busybox-tar.compact.json')).entries.get(`${DIR}/busybox-latest1.tar`)).toEqual({
      size: 2245120,
      modTime: sec('2026-07-22T22:58:25Z'),
      images: null,
    });
  });

  it('the format the old code assumed ({size, mtime: ms}) is not an entry Holdfast can read', () => {
    const c = parseK3sImportCache(JSON.stringify({ [`${DIR}/a.tar`]: { size: 10, mtime: 1784761105000 } }));
    expect(c.entries.get(`${DIR}/a.tar`)).toBeNull();
  });
});

describe('parseK3sImportCache on hostile shapes', () => {
  it('an empty file enables the cache with no entries', () => {
    expect(parseK3sImportCache('')).toEqual({ readable: true, entries: new Map() });
    expect(parseK3sImportCache(' \n')).toEqual({ readable: true, entries: new Map() });
  });
  it.each(['not json', '[]', 'null', '42', '"x"', '{"a":', '\u0000'])('%j is unreadable', (text) => {
    expect(parseK3sImportCache(text).readable).toBe(false);
  });
  it('each malformed entry is marked unreadable, the others kept', () => {
    const c = parseK3sImportCache(
      JSON.stringify({
        '/ok': { size: 1, modTime: '2026-01-01T00:00:00Z' },
        '/nul': null,
        '/arr': [1],
        '/str': 'x',
        '/neg': { size: -1, modTime: '2026-01-01T00:00:00Z' },
        '/float': { size: 1.5, modTime: '2026-01-01T00:00:00Z' },
        '/big': { size: 2 ** 60, modTime: '2026-01-01T00:00:00Z' },
        '/strsize': { size: '1', modTime: '2026-01-01T00:00:00Z' },
        '/nomod': { size: 1 },
        '/badmod': { size: 1, modTime: 'yesterday' },
        '/nummod': { size: 1, modTime: 1767225600 },
      }),
    );
    expect(c.readable).toBe(true);
    expect(c.entries.get('/ok')).toEqual({ size: 1, modTime: sec('2026-01-01T00:00:00Z'), images: null });
    for (const k of ['/nul', '/arr', '/str', '/neg', '/float', '/big', '/strsize', '/nomod', '/badmod', '/nummod']) expect(c.entries.get(k), k).toBeNull();
  });
  it('a mistyped images field counts as no names (Go decodes it as absent)', () => {
    const c = parseK3sImportCache(
      JSON.stringify({
        '/a': { size: 1, modTime: '2026-01-01T00:00:00Z', images: 'docker.io/library/x:1' },
        '/b': { size: 1, modTime: '2026-01-01T00:00:00Z', images: ['docker.io/library/x:1', 7] },
        '/c': { size: 1, modTime: '2026-01-01T00:00:00Z', images: [] },
      }),
    );
    expect(c.entries.get('/a')?.images).toBeNull();
    expect(c.entries.get('/b')?.images).toBeNull();
    expect(c.entries.get('/c')?.images).toEqual([]);
  });
  it('prototype keys are plain keys', () => {
    const c = parseK3sImportCache('{"__proto__": {"size": 1, "modTime": "2026-01-01T00:00:00Z"}, "constructor": 1}');
    expect(c.entries.get('__proto__')).toEqual({ size: 1, modTime: sec('2026-01-01T00:00:00Z'), images: null });
    expect(c.entries.get('constructor')).toBeNull();
    expect(({} as Record<string, unknown>).size).toBeUndefined();
  });
});

describe('parseRfc3339Seconds (Go time.RFC3339 parsing, whole seconds)', () => {
  it.each([
    ['2026-07-22T22:58:25Z', sec('2026-07-22T22:58:25Z')],
    ['2026-07-22T22:58:25.999999999Z', sec('2026-07-22T22:58:25Z')],
    ['2026-07-22T22:58:25.5Z', sec('2026-07-22T22:58:25Z')],
    ['2026-07-23T00:58:25+02:00', sec('2026-07-22T22:58:25Z')],
    ['2026-07-22T20:28:25-02:30', sec('2026-07-22T22:58:25Z')],
  ])('%s', (s, want) => {
    expect(parseRfc3339Seconds(s)).toBe(want);
  });
  it.each(['2026-07-22 22:58:25Z', '2026-07-22T22:58:25', '2026-02-30T00:00:00Z', '2026-07-22T24:00:00Z', '2026-07-22T22:58:60Z', '2026-07-22T22:58:25.Z', '2026-07-22T22:58:25+2:00', '2026-07-22T22:58:25+24:00', ''])(
    '%j is invalid',
    (s) => {
      expect(parseRfc3339Seconds(s)).toBeNull();
    },
  );
});

describe('cacheVerdict: what k3s does with one file at start', () => {
  const c = enabled(sample('facts-sheet-busybox-tar.json'));
  const file = { abs: `${DIR}/busybox.tar`, size: 2245120, mtime: sec('2026-07-22T22:58:25Z') };
  const fixed = 'v1.36.3+k3s1';
  const old = 'v1.36.2+k3s1';

  it('unchanged → skipped, with the recorded names (SFTP shows whole seconds, as k3s records them)', () => {
    expect(cacheVerdict(c, file, fixed)).toEqual({ skipped: true, images: ['docker.io/library/busybox:latest'], why: 'unchanged' });
  });
  it('a new size and a newer mtime → re-imported on every release with the cache', () => {
    expect(cacheVerdict(c, { ...file, size: file.size + 1, mtime: file.mtime + 5 }, old)).toEqual({ skipped: false, why: 'changed' });
  });
  it('touched (same size, newer mtime): skipped until k3s #14284 — the old code called it re-imported', () => {
    const touched = { ...file, mtime: file.mtime + 60 };
    expect(cacheVerdict(c, touched, old)).toMatchObject({ skipped: true, why: 'unchanged' });
    expect(cacheVerdict(c, touched, fixed)).toEqual({ skipped: false, why: 'changed' });
    expect(cacheVerdict(c, touched, null)).toMatchObject({ skipped: true, why: 'maybe-unchanged' });
  });
  it('a new size within the recorded second: Holdfast cannot tell, so skipped', () => {
    expect(cacheVerdict(c, { ...file, size: 1 }, old)).toMatchObject({ skipped: true, why: 'maybe-unchanged' });
  });
  it('not listed, or the cache off → re-imported', () => {
    expect(cacheVerdict(c, { ...file, abs: `${DIR}/other.tar` }, fixed)).toEqual({ skipped: false, why: 'not-listed' });
    expect(cacheVerdict({ enabled: false, readable: true, entries: new Map() }, file, fixed)).toEqual({ skipped: false, why: 'off' });
  });
  it('keys are absolute in-node paths: a relative path does not match', () => {
    expect(cacheVerdict(c, { ...file, abs: 'busybox.tar' }, fixed).skipped).toBe(false);
  });
  it('releases before k3s PR #12237 ignore .cache.json; an unknown release may honour it', () => {
    expect(cacheVerdict(c, file, 'v1.30.12+k3s1')).toEqual({ skipped: false, why: 'ignored-by-release' });
    expect(cacheVerdict(c, file, null).skipped).toBe(true);
  });
  it('an unreadable cache or entry counts as skipped without names (conservative)', () => {
    expect(cacheVerdict(enabled('{oops'), file, fixed)).toEqual({ skipped: true, images: null, why: 'unreadable' });
    expect(cacheVerdict(enabled(JSON.stringify({ [file.abs]: { size: 'x' } })), file, fixed)).toEqual({ skipped: true, images: null, why: 'unreadable-entry' });
  });
});

describe('parsePrepullList (k3s prePullImages)', () => {
  it('the recorded list of k3s PR #14266', () => {
    const text = readFileSync(path.join(FIX, 'k3s-prepull', 'pr14266-busybox.txt'), 'utf8');
    expect(Buffer.byteLength(text)).toBe(33); // the size its cache entry records
    expect(parsePrepullList(text)).toEqual({ names: ['docker.io/library/busybox:latest'], skipped: [] });
  });
  it('trims lines, skips blank ones and anything that is not a reference (comments included)', () => {
    const r = parsePrepullList('  busybox  \r\n\n   \n# pinned for the site\nregistry.local:5000/team/app:2 # trailing\nNOT/Valid\nquay.io/org/x@sha256:' + 'a'.repeat(64) + '\nbusybox:latest');
    expect(r).toEqual({
      names: ['docker.io/library/busybox:latest', `quay.io/org/x@sha256:${'a'.repeat(64)}`],
      skipped: ['# pinned for the site', 'registry.local:5000/team/app:2 # trailing', 'NOT/Valid'],
    });
  });
  it('k3s own cases: empty, blank lines only', () => {
    expect(parsePrepullList('')).toEqual({ names: [], skipped: [] });
    expect(parsePrepullList('\n   \n\n')).toEqual({ names: [], skipped: [] });
  });
  it('a line longer than bufio allows fails the whole file (k3s "line too long"), the last line too', () => {
    expect(parsePrepullList('busybox\n' + 'a'.repeat(70 * 1024))).toHaveProperty('error');
    expect(parsePrepullList('a'.repeat(65535) + '\nbusybox\n')).not.toHaveProperty('error');
    expect(parsePrepullList('a'.repeat(65536) + '\nbusybox\n')).toHaveProperty('error');
  });
  it('a byte-order mark makes the line no reference (Go does not trim it)', () => {
    expect(parsePrepullList('\uFEFFbusybox\n')).toEqual({ names: [], skipped: ['busybox'] });
  });
});
