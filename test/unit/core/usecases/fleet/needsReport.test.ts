// The fleet reports (summary, HTML, CSV) answer "will a pod at this site fail?": the needed images
// at risk per node with the workloads that need them, and the needed images a node lacks.
import { describe, expect, it } from 'vitest';
import { computeDrift, fleetCsv, fleetHtml, parseCsv, summarizeFleet, type FleetNodeResult } from '../../../../../src/core/usecases/fleet';
import { remedyCommand } from '../../../../../src/cli/remedyText';
import type { ImageRef } from '../../../../../src/shared/domain/images';
import { applyNeeds, type NodeNeeds } from '../../../../../src/shared/needs';
import { imageProtection } from '../../../../../src/shared/protection';
import { criPinning } from '../../../../../src/shared/versions';
import { imageRef } from '../../../../support/imageRef';

const VERSIONS = { containerdVersion: '2.1.9', containerdRevision: 'r', distro: 'k3s' as const, distroVersion: 'v1.33.7+k3s1' };

const ref = (name: string, id: string, pin: ImageRef['pin'], afterRestart: ImageRef['afterRestart']): ImageRef =>
  imageRef(name, { labels: pin === 'durable' ? { 'io.cri-containerd.pinned': 'pinned' } : {}, pin, afterRestart, reason: 'r' }, id);

const NEEDS: NodeNeeds = {
  sources: [{ kind: 'cluster', label: 'kubectl on n1' }],
  images: [
    { ref: 'docker.io/library/web:1', workloads: [{ kind: 'Deployment', namespace: 'default', name: 'web', why: 'scaled to 0' }], source: 'cluster' },
    { ref: 'docker.io/library/db:2', workloads: [{ kind: 'StatefulSet', namespace: 'data', name: 'db', why: 'running' }], source: 'cluster' },
    { ref: 'docker.io/library/report:1', workloads: [{ kind: 'CronJob', namespace: 'default', name: 'nightly', why: 'CronJob between runs' }], source: 'cluster' },
  ],
  notes: [],
};

function node(): FleetNodeResult {
  const refs = [ref('docker.io/library/web:1', 'a', 'none', 'unpinned'), ref('docker.io/library/db:2', 'b', 'durable', 'pinned'), ref('docker.io/library/old:0', 'd', 'durable', 'pinned')];
  const judged = applyNeeds(refs, imageProtection(refs, criPinning(VERSIONS.containerdVersion)), NEEDS, { holders: () => ['n2'] });
  return { node: 'n1', reachable: true, error: null, versions: VERSIONS, images: judged.refs, archives: [], disk: null, needs: judged.report };
}

describe('needed images at risk in the fleet reports', () => {
  const nodes = [node()];
  const report = { generatedAt: '2026-12-05T00:00:00.000Z', summary: summarizeFleet(nodes, computeDrift(nodes)), nodes, drift: [] };

  it('summary.atRisk lists them per node with the workloads, and counts them', () => {
    const risk = report.summary.atRisk.find((r) => r.node === 'n1')!;
    expect(risk.atRisk!.map((a) => [a.refs[0], a.verdict, a.workloads.map((w) => w.name)])).toEqual([
      ['docker.io/library/web:1', 'unprotected', ['web']],
      ['docker.io/library/report:1', 'missing', ['nightly']],
    ]);
    expect(report.summary.atRiskImages).toBe(2);
    expect(risk.reasons.join('\n')).toContain('2 needed images at risk');
  });

  it('the HTML report has a card and a table naming image, verdict and workload', () => {
    const page = fleetHtml(report, remedyCommand);
    expect(page).toContain('<b>2</b>needed images at risk');
    expect(page).toContain('Deployment default/web (scaled to 0)');
    expect(page).toContain('CronJob default/nightly (CronJob between runs)');
    expect(page).toContain('holdfast pin NODE --needed');
    // Core words no command: the page names one only as its caller (the CLI, the app) words it.
    expect(fleetHtml(report)).not.toContain('holdfast pin');
  });

  it('the CSV gives every reference its site need, and a row for each needed image the node lacks', () => {
    const rows = parseCsv(fleetCsv(report));
    const col = (n: string) => rows[0]!.indexOf(n);
    const byRef = new Map(rows.slice(1).map((r) => [r[2], r]));
    expect(byRef.get('docker.io/library/web:1')![col('siteNeed')]).toBe('unprotected');
    expect(byRef.get('docker.io/library/web:1')![col('atRisk')]).toBe('true');
    expect(byRef.get('docker.io/library/db:2')![col('siteNeed')]).toBe('protected');
    expect(byRef.get('docker.io/library/old:0')![col('siteNeed')]).toBe('reclaimable');
    expect(byRef.get('docker.io/library/report:1')![col('siteNeed')]).toBe('missing');
    expect(byRef.get('docker.io/library/report:1')![col('archive')]).toBe('n2');
    expect(byRef.get('docker.io/library/report:1')![col('neededBy')]).toBe('CronJob default/nightly');
  });
});
