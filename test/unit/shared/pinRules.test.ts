import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { pinState } from '../../../src/shared/pinState';
import { imageProtection, losesPin, losingOf } from '../../../src/shared/protection';
import { losingImagesOf } from '../../../src/core/usecases/fleet/summary';
import { buildMatrix } from '../../../src/renderer/fleetMatrix';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

describe('pin rules from shared, one home for the core and the app (issue #14)', () => {
  it.each([
    [{}, 'none'],
    [{ [CRI]: 'pinned' }, 'durable'],
    [{ [CRI]: 'pinned', [K3S]: 'pinned' }, 'distro'],
    [{ [K3S]: '' }, 'distro'],
    [{ [CRI]: 'true' }, 'none'],
  ] as const)('%j -> %s', (labels, pin) => {
    expect(pinState(labels)).toBe(pin);
  });

  it('"loses its pin" counts the same in the report and the matrix', () => {
    const ref = (name: string, pin: ImageRef['pin'], afterRestart: ImageRef['afterRestart'], id: string): ImageRef => ({
      name,
      digest: `sha256:${id.repeat(64)}`,
      mediaType: 'x',
      imageId: `sha256:${id.repeat(64)}`,
      size: 1,
      platforms: [],
      createdAt: null,
      labels: pin === 'distro' ? { [CRI]: 'pinned', [K3S]: 'pinned' } : pin === 'durable' ? { [CRI]: 'pinned' } : {},
      pin,
      afterRestart,
      reason: '',
      archive: null,
    });
    const node: FleetNodeResult = {
      node: 'n1',
      reachable: true,
      error: null,
      versions: { containerdVersion: '1.7.22', containerdRevision: 'x', distro: 'k3s', distroVersion: 'v1.31.4+k3s1' },
      images: [ref('a:1', 'distro', 'unpinned', 'a'), ref('b:1', 'durable', 'pinned', 'b'), ref('c:1', 'none', 'unpinned', 'c')],
      archives: [],
      disk: null,
    };
    const report = losingImagesOf(node);
    expect(report.map((p) => p.refs)).toEqual([['a:1']]);
    expect(losingOf(imageProtection(node.images!, 'any'))).toHaveLength(1);
    expect(report.every(losesPin)).toBe(true);
    const m = buildMatrix(['n1'], { n1: node });
    expect(m.columns[0]!.losingPins).toBe(report.length);
    expect(m.rows.filter((r) => r.atRisk).map((r) => r.name)).toEqual(['a:1']);
  });
});
