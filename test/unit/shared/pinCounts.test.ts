// One counting rule for every view (issue #49, item 5 of "names and numbers"): CRI's sha256:<id>
// record of a k3s-pinned image counts with its image (k3s-pinned), never as "unpinned", in the
// inspect table, the HTML and CSV reports and the app alike (the images table: integration).
import { describe, expect, it } from 'vitest';
import { fleetText } from '../../../src/cli/commands/inspect';
import { Screen } from '../../../src/cli/screen';
import { completeNode } from '../../../src/core/config/nodes';
import { fleetCsv, fleetHtml, parseCsv, summarizeFleet } from '../../../src/core/usecases/fleet';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { pinCounts, pinReading } from '../../../src/shared/protection';
import { groupsOfRefs } from '../../../src/renderer/model/images';
import { imageRef } from '../../support/imageRef';

const K3S = { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' };
const tag = imageRef('docker.io/library/holdfast-sample:1.0', { labels: K3S, pin: 'distro', afterRestart: 'pinned' });
const digestRef = imageRef(`docker.io/library/holdfast-sample@${tag.digest}`, { labels: K3S, pin: 'distro', afterRestart: 'pinned' });
// CRI's own record: no labels, so its own pin reads none.
const record = imageRef(tag.imageId!, { afterRestart: 'pinned' });
// An image nothing pins, with its record: both count as unpinned.
const loose = imageRef('docker.io/library/loose:1', {}, 'e');
const looseRecord = imageRef(loose.imageId!, {}, 'e');
const refs = [tag, digestRef, record, loose, looseRecord];

const node: FleetNodeResult = {
  node: 'n1',
  reachable: true,
  error: null,
  versions: { containerdVersion: '2.0.4', containerdRevision: 'abc', distro: 'k3s', distroVersion: 'v1.32.3+k3s1' },
  images: refs,
  archives: [],
  disk: null,
};

describe('pinCounts: one rule for every view', () => {
  it("counts CRI's record of a k3s-pinned image as k3s-pinned, and a lone or unpinned record as its own", () => {
    expect(pinReading(record, [tag, digestRef, record])).toEqual({ pin: 'distro', inherited: true });
    expect(pinCounts(refs)).toEqual({ durable: 0, distro: 3, none: 2 });
    expect(pinCounts([record])).toEqual({ durable: 0, distro: 0, none: 1 });
  });

  it("inspect's DURABLE, K3S and NONE columns", () => {
    const text = fleetText({ generatedAt: 'now', summary: summarizeFleet([node], []), nodes: [node], drift: [] }, [completeNode({ name: 'n1', host: 'h', knownHosts: '/kh' })], Screen.plain);
    const row = text.split('\n').find((l) => l.startsWith('n1'))!;
    // REFS DURABLE K3S NONE
    expect(row).toMatch(/\b5\s+0\s+3\s+2\s/);
  });

  it("the HTML report's reference counts", () => {
    const page = fleetHtml({ generatedAt: 'now', summary: summarizeFleet([node], []), nodes: [node], drift: [] });
    expect(page).toContain('5: 0 durable, 3 k3s-pinned, 2 unpinned');
  });

  it("the CSV report's pin column", () => {
    const rows = parseCsv(fleetCsv({ nodes: [node] }));
    const pins = rows.slice(1).filter((r) => r[2]).map((r) => r[5]);
    expect(pins.filter((p) => p === 'distro')).toHaveLength(3);
    expect(pins.filter((p) => p === 'none')).toHaveLength(2);
  });

  it("the app's references read the same", () => {
    const shown = groupsOfRefs(refs, 'any', 'k3s').flatMap((g) => g.refs.map((r) => r.shownPin));
    expect({ durable: 0, distro: shown.filter((p) => p === 'distro').length, none: shown.filter((p) => p === 'none').length }).toEqual(pinCounts(refs));
  });
});
