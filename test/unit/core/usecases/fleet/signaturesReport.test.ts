// The fleet report's HTML and CSV say, per reference, what Holdfast verified of its signature at
// import (#48), in shared/signatures' words; and the HTML's pin cell names the node's distro.
import { describe, expect, it } from 'vitest';
import { fleetCsv, fleetHtml, parseCsv, summarizeFleet, type FleetNodeResult, type FleetReport } from '../../../../../src/core/usecases/fleet';
import type { Distro } from '../../../../../src/shared/domain/nodes';
import type { SignatureRecord } from '../../../../../src/shared/signatures';
import { imageRef } from '../../../../support/imageRef';

const FP = '3f1c2a4b'.padEnd(64, '0');
const SIGNED: SignatureRecord = { verified: true, by: FP, format: 'bundle', at: '2026-12-08T10:00:00Z' };
const OTHER = `sha256:${'b'.repeat(64)}`;
const MOVED: SignatureRecord = { verified: false, reason: `signature is for ${OTHER} not for this image`, at: '2026-12-08T11:00:00Z' };

const node = (distro: Distro): FleetNodeResult => ({
  node: 'n1',
  reachable: true,
  error: null,
  versions: { containerdVersion: '2.1.9', containerdRevision: '', distro, distroVersion: distro === 'rke2' ? 'v1.33.1+rke2r1' : 'v1.33.1+k3s1' },
  images: [
    imageRef('registry.local/signed:1', { signature: SIGNED, labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable', afterRestart: 'pinned' }, 'a'),
    imageRef('registry.local/moved:1', { signature: MOVED, labels: { 'io.cri-containerd.pinned': 'pinned', [`io.cattle.${distro}.pinned`]: 'pinned' }, pin: 'distro', afterRestart: 'pinned' }, 'b'),
    imageRef('registry.local/plain:1', { signature: null }, 'e'),
  ],
  archives: [],
  disk: null,
});

const report = (distro: Distro): FleetReport => ({ generatedAt: '2026-12-08T12:00:00Z', summary: summarizeFleet([node(distro)], []), nodes: [node(distro)], drift: [] });

/** The HTML's cells of the images table, per row, tags stripped (digests as the page shortens them). */
function imageRows(page: string): string[][] {
  const table = page.slice(page.indexOf('<th>Reference</th>'));
  const body = table.slice(0, table.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, '')));
}

describe('signatures in the fleet report', () => {
  it('CSV: a signature column, in the shared words (never verified when Holdfast did not)', () => {
    const rows = parseCsv(fleetCsv(report('k3s')));
    expect(rows[0]!.at(-1)).toBe('signature');
    expect(rows.slice(1).map((r) => [r[2], r.at(-1)])).toEqual([
      ['registry.local/signed:1', 'signed by key 3f1c2a4b…, verified 2026-12-08'],
      ['registry.local/moved:1', `not verified: signature is for ${OTHER} not for this image (2026-12-08)`],
      ['registry.local/plain:1', 'never verified'],
    ]);
  });

  it('HTML: a Signature column per image, the same sentence, the digest shortened as elsewhere on the page', () => {
    const page = fleetHtml(report('k3s'));
    expect(page).toContain('<th>Why</th><th>Signature</th>');
    expect(imageRows(page).map((r) => [r[0], r.at(-1)])).toEqual([
      ['registry.local/signed:1', 'signed by key 3f1c2a4b…, verified 2026-12-08'],
      ['registry.local/moved:1', `not verified: signature is for sha256:bbbbbbbbbbbb…bbbb not for this image (2026-12-08)`],
      ['registry.local/plain:1', 'never verified'],
    ]);
  });

  it("HTML: a distro pin is named as the node's distro: RKE2 on RKE2, k3s on k3s", () => {
    expect(imageRows(fleetHtml(report('rke2'))).map((r) => [r[0], r[1]])).toEqual([
      ['registry.local/signed:1', 'durable'],
      ['registry.local/moved:1', 'RKE2'],
      ['registry.local/plain:1', 'none'],
    ]);
    expect(imageRows(fleetHtml(report('k3s')))[1]![1]).toBe('k3s');
  });
});
