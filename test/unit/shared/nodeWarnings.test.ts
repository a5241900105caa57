// Node capability warnings from the versions a node runs (shared/nodeWarnings.ts on top of the
// rules in shared/versions.ts), at the version boundaries. Version strings as nodes print them:
// Debian 12's containerd ("1.6.20~ds1"), k3s's bundled one ("v1.7.23-k3s2", "2.0.5-k3s1.32"),
// Debian's newer suites ("1.7.24~ds1", "2.1.9+unknown"), `k3s --version` ("v1.28.5+k3s1").
import { describe, expect, it } from 'vitest';
import type { NodeInfo } from '../../../src/shared/domain/nodes';
import { nodeWarnings, pinNotHonoured } from '../../../src/shared/nodeWarnings';

const info = (containerdVersion: string, distroVersion: string | null = 'v1.31.6+k3s1', distro: NodeInfo['distro'] = 'k3s') => ({ containerdVersion, distro, distroVersion });
const kinds = (i: Parameters<typeof nodeWarnings>[0]) => nodeWarnings(i).map((w) => w.kind);

describe('nodeWarnings', () => {
  it('containerd before 1.7.3 has no CRI pinning; 1.7.3 and later, 2.x do', () => {
    expect(kinds(info('1.6.20~ds1'))).toEqual(['no-cri-pinning']);
    expect(kinds(info('v1.7.2'))).toEqual(['no-cri-pinning']);
    expect(kinds(info('v1.7.3'))).toEqual([]);
    expect(kinds(info('1.7.24~ds1'))).toEqual([]);
    expect(kinds(info('2.0.5-k3s1.32'))).toEqual([]);
    expect(kinds(info('2.1.9+unknown'))).toEqual([]);
  });

  it('says what to do, with the version the node runs', () => {
    expect(nodeWarnings(info('1.6.20~ds1'))[0]!.message).toBe(
      "containerd 1.6.20~ds1 has no CRI image pinning (needs 1.7.3+; k3s bundles 1.7/2.x) — kubelet's image GC may delete any image, pinned or not.",
    );
  });

  it('k3s releases before the pin PR (v1.29.1, v1.28.6, v1.27.10, v1.26.13) pin nothing they import', () => {
    expect(kinds(info('v1.7.11-k3s2', 'v1.28.5+k3s1'))).toEqual(['distro-pins-nothing']);
    expect(kinds(info('v1.7.11-k3s2', 'v1.28.6+k3s1'))).toEqual([]);
    expect(kinds(info('v1.7.11-k3s2', 'v1.29.0+k3s1'))).toEqual(['distro-pins-nothing']);
    expect(kinds(info('v1.7.11-k3s2', 'v1.29.1+k3s1'))).toEqual([]);
    expect(kinds(info('v1.7.11-k3s2', 'v1.27.9+k3s1'))).toEqual(['distro-pins-nothing']);
    expect(kinds(info('v1.7.11-k3s2', 'v1.26.13+k3s1'))).toEqual([]);
    expect(kinds(info('v1.7.11-k3s2', 'v1.25.16+k3s4'))).toEqual(['distro-pins-nothing']);
    const w = nodeWarnings(info('v1.7.11-k3s2', 'v1.28.5+rke2r1', 'rke2'))[0]!;
    expect(w.message).toContain('RKE2 v1.28.5+rke2r1 pins nothing it imports (pins came with v1.29.1, v1.28.6, v1.27.10, v1.26.13)');
  });

  it('both at once, and nothing when versions are unknown', () => {
    expect(kinds(info('1.6.20~ds1', 'v1.26.1+k3s1'))).toEqual(['no-cri-pinning', 'distro-pins-nothing']);
    expect(kinds(info('', null, 'unknown'))).toEqual([]);
    expect(kinds(info('garbage', 'also-garbage'))).toEqual([]);
    expect(kinds(null)).toEqual([]);
  });
});

describe('pinNotHonoured', () => {
  it('only where containerd cannot pin', () => {
    expect(pinNotHonoured('edge-01', { containerdVersion: '1.6.20~ds1' })).toMatch(/^kubelet on edge-01 will not honour this pin: containerd 1\.6\.20~ds1 has no CRI image pinning/);
    expect(pinNotHonoured('edge-01', { containerdVersion: '1.7.3' })).toBeNull();
    expect(pinNotHonoured('edge-01', null)).toBeNull();
  });
});
