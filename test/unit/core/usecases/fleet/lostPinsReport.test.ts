// The fleet report's lost pins and capability warnings: at-risk reasons, CSV rows, HTML (escaped,
// commands set as code). Lost pins come from the shared rule, as the probe computes them.
import { describe, expect, it } from 'vitest';
import { computeDrift, fleetCsv, fleetHtml, parseCsv, summarizeFleet, type FleetNodeResult, type FleetReport } from '../../../../../src/core/usecases/fleet';
import type { AuditEntry } from '../../../../../src/shared/domain/audit';
import type { ImageRef } from '../../../../../src/shared/domain/images';
import { activeDurablePins, findLostPins } from '../../../../../src/shared/lostPins';
import { imageRef } from '../../../../support/imageRef';

const CRI = 'io.cri-containerd.pinned';
const ID = 'sha256:' + 'c'.repeat(64);
const EVIL = 'evil/<img src=x onerror=alert(1)>:1';
const KEPT = 'docker.io/library/kept:1';
const audit: AuditEntry[] = [
  { time: '2026-03-01T08:00:00.000Z', user: 'tech@laptop', node: 'a', action: 'pin', changes: [EVIL, KEPT].map((ref) => ({ ref, imageId: ref === KEPT ? ID : 'sha256:' + 'e'.repeat(64), before: {}, after: { [CRI]: 'pinned' } })) },
];
const kept: ImageRef = imageRef(KEPT, { imageId: ID });
const lostPins = findLostPins({ node: 'a', pins: activeDurablePins(audit, 'a'), refs: [kept] });

const node = (n: string, extra: Partial<FleetNodeResult>): FleetNodeResult => ({
  node: n,
  reachable: true,
  error: null,
  versions: { containerdVersion: '2.1.9', containerdRevision: '', distro: 'k3s', distroVersion: 'v1.33.1+k3s1' },
  images: [],
  archives: [],
  disk: null,
  ...extra,
});

function report(): FleetReport {
  const nodes = [
    node('a', { images: [{ ...kept, lostPin: lostPins.find((l) => l.ref === KEPT)! }], lostPins, warnings: [] }),
    // An old node, its result without `warnings` (the summary derives them from the versions).
    node('old', { versions: { containerdVersion: '1.6.20~ds1', containerdRevision: '', distro: 'k3s', distroVersion: 'v1.28.5+k3s1' } }),
  ];
  const drift = computeDrift(nodes);
  return { generatedAt: '2026-03-05T00:00:00.000Z', summary: summarizeFleet(nodes, drift), nodes, drift };
}

describe('lost pins and capability warnings in the fleet report', () => {
  it('are at-risk reasons and counted in the summary', () => {
    const s = report().summary;
    expect(s.lostPins).toBe(2);
    expect(s.atRisk.map((r) => [r.node, r.lostPins, r.warnings, r.reasons])).toEqual([
      ['a', 2, 0, [`2 durable pins Holdfast made are gone: ${KEPT} (pin label removed), ${EVIL} (image deleted)`]],
      ['old', 0, 2, [expect.stringMatching(/^containerd 1\.6\.20~ds1 has no CRI image pinning/), expect.stringMatching(/^k3s v1\.28\.5\+k3s1 pins nothing it imports/)]],
    ]);
  });

  it('CSV: the loss first in a present reference’s reason, a row of its own for a gone one, a row per warning', () => {
    const rows = parseCsv(fleetCsv(report())).slice(1);
    expect(rows.map((r) => [r[0], r[2], r[5]])).toEqual([
      ['a', KEPT, 'none'],
      ['a', EVIL, ''],
      ['old', '', ''],
      ['old', '', ''],
      ['old', '', ''],
    ]);
    expect(rows[0]![7]).toMatch(/^Durable pin lost \(pin label removed; made durable by tech@laptop at 2026-03-01T08:00:00\.000Z\): .* Not pinned\.$/);
    expect(rows[1]![7]).toMatch(/^Durable pin lost \(image deleted; .*Remedy: No file in the images dir brings it/);
    expect(rows[2]![7]).toMatch(/^warning: containerd 1\.6\.20~ds1 has no CRI image pinning/);
    expect(rows[4]![7]).toBe('no images');
  });

  it('HTML: a table of lost pins, escaped, commands as code, and the warnings on the node', () => {
    const page = fleetHtml(report());
    expect(page).not.toContain('<img');
    expect(page).toContain('evil/&#60;img src=x onerror=alert(1)&#62;:1');
    expect(page).toContain("Pins lost behind Holdfast's back");
    expect(page).toContain('<code class="mono">ctr images prune --all</code>');
    expect(page).toContain('<span class="tag bad">durable pin lost</span>');
    expect(page).toContain('<p class="warnbox"><b>Warning:</b> containerd 1.6.20~ds1 has no CRI image pinning');
  });
});
