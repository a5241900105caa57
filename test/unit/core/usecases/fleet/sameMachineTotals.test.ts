// The fleet's totals count one machine configured twice once (issue #49 item 8): the report
// says which entries are one machine, the repeated entry says why it is not in the totals, and
// the text output says so under the totals.
import { describe, expect, it } from 'vitest';
import { summarizeFleet, type FleetNodeResult } from '../../../../../src/core/usecases/fleet';
import { fleetText } from '../../../../../src/cli/commands/inspect';
import type { ImageRef } from '../../../../../src/shared/domain/images';

const KEY = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';
const OTHER = 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU';

/** An image that loses its k3s pin at the next start (no archive brings it back). */
const losing: ImageRef = {
  name: 'docker.io/library/app:1',
  digest: `sha256:${'a'.repeat(64)}`,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: `sha256:${'b'.repeat(64)}`,
  size: 1234,
  platforms: ['linux/amd64'],
  createdAt: null,
  labels: { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' },
  pin: 'distro',
  afterRestart: 'unpinned',
  reason: 'because',
  archive: null,
};

const node = (name: string, hostKey: string | undefined, low = false): FleetNodeResult => ({
  node: name,
  reachable: true,
  error: null,
  versions: { containerdVersion: '1.7.22', containerdRevision: 'abc', distro: 'k3s', distroVersion: 'v1.31.4+k3s1', ...(hostKey ? { hostKey } : {}) },
  images: [losing],
  archives: [],
  disk: { path: '/var/lib/rancher/k3s/agent/images', freeBytes: low ? 1024 : 50 * 1024 ** 3, totalBytes: 100 * 1024 ** 3, via: 'statvfs' },
});

describe('one machine configured twice', () => {
  const nodes = [node('edge1', KEY, true), node('edge2', OTHER), node('edge1-again', KEY, true)];
  const s = summarizeFleet(nodes, []);

  it('counts once in every total: nodes, reachable, pins lost at the next start, low disk', () => {
    expect(s).toMatchObject({ nodes: 2, reachable: 2, unreachable: 0, losingPins: 2, lowDisk: 1 });
    expect(s.sameMachine).toEqual([{ nodes: ['edge1', 'edge1-again'], hostKey: KEY }]);
  });

  it('the repeated entry still has its row and its reasons, and says why the totals leave it out', () => {
    const again = s.atRisk.find((r) => r.node === 'edge1-again')!;
    expect(again.sameMachine).toEqual({ nodes: ['edge1', 'edge1-again'], hostKey: KEY });
    expect(again.reasons[0]).toBe(`edge1 and edge1-again are one machine (the same SSH host key ${KEY}): counted once in the totals`);
    expect(s.atRisk.find((r) => r.node === 'edge1')!.sameMachine).toBeUndefined();
  });

  it('the text report says it under the totals', () => {
    const text = fleetText({ generatedAt: 'now', summary: s, nodes, drift: [] }, []);
    expect(text).toContain('2 of 2 nodes reachable');
    expect(text).toContain(`Same machine: edge1 and edge1-again are one machine (the same SSH host key ${KEY}): counted once in these totals.`);
  });

  it('without host keys (unreachable, or read without SSH) nothing is merged', () => {
    expect(summarizeFleet([node('a', undefined), node('b', undefined)], [])).toMatchObject({ nodes: 2 });
    expect(summarizeFleet([node('a', undefined), node('b', undefined)], []).sameMachine).toBeUndefined();
  });
});
