import { describe, expect, it } from 'vitest';
import { pinState } from '../../../src/shared/pinState';

describe('pinState', () => {
  it('is durable with only the CRI pin', () => {
    expect(pinState({ 'io.cri-containerd.pinned': 'pinned' })).toBe('durable');
  });
  it('is k3s while the k3s label is there, with or without the CRI label', () => {
    expect(pinState({ 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' })).toBe('distro');
    expect(pinState({ 'io.cattle.k3s.pinned': 'pinned' })).toBe('distro');
  });
  it('treats the RKE2 label as a distro pin', () => {
    expect(pinState({ 'io.cattle.rke2.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' })).toBe('distro');
  });
  it('is none without pins, or with a CRI label of another value', () => {
    expect(pinState({})).toBe('none');
    expect(pinState({ 'io.cri-containerd.image': 'managed' })).toBe('none');
    expect(pinState({ 'io.cri-containerd.pinned': 'no' })).toBe('none');
  });
});
