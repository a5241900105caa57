// The site's needs as the app shows them: the per-node list of needed images at risk (the one
// rule, shared/needs atRiskOf, never a copy), the words around it, each image group's verdict,
// and the fleet matrix's flagged cells and rows of missing needed images.
import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import type { NeedsReport, RefNeed } from '../../../src/shared/needs';
import { atRiskOf } from '../../../src/shared/needs';
import type { Workload } from '../../../src/shared/workloads';
import { atRiskName, needsNotes, needsSourceText, neededAtRiskTotals, nodeAtRisk, sortAtRisk, workloadLine, workloadsForDisplay } from '../../../src/renderer/needsView';
import { buildMatrix, filterMatrix, summarizeMatrix } from '../../../src/renderer/fleetMatrix';
import { groupImages } from '../../../src/renderer/model/images';

const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };

const web: Workload = { kind: 'Deployment', namespace: 'default', name: 'web', why: 'running' };
const webPod: Workload = { kind: 'Pod', namespace: 'default', name: 'web-7f9c-abcde', why: 'running' };
const webRs: Workload = { kind: 'ReplicaSet', namespace: 'default', name: 'web-7f9c', why: 'running' };
const report: Workload = { kind: 'CronJob', namespace: 'acme', name: 'nightly-report', why: 'CronJob between runs' };

function need(verdict: RefNeed['verdict'], workloads: Workload[] = [], because: string = verdict): RefNeed {
  const atRisk = verdict === 'missing' || verdict === 'unprotected' || verdict === 'losing';
  const needed = atRisk || verdict === 'protected';
  return { verdict, atRisk, needed, basis: needed ? 'workload' : null, workloads, neededBecause: needed ? because : null, because };
}

function ref(name: string, p: Partial<ImageRef> = {}): ImageRef {
  const pin = p.pin ?? 'none';
  return {
    name,
    digest: D('d'),
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: D('1'),
    size: 1,
    platforms: ['linux/amd64'],
    createdAt: null,
    labels: pin === 'durable' ? CRI : pin === 'distro' ? K3S : {},
    pin,
    afterRestart: pin === 'none' ? 'unpinned' : 'pinned',
    reason: '',
    archive: null,
    ...p,
  };
}

const KNOWN: NeedsReport = {
  basis: 'known',
  sources: [
    { kind: 'cluster', label: 'kubectl on n1' },
    { kind: 'sandbox', label: "containerd's CRI config" },
  ],
  notes: [],
  missing: [{ ref: 'registry.site.lan/acme/report:1.0', workloads: [report], source: 'cluster', because: 'needed by CronJob acme/nightly-report (CronJob between runs); not on this node', heldBy: ['node n2'] }],
  atRisk: 3,
};

// n1: web (tag + digest reference, unpinned: at risk), coredns (k3s pin lost at restart: at risk),
// nginx (durable, needed: kept), busybox (not needed); it lacks the report's image.
const n1Images: ImageRef[] = [
  ref('docker.io/library/web:1', { digest: D('a'), imageId: D('a1'), need: need('unprotected', [web, webRs, webPod], 'needed by Deployment default/web (running) and 2 more; not pinned: kubelet may delete it') }),
  ref('docker.io/library/web@' + D('a'), { digest: D('a'), imageId: D('a1'), need: need('unprotected', [web, webRs, webPod], 'needed by Deployment default/web (running) and 2 more; not pinned: kubelet may delete it') }),
  ref('docker.io/rancher/coredns:1.12.0', { digest: D('b'), imageId: D('b1'), pin: 'distro', afterRestart: 'unpinned', need: need('losing') }),
  ref('docker.io/library/nginx:1.27', { digest: D('c'), imageId: D('c1'), pin: 'durable', need: need('protected') }),
  ref('docker.io/library/busybox:1.36', { digest: D('e'), imageId: D('e1'), need: need('unneeded') }),
];

describe('a node’s needed images at risk', () => {
  it('is the shared rule’s answer (atRiskOf), once the images are in, one entry per image, missing ones included', () => {
    expect(nodeAtRisk({ items: n1Images, needs: KNOWN })).toBeNull();
    const list = nodeAtRisk({ items: n1Images, needs: KNOWN, loadedAt: 1 })!;
    expect(list).toEqual(atRiskOf(n1Images, KNOWN));
    expect(list.map((a) => [a.refs, a.verdict])).toEqual([
      [['docker.io/library/web:1', `docker.io/library/web@${D('a')}`], 'unprotected'],
      [['docker.io/rancher/coredns:1.12.0'], 'losing'],
      [['registry.site.lan/acme/report:1.0'], 'missing'],
    ]);
    expect(list[2]!.heldBy).toEqual(['node n2']);
  });

  it('is computed once per loaded list and report', () => {
    const images = { items: n1Images, needs: KNOWN, loadedAt: 1 };
    expect(nodeAtRisk(images)).toBe(nodeAtRisk({ ...images, loadedAt: 2 }));
    expect(nodeAtRisk({ ...images, needs: { ...KNOWN, missing: [] } })).toHaveLength(2);
  });

  it('without a report (an answer that carried none) the images’ own verdicts still count', () => {
    expect(nodeAtRisk({ items: n1Images, needs: null, loadedAt: 1 })!.map((a) => a.verdict)).toEqual(['unprotected', 'losing']);
  });

  it('is listed missing first, then not pinned, then losing its pin, each by the tag a person reads it by', () => {
    const sorted = sortAtRisk(nodeAtRisk({ items: n1Images, needs: KNOWN, loadedAt: 1 })!);
    expect(sorted.map(atRiskName)).toEqual(['registry.site.lan/acme/report:1.0', 'docker.io/library/web:1', 'docker.io/rancher/coredns:1.12.0']);
    expect(atRiskName({ refs: [`docker.io/library/web@${D('a')}`, D('a1')] })).toBe(`docker.io/library/web@${D('a')}`);
  });

  it('totals over the fleet count images and the nodes that have any', () => {
    expect(neededAtRiskTotals([null, [], atRiskOf(n1Images, KNOWN), atRiskOf(n1Images, null)])).toEqual({ images: 5, nodes: 2 });
  });
});

describe('where the needs come from', () => {
  it('names the sources when a cluster or a list answered', () => {
    expect(needsSourceText(KNOWN)).toEqual({ known: true, text: "Site needs from: kubectl on n1, containerd's CRI config" });
  });

  it('says why there is none and what counts as needed instead; the note that only repeats it is not shown twice', () => {
    const none: NeedsReport = {
      basis: 'provenance',
      sources: [],
      noSource: 'sudo -n refused kubectl (sudo: a password is required)',
      notes: ['sudo -n refused kubectl (sudo: a password is required)', 'needed-images/site.txt line 3: "x y" is not an image reference'],
      missing: [],
      atRisk: 0,
    };
    expect(needsSourceText(none)).toEqual({
      known: false,
      text: 'No source of site needs (sudo -n refused kubectl (sudo: a password is required)): images from air-gap archives count as needed',
    });
    expect(needsNotes(none)).toEqual(['needed-images/site.txt line 3: "x y" is not an image reference']);
    const sandboxOnly: NeedsReport = { ...none, sources: [{ kind: 'sandbox', label: "containerd's CRI config" }], noSource: 'an agent node, and no configured server node of its cluster answered' };
    expect(needsSourceText(sandboxOnly).text).toBe(
      'No source of site needs (an agent node, and no configured server node of its cluster answered): images from air-gap archives count as needed; the sandbox image from containerd’s CRI config',
    );
  });

  it('lists who needs an image controllers first, as a person names them', () => {
    expect(workloadsForDisplay([webPod, webRs, web]).map(workloadLine)).toEqual([
      'Deployment default/web (running)',
      'ReplicaSet default/web-7f9c (running)',
      'Pod default/web-7f9c-abcde (running)',
    ]);
  });
});

describe('an image group’s verdict', () => {
  it('is the core’s verdict of its image (every reference carries the same); none when the answer had none', () => {
    const groups = groupImages(n1Images);
    expect(groups.find((g) => g.primaryName === 'docker.io/library/web:1')!.need).toMatchObject({ verdict: 'unprotected', atRisk: true });
    expect(groups.find((g) => g.primaryName === 'docker.io/library/busybox:1.36')!.need?.verdict).toBe('unneeded');
    expect(groupImages([ref('x:1')])[0]!.need).toBeNull();
  });
});

describe('fleet matrix: needed images at risk', () => {
  const ok = (node: string, images: ImageRef[], needs: NeedsReport | null): FleetNodeResult => ({ node, reachable: true, error: null, versions: null, images, archives: [], disk: null, needs });
  // n2 holds the report's image (durable, needed there too: kept) and web, not needed there.
  const n2Images: ImageRef[] = [
    ref('registry.site.lan/acme/report:1.0', { digest: D('f'), imageId: D('f1'), pin: 'durable', need: need('protected', [report]) }),
    ref('docker.io/library/web:1', { digest: D('a'), imageId: D('a1'), need: need('unneeded') }),
  ];
  const n2Needs: NeedsReport = { ...KNOWN, sources: [{ kind: 'cluster', label: 'kubectl on n2' }], missing: [], atRisk: 0 };

  it('flags the cell where a needed image is at risk, and makes a missing one a row where the node lacks it', () => {
    const m = buildMatrix(['n1', 'n2', 'n3'], { n1: ok('n1', n1Images, KNOWN), n2: ok('n2', n2Images, n2Needs) });
    expect(m.columns.map((c) => c.neededAtRisk)).toEqual([3, 0, 0]);
    const row = (name: string) => m.rows.find((r) => r.name === name)!;
    // web: at risk on n1 (both its references fold into the tag's cell), not needed on n2.
    expect(row('docker.io/library/web:1').cells.map((c) => c.need?.verdict ?? null)).toEqual(['unprotected', null, null]);
    expect(row('docker.io/library/web:1').neededAtRisk).toBe(true);
    expect(row('docker.io/rancher/coredns:1.12.0').cells[0]).toMatchObject({ pin: 'distro', atRisk: true, need: { verdict: 'losing' } });
    expect(row('docker.io/library/nginx:1.27')).toMatchObject({ neededAtRisk: false });
    // The report's image: missing on n1 where it is needed, durable on n2, n3 not inspected.
    const r = row('registry.site.lan/acme/report:1.0');
    expect(r.cells.map((c) => [c.pin, c.need?.verdict ?? null])).toEqual([
      ['missing', 'missing'],
      ['durable', null],
      ['unknown', null],
    ]);
    expect(r.cells[0]!.need!.heldBy).toEqual(['node n2']);
    const s = summarizeMatrix(m);
    expect(s.neededAtRisk).toBe(3);
    expect(filterMatrix(m, { group: '', problem: 'needed', query: '' }).rows.map((x) => x.name)).toEqual([
      'docker.io/library/web:1',
      'docker.io/rancher/coredns:1.12.0',
      'registry.site.lan/acme/report:1.0',
    ]);
  });

  it('a needed image no node has is a row of its own; a need by digest lands on the row of the tag that has that digest', () => {
    const byDigest = `docker.io/library/web@${D('a')}`;
    const needs: NeedsReport = {
      ...KNOWN,
      missing: [
        { ref: 'registry.site.lan/acme/gone:2', workloads: [], source: 'list', because: "on the operator's list; not on this node", heldBy: [] },
        { ref: byDigest, workloads: [web], source: 'cluster', because: 'needed by Deployment default/web (running); not on this node', heldBy: ['node n2'] },
      ],
    };
    const m = buildMatrix(['n1', 'n2'], { n1: ok('n1', [], needs), n2: ok('n2', n2Images, n2Needs) });
    expect(m.rows.map((r) => r.name)).toEqual(['docker.io/library/web:1', 'registry.site.lan/acme/gone:2', 'registry.site.lan/acme/report:1.0']);
    expect(m.rows[0]!.cells.map((c) => [c.pin, c.need?.refs ?? null])).toEqual([
      ['missing', [byDigest]],
      ['none', null],
    ]);
    expect(m.rows[1]!.cells.map((c) => c.need?.verdict ?? null)).toEqual(['missing', null]);
    // A node with a needed image at risk counts among the nodes at risk.
    expect(summarizeMatrix(m).nodesAtRisk).toBe(1);
  });

  it('in a group view a missing needed image stays: it is not noise', () => {
    const m = buildMatrix(['n1', 'n2'], { n1: ok('n1', n1Images, KNOWN), n2: ok('n2', [], null) }, { groups: { n1: 'north', n2: 'south' } });
    expect(filterMatrix(m, { group: 'north', problem: 'all', query: 'report' }).rows.map((r) => r.name)).toEqual(['registry.site.lan/acme/report:1.0']);
  });
});
