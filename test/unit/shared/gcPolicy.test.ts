// kubelet's GC and eviction thresholds as the node sets them, and kubelet's own arithmetic (shared/gcPolicy).
import { describe, expect, it } from 'vitest';
import { bytesToFreeAtHigh, formatAge, kubeletUsagePercent, kubernetesMinor, nearGcThreshold, parseEvictionHard, parseGoDuration, resolveGcPolicy, verifiesPreloaded, type VerificationPolicy } from '../../../src/shared/gcPolicy';

describe('resolveGcPolicy', () => {
  it('without settings: kubelet’s 85/80 and k3s’s eviction-hard 5 %/5 %', () => {
    const p = resolveGcPolicy([]);
    expect(p).toMatchObject({ highPercent: 85, lowPercent: 80, evictionHard: { imagefs: { percent: 5 }, nodefs: { percent: 5 } } });
    expect(p.sources.high).toBe("kubelet's default");
  });

  it('takes the last occurrence of each flag and says where it came from', () => {
    const p = resolveGcPolicy([
      { flag: 'image-gc-high-threshold', value: '90', source: '/etc/rancher/k3s/config.yaml' },
      { flag: 'image-gc-high-threshold', value: '92', source: 'the k3s server command line' },
      { flag: 'image-gc-low-threshold', value: '70', source: '/etc/rancher/k3s/config.yaml' },
    ]);
    expect(p).toMatchObject({ highPercent: 92, lowPercent: 70, sources: { high: 'the k3s server command line', low: '/etc/rancher/k3s/config.yaml' } });
  });

  it('an eviction-hard flag replaces the whole map; values kubelet refuses are noted, not used', () => {
    const p = resolveGcPolicy([
      { flag: 'eviction-hard', value: 'imagefs.available<2Gi,memory.available<100Mi', source: 'f' },
      { flag: 'image-gc-high-threshold', value: 'ninety', source: 'f' },
    ]);
    expect(p.evictionHard).toEqual({ imagefs: { bytes: 2 * 2 ** 30 }, nodefs: null });
    expect(p.highPercent).toBe(85);
    expect(p.notes.join(' ')).toContain('image-gc-high-threshold=ninety');
  });

  it('parses eviction-hard entries', () => {
    expect(parseEvictionHard('imagefs.available<10%, nodefs.available<500M')).toEqual({ imagefs: { percent: 10 }, nodefs: { bytes: 500e6 }, bad: [] });
    expect(parseEvictionHard('imagefs.available<lots').bad).toEqual(['imagefs.available<lots']);
  });
});

describe('kubelet arithmetic', () => {
  it('usage is 100 − ⌊available × 100 / capacity⌋, so GC starts as soon as less than 16 % is free', () => {
    expect(kubeletUsagePercent({ totalBytes: 1000, freeBytes: 160 })).toBe(84);
    expect(kubeletUsagePercent({ totalBytes: 1000, freeBytes: 159 })).toBe(85);
    expect(kubeletUsagePercent({ totalBytes: null, freeBytes: 5 })).toBeNull();
  });

  it('frees capacity × (100 − low) / 100 − available: from the high mark, or from now when above it', () => {
    const policy = { highPercent: 85, lowPercent: 80 };
    expect(bytesToFreeAtHigh({ totalBytes: 1000, freeBytes: 500 }, policy)).toEqual({ bytes: 50, availableAtStart: 150, now: false });
    expect(bytesToFreeAtHigh({ totalBytes: 1000, freeBytes: 100 }, policy)).toEqual({ bytes: 100, availableAtStart: 100, now: true });
  });

  it('the high mark it starts from reads as the high threshold in kubelet’s own usage, whatever the capacity', () => {
    const policy = { highPercent: 85, lowPercent: 80 };
    // 16 MiB × 15 % = 2,516,582.4 bytes: rounded down, kubelet would read 86 %
    for (const totalBytes of [16 * 1024 * 1024, 1000, 999_999_937, 107_374_182_400 + 7]) {
      const start = bytesToFreeAtHigh({ totalBytes, freeBytes: totalBytes }, policy)!;
      expect(kubeletUsagePercent({ totalBytes, freeBytes: start.availableAtStart })).toBe(85);
    }
  });

  it('flags a file system within 5 points of the high threshold', () => {
    expect(nearGcThreshold({ totalBytes: 1000, freeBytes: 200 }, { highPercent: 85 })).toBe(true);
    expect(nearGcThreshold({ totalBytes: 1000, freeBytes: 201 }, { highPercent: 85 })).toBe(false);
  });
});

// kubelet's max-age GC (KEP-4210: alpha 1.29 behind ImageMaximumGCAge, beta and on by default
// 1.30, GA 1.35) and credential verification (KEP-2535: alpha 1.33 behind
// KubeletEnsureSecretPulledImages, beta and on by default 1.35 with NeverVerifyPreloadedImages).
describe('max-age GC', () => {
  const arg = (flag: string, value: string, source = 'config.yaml') => ({ flag, value, source });
  it.each([
    ['168h', 168 * 3600],
    ['1h30m', 5400],
    ['2.5h', 9000],
    ['90s', 90],
    ['0', 0],
    ['0s', 0],
    ['-1h', -3600],
    ['168', null],
    ['1d', null],
    ['', null],
  ])('parseGoDuration(%j) = %j', (v, want) => expect(parseGoDuration(v)).toBe(want));

  it.each([
    [604800, '7 days'],
    [86400, '1 day'],
    [36 * 3600, '36 hours'],
    [5400, '1.5 hours'],
    [600, '10 minutes'],
  ])('formatAge(%d) = %s', (s, want) => expect(formatAge(s)).toBe(want));

  const cases: { name: string; minor: number | null; args: ReturnType<typeof arg>[]; seconds: number | null; note?: RegExp }[] = [
    { name: 'not set', minor: 35, args: [], seconds: null },
    { name: 'set on 1.35 (GA)', minor: 35, args: [arg('image-maximum-gc-age', '168h')], seconds: 604800 },
    { name: 'set on 1.30 (beta, on by default)', minor: 30, args: [arg('image-maximum-gc-age', '24h')], seconds: 86400 },
    { name: '0 turns it off', minor: 35, args: [arg('image-maximum-gc-age', '0s')], seconds: null },
    { name: 'the last setting wins', minor: 35, args: [arg('image-maximum-gc-age', '1h'), arg('image-maximum-gc-age', '2h', 'cmdline')], seconds: 7200 },
    { name: '1.29 without the gate: no effect', minor: 29, args: [arg('image-maximum-gc-age', '1h')], seconds: null, note: /ImageMaximumGCAge feature gate is off/ },
    { name: '1.29 with the gate', minor: 29, args: [arg('feature-gates', 'ImageMaximumGCAge=true'), arg('image-maximum-gc-age', '1h')], seconds: 3600 },
    { name: '1.30 with the gate turned off', minor: 30, args: [arg('feature-gates', 'ImageMaximumGCAge=false'), arg('image-maximum-gc-age', '1h')], seconds: null, note: /gate is off/ },
    { name: '1.28 has none', minor: 28, args: [arg('image-maximum-gc-age', '1h')], seconds: null, note: /has no max-age GC/ },
    { name: 'unknown version: taken at its word', minor: null, args: [arg('image-maximum-gc-age', '1h')], seconds: 3600 },
    { name: 'not a duration', minor: 35, args: [arg('image-maximum-gc-age', '7d')], seconds: null, note: /not a duration kubelet reads/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = resolveGcPolicy(c.args, [], { minor: c.minor });
      expect(p.maxAge?.seconds ?? null).toBe(c.seconds);
      if (c.note) expect(p.notes.join(' ')).toMatch(c.note);
      else expect(p.notes).toEqual([]);
    });
  }

  it('reads the Kubernetes minor of a k3s or RKE2 version', () => {
    expect([kubernetesMinor('v1.35.2+k3s1'), kubernetesMinor('v1.33.4+rke2r1'), kubernetesMinor(null), kubernetesMinor('dev')]).toEqual([35, 33, null, null]);
  });
});

describe('credential verification', () => {
  const arg = (flag: string, value: string, source = 'kubelet.conf.d/50.conf') => ({ flag, value, source });
  const cases: { name: string; minor: number | null; args: ReturnType<typeof arg>[]; policy: string | null; source: RegExp; note?: RegExp }[] = [
    { name: '1.32: no such feature', minor: 32, args: [], policy: null, source: /not in kubelet 1\.32/ },
    { name: '1.33/1.34 default: gate off, no verification', minor: 34, args: [], policy: null, source: /gate is off/ },
    { name: '1.34, policy set but gate off: no effect', minor: 34, args: [arg('imagePullCredentialsVerificationPolicy', 'AlwaysVerify')], policy: null, source: /gate is off/, note: /has no effect/ },
    { name: '1.33 with the gate on: the default policy', minor: 33, args: [arg('feature-gates', 'KubeletEnsureSecretPulledImages=true')], policy: 'NeverVerifyPreloadedImages', source: /default in 1\.33/ },
    { name: '1.35 default: NeverVerifyPreloadedImages', minor: 35, args: [], policy: 'NeverVerifyPreloadedImages', source: /kubelet's default in 1\.35/ },
    { name: '1.35 AlwaysVerify', minor: 35, args: [arg('imagePullCredentialsVerificationPolicy', 'AlwaysVerify')], policy: 'AlwaysVerify', source: /50\.conf/ },
    { name: '1.35 gate turned off', minor: 35, args: [arg('feature-gates', 'KubeletEnsureSecretPulledImages=false'), arg('imagePullCredentialsVerificationPolicy', 'AlwaysVerify')], policy: null, source: /gate is off/, note: /has no effect/ },
    { name: 'an unknown policy: kubelet would not start; default assumed', minor: 35, args: [arg('imagePullCredentialsVerificationPolicy', 'Sometimes')], policy: 'NeverVerifyPreloadedImages', source: /default/, note: /not a policy kubelet knows/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = resolveGcPolicy(c.args, [], { minor: c.minor });
      expect(p.credentialVerification?.policy ?? null).toBe(c.policy);
      expect(p.credentialVerification?.source).toMatch(c.source);
      if (c.note) expect(p.notes.join(' ')).toMatch(c.note);
      else expect(p.notes).toEqual([]);
    });
  }

  const cv = (policy: VerificationPolicy | null, allowlist: string[] = []) => ({ policy, allowlist, source: 's' });
  it.each([
    [cv(null), 'docker.io/library/nginx', false],
    [cv('NeverVerify'), 'docker.io/library/nginx', false],
    [cv('NeverVerifyPreloadedImages'), 'docker.io/library/nginx', false],
    [cv('AlwaysVerify'), 'docker.io/library/nginx', true],
    [cv('NeverVerifyAllowlistedImages', ['docker.io/library/nginx']), 'docker.io/library/nginx', false],
    [cv('NeverVerifyAllowlistedImages', ['docker.io/library/*']), 'docker.io/library/nginx', false],
    [cv('NeverVerifyAllowlistedImages', ['docker.io/library/*']), 'docker.io/libraryx/nginx', true],
    [cv('NeverVerifyAllowlistedImages', ['registry.example.com/site/*']), 'docker.io/library/nginx', true],
    [cv('NeverVerifyAllowlistedImages', []), 'docker.io/library/nginx', true],
  ])('verifiesPreloaded(%j, %s) = %s', (c, repo, want) => expect(verifiesPreloaded(c, repo)).toBe(want));
});
