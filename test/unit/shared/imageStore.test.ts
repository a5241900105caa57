// What deleting images really frees when blobs are shared (shared/imageStore).
import { describe, expect, it } from 'vitest';
import { deletionOrder, exclusiveBytes, freedInOrder, storeBytes, summariseStore } from '../../../src/shared/imageStore';
import { id, store } from '../../support/diskStore';

describe('shared blobs', () => {
  const index = {
    sizes: { base: 1000, a: 10, b: 20, c: 30 },
    byImage: { A: ['base', 'a'], B: ['base', 'b'], C: ['c'] },
  };

  it('counts a blob shared by several images for none of them alone', () => {
    expect(exclusiveBytes(index)).toEqual({ A: 10, B: 20, C: 30 });
    expect(storeBytes(index)).toBe(1060);
  });

  it('frees a shared blob with the last image that holds it, whatever the order', () => {
    expect(freedInOrder(index, ['A', 'B'])).toEqual([10, 1020]);
    expect(freedInOrder(index, ['B', 'A'])).toEqual([20, 1010]);
    expect(freedInOrder(index, ['A', 'C'])).toEqual([10, 30]);
  });

  it('deletes tags first, then digest references, then CRI’s id record', () => {
    const refs = [id('1'), 'r/app@sha256:' + 'b'.repeat(64), 'r/app:1.0', 'mirror/app:1.0'];
    expect(deletionOrder(refs)).toEqual(['mirror/app:1.0', 'r/app:1.0', 'r/app@sha256:' + 'b'.repeat(64), id('1')]);
  });

  it('summarises states and what removing the unprotected images would free', () => {
    const s = store([
      { key: 'A', refs: ['r/a:1'], blobs: [['base', 1000], ['a', 10]], usedBy: [{ id: 'c1', image: 'r/a:1', kubelet: true }] },
      { key: 'B', refs: ['r/b:1'], blobs: [['base', 1000], ['b', 20]] },
      { key: 'C', refs: ['r/c:1'], blobs: [['c', 30]], pin: 'durable' },
    ]);
    expect(summariseStore(s.images, s.index)).toEqual({ images: 3, inUse: 1, durable: 1, distro: 0, unprotected: 1, storeBytes: 1060, unprotectedBytes: 20 });
  });
});
