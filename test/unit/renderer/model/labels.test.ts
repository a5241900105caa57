import { describe, expect, it } from 'vitest';
import { diffLabels } from '../../../../src/renderer/model/labels';

describe('label diffs', () => {
  it('diffLabels lists only what changes', () => {
    expect(
      diffLabels(
        { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned', x: '1' },
        { 'io.cri-containerd.pinned': 'pinned', x: '2', y: 'new' },
      ),
    ).toEqual([
      { key: 'io.cattle.k3s.pinned', before: 'pinned', kind: 'removed' },
      { key: 'x', before: '1', after: '2', kind: 'changed' },
      { key: 'y', after: 'new', kind: 'added' },
    ]);
  });
});
