// k3s's import cache (.cache.json) and .txt pre-pull lists, parsed against recorded real samples
// (fixtures/k3s-import-cache/SOURCES.md says where each came from) and hostile shapes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePrepullList } from '../../../../src/core/archives/prepull';
import { parseK3sImportCache, parseRfc3339, parseRfc3339Seconds } from '../../../../src/core/archives/scan';

const FIX = path.join(import.meta.dirname, 'fixtures');
const sample = (name: string) => readFileSync(path.join(FIX, 'k3s-import-cache', name), 'utf8');
const DIR = '/var/lib/rancher/k3s/agent/images';
const sec = (iso: string) => Date.parse(iso) / 1000;

describe('parseK3sImportCache on recorded samples', () => {
  it('the facts sheet sample: absolute in-node path, size, RFC 3339 modTime, images', () => {
    const c = parseK3sImportCache(sample('facts-sheet-busybox-tar.json'));
    expect(c.readable).toBe(true);
    expect([...c.entries]).toEqual([
      [`${DIR}/busybox.tar`, { size: 2245120, modTime: sec('2026-07-22T22:58:25Z'), modTimeNanos: 0, images: ['docker.io/library/busybox:latest'] }],
    ]);
  });

  it('k3s PR #14266 (a .txt list is cached too, with the names it pinned)', () => {
    const c = parseK3sImportCache(sample('pr14266-busybox-txt.json'));
    expect(c.entries.get(`${DIR}/busybox.txt`)).toEqual({ size: 33, modTime: sec('2026-06-23T18:05:52Z'), modTimeNanos: 0, images: ['docker.io/library/busybox:latest'] });
  });

  it('v1.36.2 (issue #14270) writes no images: nothing to re-pin', () => {
    const c = parseK3sImportCache(sample('issue14270-v1.36.2-busybox-txt.json'));
    expect(c.entries.get(`${DIR}/busybox.txt`)).toEqual({ size: 33, modTime: sec('2026-07-21T23:28:05Z'), modTimeNanos: 0, images: null });
  });

  it('a release-1.34 build with the fix (issue #14272) and a compact v1.36.2 archive entry (issue #14317)', () => {
    expect(parseK3sImportCache(sample('issue14272-v1.34.9-f3f4ec51-busybox-txt.json')).entries.get(`${DIR}/busybox.txt`)?.images).toEqual([
      'docker.io/library/busybox:latest',
    ]);
    expect(parseK3sImportCache(sample('issue14317-v1.36.2-busybox-tar.compact.json')).entries.get(`${DIR}/busybox-latest1.tar`)).toEqual({
      size: 2245120,
      modTime: sec('2026-07-22T22:58:25Z'),
      modTimeNanos: 0,
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
    expect(c.entries.get('/ok')).toEqual({ size: 1, modTime: sec('2026-01-01T00:00:00Z'), modTimeNanos: 0, images: null });
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
  it('a 3.8 MiB object nested a million deep is unreadable, refused before it is parsed (it cost 316 MiB)', () => {
    const n = 1_000_000;
    const text = '{"a":'.repeat(n) + '{}' + '}'.repeat(n);
    expect(text.length).toBeGreaterThan(3.8 * 1024 * 1024);
    const r = parseK3sImportCache(text);
    expect(r).toMatchObject({ readable: false, unreadable: 'nests deeper than 64 levels' });
    expect(r.entries.size).toBe(0);
  });

  it('k3s\'s own depth, and more up to the bound, is read', () => {
    const entry = { size: 1, modTime: '2025-06-01T10:00:00Z', images: ['docker.io/library/nginx:1'] };
    expect(parseK3sImportCache(JSON.stringify({ '/a.tar': entry })).readable).toBe(true);
    // 64 levels: the file's object and 63 inside it, an unreadable entry but a readable file.
    expect(parseK3sImportCache('{"x":' + '['.repeat(63) + ']'.repeat(63) + '}').readable).toBe(true);
    expect(parseK3sImportCache('{"x":' + '['.repeat(64) + ']'.repeat(64) + '}').readable).toBe(false);
  });

  it('prototype keys are plain keys', () => {
    const c = parseK3sImportCache('{"__proto__": {"size": 1, "modTime": "2026-01-01T00:00:00Z"}, "constructor": 1}');
    expect(c.entries.get('__proto__')).toEqual({ size: 1, modTime: sec('2026-01-01T00:00:00Z'), modTimeNanos: 0, images: null });
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

describe('parseRfc3339 keeps the fraction Go keeps (k3s compares full precision)', () => {
  it.each([
    ['2026-07-22T22:58:25Z', 0],
    ['2026-07-22T22:58:25.5Z', 500_000_000],
    ['2026-07-22T22:58:25.000000001Z', 1],
    ['2026-07-22T22:58:25.999999999+02:00', 999_999_999],
  ])('%s', (s, nanos) => {
    expect(parseRfc3339(s)?.nanos).toBe(nanos);
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
