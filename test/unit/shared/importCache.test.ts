// The .cache.json rule (shared/importCache cacheVerdict), table-driven over every case k3s's own
// start-up code distinguishes (docs/k3s-facts.md, "The import cache (.cache.json)": measured on
// the v1.33.7 line, without the fix, and v1.34.10, with k3s PRs #14266 and #14288).
import { describe, expect, it } from 'vitest';
import { cacheRule, cacheVerdict, type CacheVerdict, type K3sCacheEntry, type K3sImportCache } from '../../../src/shared/importCache';

const ABS = '/var/lib/rancher/k3s/agent/images/app.tar';
const T = 1_784_761_105; // the recorded modTime, whole seconds
const SIZE = 2_245_120;
const NAMES = ['docker.io/library/app:1'];
const WITHOUT = 'v1.33.7+k3s1';
const WITH = 'v1.34.10+k3s1';

const entry = (over: Partial<K3sCacheEntry> = {}): K3sCacheEntry => ({ size: SIZE, modTime: T, modTimeNanos: 0, images: NAMES, ...over });
const cacheOf = (e: K3sCacheEntry | null | undefined): K3sImportCache => ({ enabled: true, readable: true, entries: e === undefined ? new Map() : new Map([[ABS, e]]) });

interface Case {
  name: string;
  release: string | null;
  entry?: K3sCacheEntry | null;
  /** The file now: size, whole seconds, nanoseconds (null: the node did not tell). */
  file: { size?: number; mtime?: number; nanos?: number | null };
  want: Partial<CacheVerdict>;
}

const skipped = (why: string, repins: string[], rule: string) => ({ skipped: true, why, repins, rule }) as Partial<CacheVerdict>;
const reimported = (why: string) => ({ skipped: false, why }) as Partial<CacheVerdict>;

const CASES: Case[] = [
  // Without the fix: re-import only when the size differs AND the mtime is later; `images` ignored.
  { name: 'unchanged, whole second', release: WITHOUT, entry: entry(), file: { nanos: 0 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'same size, sub-second mtime', release: WITHOUT, entry: entry(), file: { nanos: 123 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'same-size copy, newer mtime', release: WITHOUT, entry: entry(), file: { mtime: T + 60, nanos: 5 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'same-size replacement, older mtime', release: WITHOUT, entry: entry(), file: { mtime: T - 60, nanos: 0 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'new size, newer mtime', release: WITHOUT, entry: entry(), file: { size: SIZE + 1, mtime: T + 1, nanos: 0 }, want: reimported('size') },
  { name: 'new size, older mtime', release: WITHOUT, entry: entry(), file: { size: SIZE + 1, mtime: T - 1, nanos: 0 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'new size, same second, sub-second later', release: WITHOUT, entry: entry(), file: { size: SIZE + 1, nanos: 1 }, want: reimported('size') },
  { name: 'new size, same whole second', release: WITHOUT, entry: entry(), file: { size: SIZE + 1, nanos: 0 }, want: skipped('unchanged', [], 'without-fix') },
  { name: 'new size, same second, fraction unknown', release: WITHOUT, entry: entry(), file: { size: SIZE + 1, nanos: null }, want: skipped('maybe-sub-second', [], 'without-fix') },
  { name: 'an entry without images', release: WITHOUT, entry: entry({ images: null }), file: { nanos: 0 }, want: skipped('unchanged', [], 'without-fix') },
  // With the fix: re-import when no `images`, the size differs, OR the mtime is later; else re-pin the recorded names.
  { name: 'unchanged, whole second', release: WITH, entry: entry(), file: { nanos: 0 }, want: skipped('unchanged', NAMES, 'with-fix') },
  { name: 'same size, sub-second mtime', release: WITH, entry: entry(), file: { nanos: 1 }, want: reimported('sub-second') },
  { name: 'same-size copy, newer mtime', release: WITH, entry: entry(), file: { mtime: T + 60, nanos: 0 }, want: reimported('newer') },
  { name: 'same-size replacement, older mtime: the old names', release: WITH, entry: entry(), file: { mtime: T - 60, nanos: 0 }, want: skipped('unchanged', NAMES, 'with-fix') },
  { name: 'new size, older mtime', release: WITH, entry: entry(), file: { size: SIZE - 1, mtime: T - 60, nanos: 0 }, want: reimported('size') },
  { name: 'an entry without images, unchanged', release: WITH, entry: entry({ images: null }), file: { nanos: 0 }, want: reimported('no-images') },
  { name: 'an entry with an empty images list', release: WITH, entry: entry({ images: [] }), file: { nanos: 0 }, want: skipped('unchanged', [], 'with-fix') },
  { name: 'same second, fraction unknown', release: WITH, entry: entry(), file: { nanos: null }, want: skipped('maybe-sub-second', NAMES, 'with-fix') },
  { name: 'a recorded fraction (hand-written), file later within it', release: WITH, entry: entry({ modTimeNanos: 500 }), file: { nanos: 501 }, want: reimported('sub-second') },
  { name: 'a recorded fraction (hand-written), file earlier within it', release: WITH, entry: entry({ modTimeNanos: 500 }), file: { nanos: 499 }, want: skipped('unchanged', NAMES, 'with-fix') },
  // Unknown release: `images` is evidence of the fix; without it, the reading that over-predicts lost pins.
  { name: 'entry with images', release: null, entry: entry(), file: { nanos: 0 }, want: skipped('unchanged', NAMES, 'with-fix') },
  { name: 'entry with images, sub-second', release: null, entry: entry(), file: { nanos: 9 }, want: reimported('sub-second') },
  { name: 'entry without images, unchanged', release: null, entry: entry({ images: null }), file: { nanos: 0 }, want: skipped('maybe-release', [], 'unknown') },
  { name: 'entry without images, new size and newer', release: null, entry: entry({ images: null }), file: { size: 1, mtime: T + 1, nanos: 0 }, want: reimported('size') },
  { name: 'unconfirmed 1.33 backport, entry without images', release: 'v1.33.13+k3s1', entry: entry({ images: null }), file: { nanos: 0 }, want: skipped('maybe-release', [], 'unknown') },
  // The cache itself.
  { name: 'no entry', release: WITH, entry: undefined, file: {}, want: reimported('not-listed') },
  { name: 'an unreadable entry', release: WITH, entry: null, file: {}, want: skipped('unreadable-entry', [], 'with-fix') },
  { name: 'a release before the cache (k3s PR #12237)', release: 'v1.30.12+k3s1', entry: entry(), file: {}, want: reimported('ignored-by-release') },
];

describe('cacheVerdict: what the next start does with one file', () => {
  it.each(CASES.map((c) => [`${c.release ?? 'unknown release'}: ${c.name}`, c] as const))('%s', (_, c) => {
    const file = { abs: ABS, size: c.file.size ?? SIZE, mtime: c.file.mtime ?? T, mtimeNanos: c.file.nanos === undefined ? 0 : c.file.nanos };
    expect(cacheVerdict(cacheOf(c.entry), file, c.release)).toMatchObject(c.want);
  });

  it('the cache off, or unreadable', () => {
    const file = { abs: ABS, size: SIZE, mtime: T, mtimeNanos: 0 };
    expect(cacheVerdict({ enabled: false, readable: true, entries: new Map() }, file, WITH)).toEqual({ skipped: false, why: 'off' });
    expect(cacheVerdict({ enabled: true, readable: false, entries: new Map() }, file, WITH)).toMatchObject({ skipped: true, why: 'unreadable', repins: [] });
  });

  it('skipped files keep what the entry records, for the wording, even where ignored', () => {
    const v = cacheVerdict(cacheOf(entry()), { abs: ABS, size: SIZE, mtime: T, mtimeNanos: 0 }, WITHOUT);
    expect(v).toMatchObject({ skipped: true, repins: [], recorded: NAMES });
  });
});

describe('cacheRule by release', () => {
  it.each([
    ['v1.33.7+k3s1', 'without-fix'],
    ['v1.36.2+k3s1', 'without-fix'],
    ['v1.36.3+k3s1', 'with-fix'],
    ['v1.35.7+rke2r1', 'with-fix'],
    ['v1.34.10+k3s1', 'with-fix'],
    ['v1.34.9+k3s1', 'unknown'],
    ['v1.34.8+k3s1', 'without-fix'],
    ['v1.37.0+k3s1', 'with-fix'],
    ['v1.33.13+k3s1', 'unknown'],
    ['v1.32.11+k3s1', 'without-fix'],
    [null, 'unknown'],
  ])('%s → %s', (v, want) => {
    expect(cacheRule(v)).toBe(want);
  });
});
