// The k3s/RKE2 release table (src/shared/versions.ts) against the boundaries of docs/k3s-facts.md
// and k3s's own sources and threads cited in the table.
import { describe, expect, it } from 'vitest';
import {
  addsDigestRefs,
  bundledContainerd,
  containerdWritesGcBackrefs,
  cacheRepinFix,
  distroPinsImports,
  DISTRO_PINS_FROM,
  firstReleases,
  importCacheHonoured,
  k3sTakesChange,
  K3S_RELEASES,
  releaseHas,
  startupWalk,
  watcherImports,
} from '../../../src/shared/versions';

describe('pins at all (k3s PR #8781)', () => {
  it.each([
    ['v1.29.1+k3s1', 'yes'],
    ['v1.29.0+k3s1', 'no'],
    ['v1.28.6+k3s2', 'yes'],
    ['v1.28.5+k3s1', 'no'],
    ['v1.27.10+k3s1', 'yes'],
    ['v1.27.9+k3s1', 'no'],
    ['v1.26.13+k3s1', 'yes'],
    ['v1.26.12+k3s1', 'no'],
    ['v1.25.16+k3s4', 'no'],
    ['v1.30.0+k3s1', 'yes'],
    ['v1.31.6+rke2r1', 'yes'],
    [null, 'unknown'],
    ['garbage', 'unknown'],
  ])('%s → %s', (v, want) => {
    expect(distroPinsImports(v)).toBe(want);
  });
  it('keeps the exported table other modules read', () => {
    expect(DISTRO_PINS_FROM).toEqual({ 26: 13, 27: 10, 28: 6, 29: 1 });
  });
});

describe('the import cache fix (k3s PR #14266)', () => {
  it.each([
    ['v1.37.0+k3s1', 'yes'],
    ['v1.36.3+k3s1', 'yes'],
    ['v1.36.2+k3s1', 'no'], // still has the bug (issue #14270's replication)
    ['v1.35.7+k3s1', 'yes'],
    ['v1.35.6+k3s1', 'unknown'], // just below the first fixed release: not confirmed either way
    ['v1.35.5+k3s1', 'no'],
    ['v1.34.10+k3s1', 'yes'],
    ['v1.34.9+k3s1', 'unknown'],
    ['v1.34.8+k3s1', 'no'],
    ['v1.33.14+k3s1', 'yes'],
    ['v1.33.13+k3s1', 'unknown'], // backported, first release unconfirmed
    ['v1.33.7+k3s1', 'no'], // the December 2025 line measured without the fix
    ['v1.33.1+k3s1', 'no'],
    ['v1.32.9+k3s1', 'no'], // 1.30.13–1.32.x never got it
    ['v1.30.13+k3s1', 'no'],
    [null, 'unknown'],
  ])('%s → %s', (v, want) => {
    expect(cacheRepinFix(v)).toBe(want);
  });
  it('names the first fixed releases for sentences', () => {
    expect(firstReleases(K3S_RELEASES.cacheRepin)).toBe('v1.37.0, v1.36.3, v1.35.7, v1.34.10, v1.33.14');
  });
});

describe('the start-up walk and the cache (k3s PR #12237)', () => {
  it.each([
    ['v1.30.13+k3s1', 'recursive-case-sensitive', 'yes'],
    ['v1.30.12+k3s1', 'top-level-case-insensitive', 'no'],
    ['v1.31.9+k3s1', 'recursive-case-sensitive', 'yes'],
    ['v1.31.8+k3s1', 'top-level-case-insensitive', 'no'],
    ['v1.32.5+k3s1', 'recursive-case-sensitive', 'yes'],
    ['v1.32.4+k3s1', 'top-level-case-insensitive', 'no'],
    ['v1.33.1+k3s1', 'recursive-case-sensitive', 'yes'],
    ['v1.33.0+k3s1', 'top-level-case-insensitive', 'no'],
    ['v1.34.0+k3s1', 'recursive-case-sensitive', 'yes'],
    ['v1.29.15+k3s1', 'top-level-case-insensitive', 'no'],
    [null, 'unknown', 'unknown'],
  ])('%s walks %s, cache honoured: %s', (v, walk, cache) => {
    expect(startupWalk(v)).toBe(walk);
    expect(importCacheHonoured(v)).toBe(cache);
  });
});

describe('k3sTakesChange: size AND newer mtime before k3s #14284, size OR newer mtime after', () => {
  const rec = { size: 2245120, mtime: 1784761105 }; // 2026-07-22T22:58:25Z
  const old = 'v1.36.2+k3s1';
  const fixed = 'v1.36.3+k3s1';
  it('an unchanged file is never taken', () => {
    for (const v of [old, fixed, null]) expect(k3sTakesChange(rec, { ...rec }, v)).not.toBe('yes');
    expect(k3sTakesChange(rec, { ...rec, mtime: rec.mtime - 5 }, old)).toBe('no');
  });
  it('a same-size replacement with a newer mtime is skipped until the fix', () => {
    const touched = { size: rec.size, mtime: rec.mtime + 60 };
    expect(k3sTakesChange(rec, touched, old)).toBe('no');
    expect(k3sTakesChange(rec, touched, fixed)).toBe('yes');
    expect(k3sTakesChange(rec, touched, 'v1.33.13+k3s1')).toBe('unknown'); // fix unconfirmed
    expect(k3sTakesChange(rec, touched, null)).toBe('unknown');
  });
  it('a new size with an older mtime (cp -p of an older file) is skipped until the fix', () => {
    const older = { size: rec.size + 512, mtime: rec.mtime - 3600 };
    expect(k3sTakesChange(rec, older, old)).toBe('no');
    expect(k3sTakesChange(rec, older, fixed)).toBe('yes');
  });
  it('a new size with a newer mtime is always taken', () => {
    for (const v of [old, fixed, null]) expect(k3sTakesChange(rec, { size: rec.size + 1, mtime: rec.mtime + 1 }, v)).toBe('yes');
  });
  it('within the recorded second Holdfast cannot tell newer from equal (k3s records whole seconds)', () => {
    // k3s would compare 22:58:25.7 with the recorded 22:58:25 and call it newer; SFTP shows 25.
    expect(k3sTakesChange(rec, { size: rec.size + 1, mtime: rec.mtime }, old)).toBe('unknown');
    // the fixed rule takes any new size, and compares mtimes by the recorded whole second
    expect(k3sTakesChange(rec, { size: rec.size + 1, mtime: rec.mtime }, fixed)).toBe('yes');
    expect(k3sTakesChange(rec, { size: rec.size, mtime: rec.mtime + 0.5 }, fixed)).toBe('no');
    // a fractional mtime on either side counts by its whole second
    expect(k3sTakesChange({ ...rec, mtime: rec.mtime + 0.9 }, { size: rec.size + 1, mtime: rec.mtime + 1 }, old)).toBe('yes');
  });
});

describe('watcherImports', () => {
  const rec = { size: 100, mtime: 1_700_000_000 };
  it('a name that held no file is new: imported (rename into place)', () => {
    expect(watcherImports(null, rec, 'v1.33.2+k3s1')).toBe('yes');
    expect(watcherImports(null, rec, null)).toBe('unknown');
  });
  it('a same-size overwrite is skipped before the fix; unknown version means skipped', () => {
    const same = { size: 100, mtime: rec.mtime + 10 };
    expect(watcherImports(rec, same, 'v1.34.8+k3s1')).toBe('no');
    expect(watcherImports(rec, same, 'v1.34.9+k3s1')).toBe('unknown');
    expect(watcherImports(rec, same, 'v1.34.10+k3s1')).toBe('yes');
    expect(watcherImports(rec, same, null)).not.toBe('yes');
  });
  it('releases without the watcher import nothing until the next start', () => {
    expect(watcherImports(null, rec, 'v1.29.12+k3s1')).toBe('no');
    expect(watcherImports(null, rec, 'v1.29.13+k3s1')).toBe('yes');
    expect(watcherImports(null, rec, 'v1.32.0+k3s1')).toBe('no');
    expect(watcherImports(null, rec, 'v1.32.1+k3s1')).toBe('yes');
  });
});

describe('releaseHas', () => {
  it('is unknown for a major other than 1 and for unconfirmed backports', () => {
    expect(releaseHas({ fromMinor: 5, backports: {} }, 'v2.0.0')).toBe('unknown');
    expect(releaseHas({ fromMinor: 5, backports: { 4: null } }, 'v1.4.9')).toBe('unknown');
    expect(releaseHas({ fromMinor: 5, backports: { 4: null } }, 'v1.3.9')).toBe('no');
  });
});

describe('digest references after the labels (k3s PR #13221)', () => {
  it.each([
    ['v1.35.0+k3s1', 'yes'],
    ['v1.36.2+k3s1', 'yes'],
    ['v1.33.7+k3s1', 'yes'],
    ['v1.33.6+k3s1', 'no'],
    ['v1.32.11+k3s1', 'yes'],
    ['v1.32.10+k3s1', 'no'],
    ['v1.34.5+k3s1', 'unknown'], // 1.34 backport (#13230): first release not confirmed
    ['v1.31.9+k3s1', 'no'],
    [null, 'unknown'],
  ])('%s → %s', (v, want) => {
    expect(addsDigestRefs(v)).toBe(want);
  });
});

describe('issue #37: bundled containerd and the k3s changes of 2026', () => {
  it('names the containerd a release bundles, where the table knows it', () => {
    expect(bundledContainerd('v1.37.2+k3s1')).toBe('2.3.7');
    expect(bundledContainerd('v1.37.0+k3s1')).toBe('2.3.4');
    expect(bundledContainerd('v1.37.1+rke2r1')).toBe('2.3.4');
    expect(bundledContainerd('v1.36.2+k3s1')).toBe('2.3.2');
    expect(bundledContainerd('v1.36.1+k3s1')).toBe('2.2.3');
    expect(bundledContainerd('v1.33.13+k3s1')).toBe('2.2.5');
    expect(bundledContainerd('v1.33.12+k3s1')).toBeNull();
    expect(bundledContainerd('garbage')).toBeNull();
    // containerd 2.3 is the first that writes GC back-references on import
    expect(containerdWritesGcBackrefs(bundledContainerd('v1.36.2+k3s1'))).toBe('yes');
    expect(containerdWritesGcBackrefs(bundledContainerd('v1.36.1+k3s1'))).toBe('no');
    expect(containerdWritesGcBackrefs('2.0.5-k3s1.32')).toBe('no');
    expect(containerdWritesGcBackrefs(null)).toBe('unknown');
  });

  it('k3s #14484 (v1.37.0) and #14732 (v1.37.2 and backports)', () => {
    expect(releaseHas(K3S_RELEASES.noRetagForHostingRegistry, 'v1.37.0+k3s1')).toBe('yes');
    expect(releaseHas(K3S_RELEASES.noRetagForHostingRegistry, 'v1.36.9+k3s1')).toBe('no');
    expect(releaseHas(K3S_RELEASES.unreadableListIsError, 'v1.37.2+k3s1')).toBe('yes');
    expect(releaseHas(K3S_RELEASES.unreadableListIsError, 'v1.37.1+k3s1')).toBe('no');
    expect(releaseHas(K3S_RELEASES.unreadableListIsError, 'v1.36.5+k3s1')).toBe('unknown');
    expect(releaseHas(K3S_RELEASES.unreadableListIsError, 'v1.33.5+k3s1')).toBe('no');
  });
});
