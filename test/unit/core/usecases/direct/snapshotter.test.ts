// Which snapshotter direct delivery unpacks into: the one the node's containerd config names for
// CRI (src/core/usecases/direct/snapshotter.ts), read from the lines a fixed script prints.
import { describe, expect, it } from 'vitest';
import { parseSnapshotterLines } from '../../../../../src/core/usecases/direct/snapshotter';

describe('parseSnapshotterLines', () => {
  it('reads k3s\'s config (version 2, CRI section) and containerd 2.x\'s (version 3, cri images plugin)', () => {
    expect(parseSnapshotterLines('    snapshotter = "overlayfs"\n')).toBe('overlayfs');
    expect(parseSnapshotterLines("  snapshotter = 'native'\n")).toBe('native');
    expect(parseSnapshotterLines('snapshotter="stargz"')).toBe('stargz');
  });

  it('takes the first line naming one, and nothing from a line that only mentions the word', () => {
    expect(parseSnapshotterLines('  snapshotter = "fuse-overlayfs"\n  snapshotter = "overlayfs"\n')).toBe('fuse-overlayfs');
    expect(parseSnapshotterLines('  disable_snapshot_annotations = true\n# snapshotter = "zfs"\n')).toBeNull();
    expect(parseSnapshotterLines('')).toBeNull();
  });

  it('refuses a value that is not a plugin id', () => {
    expect(parseSnapshotterLines('snapshotter = "$(reboot)"')).toBeNull();
  });
});
