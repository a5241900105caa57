import { describe, expect, it } from 'vitest';
import { formatBytes, formatPercent, shortDigest } from '../../../src/shared/format';
import { computeDrift, fleetHtml, summarizeFleet, type FleetNodeResult, type FleetReport } from '../../../src/core/usecases/fleet';
import { fleetText } from '../../../src/cli/commands/inspect';
import { humanSize as cliSize } from '../../../src/cli/format';
import { buildMatrix } from '../../../src/renderer/fleetMatrix';
import { completeNode } from '../../../src/core/config/nodes';

const GiB = 1024 ** 3;

describe('one byte format everywhere (issue #14)', () => {
  it('the formatter', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(17)).toBe('17 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(12 * 1024 ** 2)).toBe('12 MiB');
    expect(formatBytes(72_405_113)).toBe('69.1 MiB');
    expect(formatBytes(148_211_004)).toBe('141 MiB');
    expect(formatBytes(15.5 * GiB)).toBe('15.5 GiB');
    expect(formatBytes(1024 * 1024 - 1)).toBe('1 MiB');
    expect(formatBytes(-1)).toBe('—');
    expect(formatBytes(null, '-')).toBe('-');
    expect(shortDigest('sha256:' + 'ab'.repeat(32))).toBe('abababababab');
    expect(shortDigest(null, '-')).toBe('-');
  });

  it('one percentage format (issue #33): one decimal at most, no trailing ".0", never 100 % short of full', () => {
    expect(formatPercent(82)).toBe('82 %');
    expect(formatPercent(82.04)).toBe('82 %');
    expect(formatPercent(69.94)).toBe('69.9 %');
    expect(formatPercent(95)).toBe('95 %');
    expect(formatPercent(99.97)).toBe('99.9 %');
    expect(formatPercent(100)).toBe('100 %');
    expect(formatPercent(0.01)).toBe('0.1 %');
    expect(formatPercent(0)).toBe('0 %');
    expect(formatPercent(null)).toBe('?');
    expect(formatPercent(Number.NaN, '—')).toBe('—');
    expect(formatPercent(3, '?', ' points')).toBe('3 points');
  });

  it('15.5 GiB free reads "15.5 GiB" in the CLI table, the HTML report and the app', () => {
    const node: FleetNodeResult = {
      node: 'n1',
      reachable: true,
      error: null,
      versions: null,
      images: [],
      archives: [],
      disk: { path: '/var/lib/rancher/k3s/agent/images', freeBytes: 15.5 * GiB, totalBytes: 100 * GiB, via: 'statvfs' },
    };
    const drift = computeDrift([node]);
    const report: FleetReport = { generatedAt: '2026-01-01T00:00:00Z', nodes: [node], drift, summary: summarizeFleet([node], drift) } as FleetReport;
    expect(fleetText(report, [completeNode({ name: 'n1', host: 'h', knownHosts: '/kh' })])).toContain('15.5 GiB');
    expect(fleetHtml(report)).toContain('15.5 GiB free');
    expect(cliSize(15.5 * GiB)).toBe('15.5 GiB');
    const col = buildMatrix(['n1'], { n1: node }).columns[0]!;
    expect(formatBytes(col.freeBytes!)).toBe('15.5 GiB');
  });
});

describe('one duration format (issue #14)', () => {
  it('the CLI progress ETA and the app say the same', async () => {
    const { formatDuration } = await import('../../../src/shared/format');
    const { duration } = await import('../../../src/cli/transferRows');
    for (const [s, text] of [[4.2, '5 s'], [185, '3 min 05 s'], [3 * 3600 + 180, '3 h 03 min'], [7800, '2 h 10 min']] as const) {
      expect(formatDuration(s)).toBe(text);
      expect(duration(s)).toBe(text);
    }
    expect(formatDuration(null)).toBe('—');
  });
});
