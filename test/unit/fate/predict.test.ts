import { describe, expect, it } from 'vitest';
import { cacheFixStatus, parseK8sVersion } from '../../../src/core/fate/k3sVersions';
import { predictFates, repository, type FateArchive, type FateRef } from '../../../src/core/fate/predict';

const K3S = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
const DURABLE = { 'io.cri-containerd.pinned': 'pinned' };
const D = 'sha256:' + 'a'.repeat(64);
const ID = 'sha256:' + 'c'.repeat(64);

const ref = (name: string, labels: Record<string, string>, imageId: string | null = ID): FateRef => ({ name, digest: D, imageId, labels });
const arch = (path: string, names: string[], cachedByK3s = false, imageId: string | null = ID): FateArchive => ({
  path,
  images: names.map((name) => ({ name, imageId })),
  cachedByK3s,
});
const k3s = (v: string | null = 'v1.31.6+k3s1') => ({ distro: 'k3s' as const, distroVersion: v });

describe('cache fix version table', () => {
  it('parses versions', () => {
    expect(parseK8sVersion('v1.31.6+k3s1')).toEqual({ major: 1, minor: 31, patch: 6 });
    expect(parseK8sVersion('garbage')).toBeNull();
  });
  it('is fixed from 1.37, unknown for unconfirmed backports, not fixed before 1.33', () => {
    expect(cacheFixStatus('v1.37.0+k3s1')).toBe('fixed');
    expect(cacheFixStatus('v1.36.4+k3s1')).toBe('unknown');
    expect(cacheFixStatus('v1.33.9+k3s1')).toBe('unknown');
    expect(cacheFixStatus('v1.32.5+k3s1')).toBe('not-fixed');
    expect(cacheFixStatus('v1.30.13+k3s1')).toBe('not-fixed');
    expect(cacheFixStatus(null)).toBe('unknown');
  });
});

describe('repository', () => {
  it('strips tags and digests but not registry ports', () => {
    expect(repository('docker.io/library/app:1.0')).toBe('docker.io/library/app');
    expect(repository(`docker.io/library/app@${D}`)).toBe('docker.io/library/app');
    expect(repository('registry.local:5000/x/y')).toBe('registry.local:5000/x/y');
    expect(repository('registry.local:5000/x/y:2')).toBe('registry.local:5000/x/y');
  });
});

describe('predictFates', () => {
  it('a k3s pin survives only while its archive is in the images dir', () => {
    const refs = [ref('docker.io/library/app:1', K3S)];
    const kept = predictFates(refs, [arch('apps.tar', ['docker.io/library/app:1'])], k3s()).get('docker.io/library/app:1')!;
    expect(kept).toMatchObject({ afterRestart: 'pinned', archive: 'apps.tar' });
    expect(kept.reason).toContain('re-imports apps.tar');
    const lost = predictFates(refs, [], k3s()).get('docker.io/library/app:1')!;
    expect(lost).toMatchObject({ afterRestart: 'unpinned', archive: null });
    expect(lost.reason).toMatch(/strips this pin.*no archive/);
  });

  it('digest references follow their image through repository and image id', () => {
    const refs = [ref(`docker.io/library/app@${D}`, K3S)];
    expect(predictFates(refs, [arch('a.tar', ['docker.io/library/app:1'])], k3s()).get(refs[0]!.name)!.afterRestart).toBe('pinned');
    // same repository, other image id: not brought back
    expect(predictFates(refs, [arch('a.tar', ['docker.io/library/app:1'], false, 'sha256:' + 'e'.repeat(64))], k3s()).get(refs[0]!.name)!.afterRestart).toBe('unpinned');
  });

  it('a durable pin survives, but becomes k3s-managed again while its archive is present', () => {
    const refs = [ref('x/app:1', DURABLE)];
    expect(predictFates(refs, [], k3s()).get('x/app:1')).toMatchObject({ afterRestart: 'pinned', reason: 'Durable pin: k3s never touches it.' });
    const again = predictFates(refs, [arch('a.tar.gz', ['x/app:1'])], k3s()).get('x/app:1')!;
    expect(again.afterRestart).toBe('pinned');
    expect(again.reason).toMatch(/k3s-managed again/);
  });

  it('an unpinned image is pinned by an archive that brings it, else stays unpinned', () => {
    const refs = [ref('x/app:1', {})];
    expect(predictFates(refs, [arch('a.tar', ['x/app:1'])], k3s()).get('x/app:1')!.afterRestart).toBe('pinned');
    expect(predictFates(refs, [], k3s()).get('x/app:1')!.reason).toMatch(/garbage collector/);
  });

  it('the cache trap: an unchanged cached archive does not re-pin before the fix', () => {
    const refs = [ref('x/app:1', K3S)];
    const archives = [arch('a.tar', ['x/app:1'], true)];
    const old = predictFates(refs, archives, k3s('v1.32.5+k3s1')).get('x/app:1')!;
    expect(old).toMatchObject({ afterRestart: 'unpinned', archive: 'a.tar' });
    expect(old.reason).toMatch(/skips unchanged archives listed in .cache.json/);
    const unknown = predictFates(refs, archives, k3s(null)).get('x/app:1')!;
    expect(unknown.afterRestart).toBe('unpinned');
    expect(unknown.reason).toMatch(/cannot tell whether k3s unknown version has the .cache.json fix/);
    const backport = predictFates(refs, archives, k3s('v1.35.2+k3s1')).get('x/app:1')!;
    expect(backport.afterRestart).toBe('unpinned');
    const fixed = predictFates(refs, archives, k3s('v1.37.1+k3s1')).get('x/app:1')!;
    expect(fixed).toMatchObject({ afterRestart: 'pinned', archive: 'a.tar' });
    expect(fixed.reason).toMatch(/re-pins images of cached archives/);
  });

  it('a durable pin is not taken over by a cached, skipped archive', () => {
    const f = predictFates([ref('x/app:1', DURABLE)], [arch('a.tar', ['x/app:1'], true)], k3s('v1.32.5+k3s1')).get('x/app:1')!;
    expect(f.afterRestart).toBe('pinned');
    expect(f.reason).toMatch(/Durable pin/);
  });

  it('RKE2 strips only its own label', () => {
    const rke2 = { distro: 'rke2' as const, distroVersion: 'v1.31.6+rke2r1' };
    const withRke2 = { 'io.cattle.rke2.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
    const lost = predictFates([ref('x/app:1', withRke2)], [], rke2).get('x/app:1')!;
    expect(lost.afterRestart).toBe('unpinned');
    expect(lost.reason).toMatch(/^RKE2 strips/);
    // a k3s label on an RKE2 node is not RKE2's: the CRI pin stays
    expect(predictFates([ref('x/app:1', K3S)], [], rke2).get('x/app:1')!.afterRestart).toBe('pinned');
  });

  it('says when an unreadable archive might have brought the image', () => {
    const f = predictFates([ref('x/app:1', K3S)], [{ path: 'bad.tar', images: null, cachedByK3s: false }], k3s()).get('x/app:1')!;
    expect(f.afterRestart).toBe('unpinned');
    expect(f.reason).toContain('bad.tar could not be read');
  });
});
