import { describe, expect, it } from 'vitest';
import { applyImageProtection, isImageIdRef, type ProtectionRef } from '../../../src/shared/protection';
import { criPinning, distroPinsImports, parseSemVer } from '../../../src/shared/versions';

const ID = 'sha256:' + 'a'.repeat(64);
const OTHER = 'sha256:' + 'b'.repeat(64);
const ref = (name: string, over: Partial<ProtectionRef> = {}): ProtectionRef => ({
  name,
  imageId: ID,
  pin: 'none',
  afterRestart: 'unpinned',
  reason: 'Not pinned',
  ...over,
});

describe('CRI image-id records', () => {
  it('recognises sha256:<id> records only when they name their own image', () => {
    expect(isImageIdRef(ref(ID))).toBe(true);
    expect(isImageIdRef(ref(OTHER))).toBe(false); // a record named by another digest
    expect(isImageIdRef(ref('docker.io/library/app@' + ID))).toBe(false);
    expect(isImageIdRef(ref('sha256:abc'))).toBe(false);
  });

  it('share the fate of the image when any reference counts (containerd ≥ 1.7.10, 2.x)', () => {
    const out = applyImageProtection(
      [ref('docker.io/library/app:1', { pin: 'durable', afterRestart: 'pinned' }), ref(ID)],
      'any',
    );
    expect(out[1]).toMatchObject({ name: ID, pin: 'none', afterRestart: 'pinned' });
    expect(out[1]!.reason).toMatch(/kubelet sees the image as pinned through docker\.io\/library\/app:1/);
    expect(out[0]!.reason).toBe('Not pinned'); // others untouched
  });

  it('say the image loses its pin when every real reference does', () => {
    const out = applyImageProtection([ref('app:1', { pin: 'distro', afterRestart: 'unpinned' }), ref(ID, { afterRestart: 'pinned' })], 'any');
    expect(out[1]).toMatchObject({ afterRestart: 'unpinned' });
    expect(out[1]!.reason).toMatch(/loses its pin/);
  });

  it('stay unpinned with a remedy on 1.7.3–1.7.9, where the first-loaded reference decides', () => {
    const out = applyImageProtection([ref('app:1', { pin: 'durable', afterRestart: 'pinned' }), ref(ID)], 'first-loaded');
    expect(out[1]).toMatchObject({ afterRestart: 'unpinned' });
    expect(out[1]!.reason).toMatch(/pin every reference\.$/);
    expect(out[1]!.remedy).toEqual({ action: 'pin', node: 'NODE', ref: 'app:1' });
  });

  it('leave a labelled or lonely id record alone', () => {
    const lonely = ref(ID);
    expect(applyImageProtection([lonely], 'any')[0]).toBe(lonely);
    const labelled = ref(ID, { pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin' });
    expect(applyImageProtection([ref('app:1'), labelled], 'any')[1]).toBe(labelled);
  });
});

describe('version rules', () => {
  it('reads containerd and k3s version strings as they are printed', () => {
    expect(parseSemVer('1.7.24~ds1')).toEqual({ major: 1, minor: 7, patch: 24 });
    expect(parseSemVer('2.1.9+unknown')).toEqual({ major: 2, minor: 1, patch: 9 });
    expect(parseSemVer('v2.0.5-k3s1.32')).toEqual({ major: 2, minor: 0, patch: 5 });
    expect(parseSemVer('')).toBeNull();
  });

  it('knows which containerd lines CRI-pin and how', () => {
    expect(criPinning('1.6.20~ds1')).toBe('none');
    expect(criPinning('1.7.2')).toBe('none');
    expect(criPinning('1.7.3')).toBe('first-loaded');
    expect(criPinning('v1.7.9-k3s1')).toBe('first-loaded');
    expect(criPinning('1.7.10')).toBe('any');
    expect(criPinning('1.7.24~ds1')).toBe('any');
    expect(criPinning('2.1.9+unknown')).toBe('any');
    expect(criPinning('garbage')).toBe('unknown');
  });

  it('knows which k3s releases pin imported images at all (PR #8781)', () => {
    for (const v of ['v1.26.12+k3s1', 'v1.27.9+k3s1', 'v1.28.5+k3s1', 'v1.29.0+k3s1', 'v1.25.16+k3s4']) expect(distroPinsImports(v)).toBe('no');
    for (const v of ['v1.26.13+k3s1', 'v1.27.10+k3s1', 'v1.28.6+k3s1', 'v1.29.1+k3s1', 'v1.30.0+k3s1', 'v1.36.2+rke2r1']) expect(distroPinsImports(v)).toBe('yes');
    expect(distroPinsImports(null)).toBe('unknown');
  });
});
