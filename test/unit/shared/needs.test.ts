// The needs × protection rule (shared/needs.ts): every image on a node judged by what the site
// needs (cluster workloads, an operator's list, the sandbox image, else air-gap provenance) and by
// whether kubelet keeps it now and after the next k3s start (shared/protection, containerd ≥ 1.7.10).
// References here are made up, shaped as ImageRef carries them.
import { describe, expect, it } from 'vitest';
import {
  AT_RISK_VERDICTS,
  applyNeeds,
  atRiskImages,
  atRiskOf,
  atRiskText,
  isAtRisk,
  judgeNeeds,
  NEED_VERDICT_TEXT,
  satisfies,
  workloadName,
  workloadsText,
  type NeedsRef,
  type NodeNeededImage,
  type NodeNeeds,
  type NeedsKubelet,
} from '../../../src/shared/needs';
import { resolveGcPolicy, type KubeletArg } from '../../../src/shared/gcPolicy';
import { imageProtection, type ImageProtectionRef } from '../../../src/shared/protection';
import type { Workload } from '../../../src/shared/workloads';

type Ref = NeedsRef & ImageProtectionRef;

const hex = (c: string) => c.repeat(64);
const digestOf = (c: string) => `sha256:${hex(c)}`;
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };

/** An image: its manifest digest and its id (config digest), as CRI groups references. */
interface Img {
  digest: string;
  imageId: string;
}
const img = (d: string, id: string): Img => ({ digest: digestOf(d), imageId: digestOf(id) });

const APP = img('d', 'a'); // registry.local/app:3
const WEB = img('e', 'b'); // docker.io/library/nginx:1.25
const TOOL = img('f', 'c'); // a plain pulled image
const PAUSE = img('1', '2');

const base = (name: string, image: Img, over: Partial<Ref> = {}): Ref => ({
  name,
  digest: image.digest,
  imageId: image.imageId,
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason: 'Not pinned.',
  archive: null,
  ...over,
});
const unpinned = (name: string, image: Img, over: Partial<Ref> = {}) => base(name, image, over);
const durable = (name: string, image: Img, over: Partial<Ref> = {}) =>
  base(name, image, { labels: CRI, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin.', ...over });
/** k3s pinned it, and the archive that brings it is still in the images dir: k3s pins it again at start. */
const k3sKept = (name: string, image: Img, archive: string, over: Partial<Ref> = {}) =>
  base(name, image, { labels: K3S, pin: 'distro', afterRestart: 'pinned', archive, reason: 'k3s pins it again from its archive.', ...over });
/** k3s pinned it, and its archive is gone: the next k3s start strips the pin. */
const k3sLosing = (name: string, image: Img, over: Partial<Ref> = {}) =>
  base(name, image, { labels: K3S, pin: 'distro', afterRestart: 'unpinned', reason: 'k3s strips this pin at its next start.', ...over });
/** CRI's own record of an image, named by its id. */
const criRecord = (image: Img, over: Partial<Ref> = {}) => base(image.imageId, image, over);

const web: Workload = { kind: 'Deployment', namespace: 'default', name: 'web', why: 'scaled to 0' };
const backup: Workload = { kind: 'CronJob', namespace: 'ops', name: 'backup', why: 'CronJob between runs' };
const rollback: Workload = { kind: 'ReplicaSet', namespace: 'default', name: 'web-5d8f', why: 'rollback (revision 2)' };

const needOf = (ref: string, workloads: Workload[] = [], source: NodeNeededImage['source'] = 'cluster'): NodeNeededImage => ({ ref, workloads, source });
const fromCluster = (...images: NodeNeededImage[]): NodeNeeds => ({ sources: [{ kind: 'cluster', label: 'kubectl on edge1' }], images, notes: [] });

const judge = (refs: readonly Ref[], needs: NodeNeeds | null, opts: { auditPinned?: ReadonlySet<string>; kubelet?: NeedsKubelet } = {}) =>
  judgeNeeds(refs, imageProtection(refs, 'any'), needs, opts);

describe('verdict words', () => {
  it('at risk means needed and missing, unprotected now, or unprotected after the next k3s start', () => {
    expect([...AT_RISK_VERDICTS]).toEqual(['missing', 'unprotected', 'losing', 'unverified']);
    expect((['missing', 'unprotected', 'losing', 'unverified', 'protected', 'reclaimable', 'unneeded'] as const).filter(isAtRisk)).toEqual(['missing', 'unprotected', 'losing', 'unverified']);
    expect(NEED_VERDICT_TEXT).toEqual({
      missing: 'missing',
      unprotected: 'at risk',
      losing: 'at risk at restart',
      unverified: 'at risk: verify pull',
      protected: 'needed, kept',
      reclaimable: 'reclaimable',
      unneeded: 'not needed',
    });
  });

  it('names workloads the way a person does', () => {
    expect(workloadName(web)).toBe('Deployment default/web');
    expect(workloadName({ kind: 'Pod', namespace: '', name: 'bare', why: 'running' })).toBe('Pod bare');
    expect(workloadsText([web])).toBe('Deployment default/web (scaled to 0)');
    expect(workloadsText([web, backup, rollback])).toBe('Deployment default/web (scaled to 0) and 2 more');
    expect(workloadsText([web, backup], 2)).toBe('Deployment default/web (scaled to 0), CronJob ops/backup (CronJob between runs)');
    expect(workloadsText([{ ...web, why: '' }])).toBe('Deployment default/web');
    expect(workloadsText([])).toBe('');
  });
});

describe('satisfies: which references on the node answer a needed reference', () => {
  const D = APP.digest;
  it('the same name', () => {
    expect(satisfies('registry.local/app:3', { name: 'registry.local/app:3', digest: D })).toBe(true);
    expect(satisfies('registry.local/app:3', { name: 'registry.local/app:4', digest: D })).toBe(false);
    // a tag need is not answered by the image under another tag, even with the same content
    expect(satisfies('registry.local/app:3', { name: `registry.local/app@${D}`, digest: D })).toBe(false);
  });

  it('a need by digest: the digest reference itself, or a reference of the same repository whose target is that digest', () => {
    const need = `registry.local/app@${D}`;
    expect(satisfies(need, { name: need, digest: D })).toBe(true);
    expect(satisfies(need, { name: 'registry.local/app:3', digest: D })).toBe(true);
    expect(satisfies(need, { name: 'registry.local/app:3', digest: WEB.digest })).toBe(false);
  });

  it('not another repository with the same digest, nor CRI’s sha256:<id> record', () => {
    const need = `registry.local/app@${D}`;
    expect(satisfies(need, { name: 'registry.local/other:3', digest: D })).toBe(false);
    expect(satisfies(need, { name: 'registry.local/app/sub:3', digest: D })).toBe(false);
    expect(satisfies(need, { name: 'other.local/app:3', digest: D })).toBe(false);
    expect(satisfies(need, { name: APP.imageId, digest: D })).toBe(false);
  });

  it('a registry with a port is not read as a tag', () => {
    const need = `registry.local:5000/shop/payments@${D}`;
    expect(satisfies(need, { name: 'registry.local:5000/shop/payments:2.3', digest: D })).toBe(true);
    expect(satisfies(need, { name: 'registry.local:5000/shop/orders:2.3', digest: D })).toBe(false);
  });
});

describe('judgeNeeds: every verdict when a source says what is needed', () => {
  const refs = [
    unpinned('docker.io/library/nginx:1.25', WEB), // needed, unprotected now
    k3sLosing('registry.local/app:3', APP), // needed, loses its pin at the next start (archive gone)
    durable('docker.io/library/busybox:1.36', TOOL), // needed, kept
    k3sKept('registry.local/old:1', img('7', '8'), 'site/old.tar.zst'), // pinned, not needed
    unpinned('docker.io/library/alpine:3.20', img('5', '6')), // neither
  ];
  const needs = fromCluster(
    needOf('docker.io/library/nginx:1.25', [web]),
    needOf('registry.local/app:3', [rollback]),
    needOf('docker.io/library/busybox:1.36', [backup]),
    needOf('docker.io/library/redis:7', [web]), // not on the node
  );
  const j = judge(refs, needs);
  const by = (image: Img) => j.byImage.get(image.imageId);

  it('basis known; one entry per image, keyed by image id', () => {
    expect(j.basis).toBe('known');
    expect([...j.byImage.keys()]).toEqual([WEB.imageId, APP.imageId, TOOL.imageId, digestOf('8'), digestOf('6')]);
  });

  it('needed + unprotected now', () => {
    expect(by(WEB)).toEqual({
      key: WEB.imageId,
      verdict: 'unprotected',
      atRisk: true,
      needed: true,
      basis: 'workload',
      workloads: [web],
      neededBecause: 'needed by Deployment default/web (scaled to 0)',
      because: 'needed by Deployment default/web (scaled to 0); not pinned: kubelet may delete it',
    });
  });

  it('needed + losing its pin at the next k3s start (a k3s pin whose archive is gone)', () => {
    expect(by(APP)).toMatchObject({
      verdict: 'losing',
      atRisk: true,
      needed: true,
      basis: 'workload',
      because: 'needed by ReplicaSet default/web-5d8f (rollback (revision 2)); loses its pin at the next k3s start',
    });
  });

  it('needed + protected (durable)', () => {
    expect(by(TOOL)).toMatchObject({ verdict: 'protected', atRisk: false, needed: true, because: 'needed by CronJob ops/backup (CronJob between runs); kept' });
  });

  it('not needed + pinned → reclaimable', () => {
    expect(j.byImage.get(digestOf('8'))).toEqual({
      key: digestOf('8'),
      verdict: 'reclaimable',
      atRisk: false,
      needed: false,
      basis: null,
      workloads: [],
      neededBecause: null,
      because: 'pinned, and nothing at the site needs it',
    });
  });

  it('not needed + unpinned → unneeded', () => {
    expect(j.byImage.get(digestOf('6'))).toMatchObject({ verdict: 'unneeded', atRisk: false, needed: false, basis: null, neededBecause: null, because: 'nothing at the site needs it' });
  });

  it('needed + missing, and the count of images at risk (missing included)', () => {
    expect(j.missing).toEqual([
      { ref: 'docker.io/library/redis:7', workloads: [web], source: 'cluster', because: 'needed by Deployment default/web (scaled to 0); not on this node', heldBy: [] },
    ]);
    expect(j.atRisk).toBe(3);
    expect(atRiskImages(j).map((n) => n.key)).toEqual([WEB.imageId, APP.imageId]);
  });

  it('a k3s pin whose archive is still there keeps a needed image', () => {
    const r = [k3sKept('registry.local/app:3', APP, 'site/app.tar.zst')];
    expect(judge(r, fromCluster(needOf('registry.local/app:3', [web]))).byImage.get(APP.imageId)).toMatchObject({ verdict: 'protected', atRisk: false });
  });
});

describe('judgeNeeds: a need by digest', () => {
  const need = `registry.local/app@${APP.digest}`;
  const needs = fromCluster(needOf(need, [web]));

  it('is satisfied by a tag reference whose target is that digest', () => {
    const j = judge([unpinned('registry.local/app:3', APP)], needs);
    expect(j.missing).toEqual([]);
    expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'unprotected', needed: true, basis: 'workload' });
  });

  it('is satisfied by the digest reference itself', () => {
    const j = judge([durable(need, APP)], needs);
    expect(j.missing).toEqual([]);
    expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'protected', needed: true });
  });

  it('is NOT satisfied by another repository with the same digest', () => {
    const j = judge([durable('registry.local/other:3', APP)], needs);
    expect(j.missing.map((m) => m.ref)).toEqual([need]);
    expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'reclaimable', needed: false });
    expect(j.atRisk).toBe(1);
  });
});

describe("CRI's sha256:<id> record", () => {
  it("shares its image's verdict (one image for kubelet)", () => {
    const refs = [unpinned('docker.io/library/nginx:1.25', WEB), criRecord(WEB)];
    const j = judge(refs, fromCluster(needOf('docker.io/library/nginx:1.25', [web])));
    expect(j.byImage.size).toBe(1);
    expect(j.atRisk).toBe(1);
    const { refs: out } = applyNeeds(refs, imageProtection(refs, 'any'), fromCluster(needOf('docker.io/library/nginx:1.25', [web])));
    expect(out.map((r) => [r.name, r.need.verdict])).toEqual([
      ['docker.io/library/nginx:1.25', 'unprotected'],
      [WEB.imageId, 'unprotected'],
    ]);
    expect(out[1]!.need).toEqual(out[0]!.need);
  });

  it('is not itself a reason to count an image as needed by provenance', () => {
    // A plain pulled image always has CRI's record beside its tag: no '@sha256:' digest reference.
    const refs = [unpinned('docker.io/library/alpine:3.20', TOOL), criRecord(TOOL)];
    expect(judge(refs, null).byImage.get(TOOL.imageId)).toMatchObject({ verdict: 'unneeded', needed: false });
  });
});

describe('judgeNeeds without a source of needs: provenance decides', () => {
  const AGENT: NodeNeeds = { sources: [], images: [], noSource: 'an agent node, and no configured server node of its cluster answered', notes: [] };

  it("an unprotected image with k3s's name@sha256 reference is needed, unprotected, at risk", () => {
    const refs = [unpinned('registry.local/app:3', APP), unpinned(`registry.local/app@${APP.digest}`, APP), criRecord(APP)];
    const j = judge(refs, null);
    expect(j.basis).toBe('provenance');
    expect(j.byImage.get(APP.imageId)).toEqual({
      key: APP.imageId,
      verdict: 'unprotected',
      atRisk: true,
      needed: true,
      basis: 'provenance',
      workloads: [],
      neededBecause: "k3s's digest reference registry.local/app@sha256:dddddddddddd… shows it came from an air-gap archive",
      because: "k3s's digest reference registry.local/app@sha256:dddddddddddd… shows it came from an air-gap archive; not pinned: kubelet may delete it",
    });
    expect(j.atRisk).toBe(1);
  });

  it('an image an archive in the images dir brings is needed', () => {
    const j = judge([k3sKept('registry.local/app:3', APP, 'site/app.tar.zst')], AGENT);
    expect(j.byImage.get(APP.imageId)).toMatchObject({
      verdict: 'protected',
      needed: true,
      basis: 'provenance',
      because: 'site/app.tar.zst in the images dir brings it; kept',
    });
  });

  it('an image k3s pinned now, its archive gone, is needed and losing', () => {
    const j = judge([k3sLosing('registry.local/app:3', APP)], AGENT);
    expect(j.byImage.get(APP.imageId)).toMatchObject({
      verdict: 'losing',
      atRisk: true,
      basis: 'provenance',
      because: 'k3s imported it from an air-gap archive; loses its pin at the next k3s start',
    });
  });

  it('an image in the audit set (Holdfast pinned it) is needed', () => {
    const j = judge([unpinned('registry.local/app:3', APP)], AGENT, { auditPinned: new Set(['registry.local/app:3']) });
    expect(j.byImage.get(APP.imageId)).toMatchObject({
      verdict: 'unprotected',
      atRisk: true,
      basis: 'provenance',
      because: 'Holdfast pinned registry.local/app:3 (audit log); not pinned: kubelet may delete it',
    });
  });

  it('a plain pulled unpinned image is not needed and not at risk', () => {
    const refs = [unpinned('docker.io/library/alpine:3.20', TOOL), criRecord(TOOL)];
    const j = judge(refs, null);
    expect(j.byImage.get(TOOL.imageId)).toEqual({
      key: TOOL.imageId,
      verdict: 'unneeded',
      atRisk: false,
      needed: false,
      basis: null,
      workloads: [],
      neededBecause: null,
      because: 'not from an air-gap archive, and no source of needs',
    });
    expect(j.atRisk).toBe(0);
    expect(judge(refs, AGENT).byImage.get(TOOL.imageId)?.because).toBe(
      'no source of needs (an agent node, and no configured server node of its cluster answered), not from an air-gap archive',
    );
  });

  it('a pinned image without provenance counts as needed, not reclaimable', () => {
    const j = judge([durable('docker.io/library/alpine:3.20', TOOL)], AGENT);
    expect(j.byImage.get(TOOL.imageId)).toMatchObject({
      verdict: 'protected',
      needed: true,
      atRisk: false,
      basis: 'provenance',
      neededBecause: 'pinned on the node, and no source of needs says otherwise',
      because: 'pinned on the node, and no source of needs says otherwise; kept',
    });
  });

  it('with a known source, provenance is ignored', () => {
    const refs = [
      k3sKept('registry.local/app:3', APP, 'site/app.tar.zst'),
      unpinned('registry.local/tool:1', TOOL),
      unpinned(`registry.local/tool@${TOOL.digest}`, TOOL),
      unpinned('registry.local/audited:1', img('3', '4')),
    ];
    const j = judge(refs, fromCluster(needOf('docker.io/library/nginx:1.25', [web])), { auditPinned: new Set(['registry.local/audited:1']) });
    expect(j.basis).toBe('known');
    expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'reclaimable', needed: false, basis: null });
    expect(j.byImage.get(TOOL.imageId)).toMatchObject({ verdict: 'unneeded', needed: false });
    expect(j.byImage.get(digestOf('4'))).toMatchObject({ verdict: 'unneeded', needed: false });
  });

  it('an operator’s list is a known source too', () => {
    const list: NodeNeeds = { sources: [{ kind: 'list', label: 'needed-images/site-a.txt' }], images: [needOf('registry.local/app:3', [], 'list')], notes: [] };
    const refs = [unpinned('registry.local/app:3', APP), k3sLosing('registry.local/other:1', TOOL)];
    const j = judge(refs, list);
    expect(j.basis).toBe('known');
    expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'unprotected', basis: 'list', because: "on the operator's list (needed-images/site-a.txt); not pinned: kubelet may delete it" });
    // k3s-pinned but on no list: reclaimable, not needed by provenance
    expect(j.byImage.get(TOOL.imageId)).toMatchObject({ verdict: 'reclaimable', needed: false });
  });

  it('sandbox-only sources do not make the basis known', () => {
    const pause = 'docker.io/rancher/mirrored-pause:3.6';
    const sandboxOnly: NodeNeeds = {
      sources: [{ kind: 'sandbox', label: "containerd's CRI config" }],
      images: [needOf(pause, [], 'sandbox')],
      noSource: 'an agent node, and no configured server node of its cluster answered',
      notes: [],
    };
    const refs = [k3sKept(pause, PAUSE, 'k3s-airgap-images-amd64.tar.zst'), k3sLosing('registry.local/app:3', APP), unpinned('docker.io/library/alpine:3.20', TOOL)];
    for (const needs of [sandboxOnly, { ...sandboxOnly, noSource: undefined }] as NodeNeeds[]) {
      const j = judge(refs, needs);
      expect(j.basis).toBe('provenance');
      expect(j.byImage.get(PAUSE.imageId)).toMatchObject({ verdict: 'protected', basis: 'sandbox', because: "every pod's sandbox (pause) image; kept" });
      // still needed by provenance, which a known basis would ignore
      expect(j.byImage.get(APP.imageId)).toMatchObject({ verdict: 'losing', basis: 'provenance' });
      expect(j.byImage.get(TOOL.imageId)).toMatchObject({ verdict: 'unneeded' });
    }
    // the sandbox image missing counts as at risk
    const j = judge([unpinned('docker.io/library/alpine:3.20', TOOL)], sandboxOnly);
    expect(j.missing).toEqual([{ ref: pause, workloads: [], source: 'sandbox', because: "every pod's sandbox (pause) image; not on this node", heldBy: [] }]);
    expect(j.atRisk).toBe(1);
  });

  it('needs with a source listed but noSource set (an empty operator’s list) stay provenance', () => {
    const emptyList: NodeNeeds = { sources: [{ kind: 'list', label: 'needed-images/site-a.txt' }], images: [], noSource: 'the node was not asked', notes: [] };
    expect(judge([k3sLosing('registry.local/app:3', APP)], emptyList)).toMatchObject({ basis: 'provenance', atRisk: 1 });
  });
});

describe('judgeNeeds: several needs of one image or one missing reference', () => {
  it('a missing reference needed twice is listed once, with every workload', () => {
    const j = judge(
      [],
      fromCluster(needOf('docker.io/library/redis:7', [web]), needOf('docker.io/library/redis:7', [backup, web]), needOf('docker.io/library/memcached:1', [rollback])),
    );
    expect(j.missing).toEqual([
      { ref: 'docker.io/library/memcached:1', workloads: [rollback], source: 'cluster', because: 'needed by ReplicaSet default/web-5d8f (rollback (revision 2)); not on this node', heldBy: [] },
      { ref: 'docker.io/library/redis:7', workloads: [web, backup], source: 'cluster', because: 'needed by Deployment default/web (scaled to 0) and 1 more; not on this node', heldBy: [] },
    ]);
    expect(j.atRisk).toBe(2);
  });

  it("a missing list entry names the list", () => {
    const needs: NodeNeeds = { sources: [{ kind: 'list', label: 'needed-images/site-a.txt' }], images: [needOf('registry.local/app:3', [], 'list')], notes: [] };
    expect(judge([], needs).missing[0]?.because).toBe("on the operator's list (needed-images/site-a.txt); not on this node");
  });

  it('a workload outranks a list entry, which outranks the sandbox, as the reason shown', () => {
    const r = [unpinned('registry.local/app:3', APP)];
    const sources: NodeNeeds['sources'] = [
      { kind: 'cluster', label: 'kubectl on edge1' },
      { kind: 'list', label: 'needed-images/edge1.txt' },
    ];
    const cases: [NodeNeededImage[], string][] = [
      [[needOf('registry.local/app:3', [], 'sandbox'), needOf('registry.local/app:3', [], 'list'), needOf('registry.local/app:3', [web])], 'workload'],
      [[needOf('registry.local/app:3', [], 'list'), needOf('registry.local/app:3', [web])], 'workload'],
      [[needOf('registry.local/app:3', [web]), needOf('registry.local/app:3', [], 'list')], 'workload'],
      [[needOf('registry.local/app:3', [], 'sandbox'), needOf('registry.local/app:3', [], 'list')], 'list'],
      [[needOf('registry.local/app:3', [], 'list'), needOf('registry.local/app:3', [], 'sandbox')], 'list'],
    ];
    for (const [images, basis] of cases) {
      expect(judge(r, { sources, images, notes: [] }).byImage.get(APP.imageId)?.basis).toBe(basis);
    }
  });

  it('the workloads of every need an image satisfies are gathered, once each', () => {
    const refs = [unpinned('registry.local/app:3', APP), unpinned(`registry.local/app@${APP.digest}`, APP)];
    const j = judge(refs, fromCluster(needOf('registry.local/app:3', [web]), needOf(`registry.local/app@${APP.digest}`, [backup, web])));
    expect(j.byImage.get(APP.imageId)?.workloads).toEqual([web, backup]);
    expect(j.byImage.get(APP.imageId)?.because).toBe('needed by Deployment default/web (scaled to 0) and 1 more; not pinned: kubelet may delete it');
    expect(j.atRisk).toBe(1);
  });
});

describe('applyNeeds', () => {
  interface InventoryRef extends Ref {
    size: number;
  }
  const withSize = (r: Ref, size: number): InventoryRef => ({ ...r, size });

  it('gives every reference its image’s verdict (without the key) and keeps its own fields', () => {
    const refs = [withSize(unpinned('docker.io/library/nginx:1.25', WEB), 10), withSize(criRecord(WEB), 10), withSize(durable('registry.local/old:1', APP), 20)];
    const { refs: out, report } = applyNeeds(refs, imageProtection(refs, 'any'), fromCluster(needOf('docker.io/library/nginx:1.25', [web])));
    expect(out.map((r) => r.size)).toEqual([10, 10, 20]);
    expect(out[0]!.need).toEqual({
      verdict: 'unprotected',
      atRisk: true,
      needed: true,
      basis: 'workload',
      workloads: [web],
      neededBecause: 'needed by Deployment default/web (scaled to 0)',
      because: 'needed by Deployment default/web (scaled to 0); not pinned: kubelet may delete it',
    });
    expect('key' in out[0]!.need).toBe(false);
    expect(out[2]!.need.verdict).toBe('reclaimable');
    expect(report).toEqual({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on edge1' }], notes: [], missing: [], atRisk: 1 });
    expect('noSource' in report).toBe(false);
  });

  it('missing needs get heldBy from the holders callback', () => {
    const asked: string[] = [];
    const holders = (ref: string) => {
      asked.push(ref);
      return ref === 'docker.io/library/redis:7' ? ['site/redis.tar.zst (images dir)', 'edge2'] : [];
    };
    const needs = fromCluster(needOf('docker.io/library/redis:7', [web]), needOf('docker.io/library/redis:7', [backup]), needOf('docker.io/library/memcached:1', [rollback]));
    const { report } = applyNeeds([], new Map(), needs, { holders });
    expect(report.missing).toEqual([
      { ref: 'docker.io/library/memcached:1', workloads: [rollback], source: 'cluster', because: 'needed by ReplicaSet default/web-5d8f (rollback (revision 2)); not on this node', heldBy: [] },
      {
        ref: 'docker.io/library/redis:7',
        workloads: [web, backup],
        source: 'cluster',
        because: 'needed by Deployment default/web (scaled to 0) and 1 more; not on this node',
        heldBy: ['site/redis.tar.zst (images dir)', 'edge2'],
      },
    ]);
    expect(asked.sort()).toEqual(['docker.io/library/memcached:1', 'docker.io/library/redis:7']);
    expect(report.atRisk).toBe(2);
    // without a callback heldBy stays empty
    expect(applyNeeds([], new Map(), needs).report.missing.map((m) => m.heldBy)).toEqual([[], []]);
  });

  it('the report says why no source answered', () => {
    const refs = [k3sLosing('registry.local/app:3', APP)];
    const p = imageProtection(refs, 'any');
    expect(applyNeeds(refs, p, null).report).toEqual({ basis: 'provenance', sources: [], noSource: 'Holdfast could not read what the site needs', notes: [], missing: [], atRisk: 1 });
    const agent: NodeNeeds = {
      sources: [{ kind: 'sandbox', label: "containerd's CRI config" }],
      images: [],
      noSource: 'an agent node, and no configured server node of its cluster answered',
      notes: ['kubectl failed: boom'],
    };
    expect(applyNeeds(refs, p, agent).report).toEqual({
      basis: 'provenance',
      sources: agent.sources,
      noSource: agent.noSource,
      notes: ['kubectl failed: boom'],
      missing: [],
      atRisk: 1,
    });
  });

  it('passes auditPinned on to the rule', () => {
    const refs = [unpinned('registry.local/app:3', APP)];
    const p = imageProtection(refs, 'any');
    expect(applyNeeds(refs, p, null).refs[0]!.need.verdict).toBe('unneeded');
    expect(applyNeeds(refs, p, null, { auditPinned: new Set(['registry.local/app:3']) }).refs[0]!.need.verdict).toBe('unprotected');
  });
});

describe('atRiskOf and atRiskText', () => {
  const refs = [
    unpinned('registry.local/app:3', APP),
    unpinned(`registry.local/app@${APP.digest}`, APP),
    criRecord(APP),
    k3sLosing('docker.io/library/nginx:1.25', WEB),
    durable('docker.io/library/busybox:1.36', TOOL),
  ];
  const needs = fromCluster(
    needOf('registry.local/app:3', [web]),
    needOf('docker.io/library/nginx:1.25', [backup]),
    needOf('docker.io/library/busybox:1.36', [rollback]),
    needOf('docker.io/library/redis:7', [web]),
  );
  const applied = applyNeeds(refs, imageProtection(refs, 'any'), needs, { holders: () => ['edge2'] });

  it('one entry per image at risk with all its references, then what the node lacks', () => {
    const list = atRiskOf(applied.refs, applied.report);
    expect(list).toEqual([
      {
        refs: ['registry.local/app:3', `registry.local/app@${APP.digest}`, APP.imageId],
        verdict: 'unprotected',
        workloads: [web],
        because: 'needed by Deployment default/web (scaled to 0); not pinned: kubelet may delete it',
        pinnable: true,
      },
      { refs: ['docker.io/library/nginx:1.25'], verdict: 'losing', workloads: [backup], because: 'needed by CronJob ops/backup (CronJob between runs); loses its pin at the next k3s start', pinnable: true },
      { refs: ['docker.io/library/redis:7'], verdict: 'missing', workloads: [web], because: 'needed by Deployment default/web (scaled to 0); not on this node', heldBy: ['edge2'], pinnable: false },
    ]);
    expect(list.length).toBe(applied.report.atRisk);
  });

  it('an image whose every named reference is durable is not pinnable: kubelet ignores pins there (containerd < 1.7.3)', () => {
    const durable: (NeedsRef & ImageProtectionRef)[] = [
      { name: 'docker.io/library/app:1', digest: 'sha256:' + '1'.repeat(64), imageId: 'sha256:' + '2'.repeat(64), pin: 'durable' as const, archive: null, labels: { 'io.cri-containerd.pinned': 'pinned' }, afterRestart: 'pinned' as const, reason: '' },
      { name: 'sha256:' + '2'.repeat(64), digest: 'sha256:' + '1'.repeat(64), imageId: 'sha256:' + '2'.repeat(64), pin: 'none' as const, archive: null, labels: {}, afterRestart: 'pinned' as const, reason: '' },
    ];
    const needs = { sources: [{ kind: 'list' as const, label: 'needed-images/a.txt' }], images: [{ ref: 'docker.io/library/app:1', workloads: [], source: 'list' as const }], notes: [] };
    const judged = applyNeeds(durable, imageProtection(durable, 'none'), needs);
    const [a] = atRiskOf(judged.refs, judged.report);
    expect(a).toMatchObject({ verdict: 'unprotected', pinnable: false });
    expect(a!.because).toContain('pinned, but kubelet does not see the pin on this containerd');
  });

  it('nothing to say without images or a report', () => {
    expect(atRiskOf(null, null)).toEqual([]);
    expect(atRiskOf(undefined, undefined)).toEqual([]);
    // references without a verdict (built elsewhere) are not at risk
    expect(atRiskOf(refs, null)).toEqual([]);
  });

  it('a short text naming a tag reference of each, and how many more', () => {
    const list = atRiskOf(applied.refs, applied.report);
    expect(atRiskText(list)).toBe('registry.local/app:3 (at risk), docker.io/library/nginx:1.25 (at risk at restart), docker.io/library/redis:7 (missing)');
    expect(atRiskText(list, 1)).toBe('registry.local/app:3 (at risk) and 2 more');
    // an image with no tag reference is named by its first reference
    expect(atRiskText([{ refs: [`registry.local/app@${APP.digest}`, APP.imageId], verdict: 'unprotected', workloads: [], because: '', pinnable: true }])).toBe(`registry.local/app@${APP.digest} (at risk)`);
  });
});

// kubelet's own settings change the verdicts: its max-age GC (KEP-4210) takes an unpinned image
// with no disk pressure, and its credential verification (KEP-2535) makes it pull an image it did
// not pull itself (an imported one) before a pod may use it — offline, the pod does not start.
describe('judgeNeeds: the node’s kubelet settings', () => {
  const kubelet = (minor: number, ...args: [string, string][]): NeedsKubelet =>
    resolveGcPolicy(args.map(([flag, value]): KubeletArg => ({ flag, value, source: '/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf' })), [], { minor });
  const refs = [
    unpinned('docker.io/library/nginx:1.25', WEB),
    k3sLosing('registry.local/app:3', APP),
    durable('docker.io/library/busybox:1.36', TOOL),
    durable('registry.local/pause:3.10', PAUSE),
  ];
  const needs: NodeNeeds = {
    ...fromCluster(needOf('docker.io/library/nginx:1.25', [web]), needOf('registry.local/app:3', [rollback]), needOf('docker.io/library/busybox:1.36', [backup])),
    images: [needOf('docker.io/library/nginx:1.25', [web]), needOf('registry.local/app:3', [rollback]), needOf('docker.io/library/busybox:1.36', [backup]), needOf('registry.local/pause:3.10', [], 'sandbox')],
  };
  const cases: { name: string; kubelet: NeedsKubelet | undefined; want: Record<string, [string, string]>; allowlist?: string[] }[] = [
    {
      name: 'not read: the threshold GC alone',
      kubelet: undefined,
      want: {
        nginx: ['unprotected', 'not pinned: kubelet may delete it'],
        app: ['losing', 'loses its pin at the next k3s start'],
        busybox: ['protected', 'kept'],
        pause: ['protected', 'kept'],
      },
    },
    {
      name: "1.35's defaults (NeverVerifyPreloadedImages, no max-age): imported images are exempt",
      kubelet: kubelet(35),
      want: { nginx: ['unprotected', 'not pinned: kubelet may delete it'], app: ['losing', 'loses its pin at the next k3s start'], busybox: ['protected', 'kept'], pause: ['protected', 'kept'] },
    },
    {
      name: 'max-age set: an unpinned needed image goes within one age after kubelet starts, whatever the disk',
      kubelet: kubelet(35, ['image-maximum-gc-age', '168h']),
      want: {
        nginx: ['unprotected', "not pinned: kubelet's max-age GC deletes it within 7 days after kubelet's last start"],
        app: ['losing', "loses its pin at the next k3s start; then kubelet's max-age GC deletes it within 7 days after kubelet's last start"],
        busybox: ['protected', 'kept'],
        pause: ['protected', 'kept'],
      },
    },
    {
      name: 'AlwaysVerify: every needed image kubelet did not pull is at risk (the sandbox image is CRI’s, exempt)',
      kubelet: kubelet(35, ['imagePullCredentialsVerificationPolicy', 'AlwaysVerify']),
      want: {
        nginx: ['unprotected', 'not pinned: kubelet may delete it; kubelet will try to pull it to verify credentials; offline the pod will not start'],
        app: ['losing', 'loses its pin at the next k3s start; kubelet will try to pull it to verify credentials; offline the pod will not start'],
        busybox: ['unverified', 'kubelet will try to pull it to verify credentials; offline the pod will not start'],
        pause: ['protected', 'kept'],
      },
      allowlist: ['docker.io/library/busybox', 'docker.io/library/nginx', 'registry.local/app'],
    },
    {
      name: 'NeverVerifyAllowlistedImages: only images the allow-list does not cover',
      kubelet: kubelet(35, ['imagePullCredentialsVerificationPolicy', 'NeverVerifyAllowlistedImages'], ['preloadedImagesVerificationAllowlist', 'docker.io/library/*']),
      want: {
        nginx: ['unprotected', 'not pinned: kubelet may delete it'],
        app: ['losing', 'loses its pin at the next k3s start; kubelet will try to pull it to verify credentials; offline the pod will not start'],
        busybox: ['protected', 'kept'],
        pause: ['protected', 'kept'],
      },
      allowlist: ['registry.local/app'],
    },
    {
      name: 'AlwaysVerify on 1.34 without the feature gate: no effect',
      kubelet: kubelet(34, ['imagePullCredentialsVerificationPolicy', 'AlwaysVerify']),
      want: { nginx: ['unprotected', 'not pinned: kubelet may delete it'], app: ['losing', 'loses its pin at the next k3s start'], busybox: ['protected', 'kept'], pause: ['protected', 'kept'] },
    },
  ];
  const keys: Record<string, Img> = { nginx: WEB, app: APP, busybox: TOOL, pause: PAUSE };
  for (const c of cases) {
    it(c.name, () => {
      const j = judge(refs, needs, c.kubelet ? { kubelet: c.kubelet } : {});
      const got = Object.fromEntries(Object.entries(keys).map(([k, image]) => {
        const n = j.byImage.get(image.imageId)!;
        return [k, [n.verdict, n.because.split('; ').slice(1).join('; ')]];
      }));
      expect(got).toEqual(c.want);
      expect(j.verification?.allowlist).toEqual(c.allowlist);
      if (c.allowlist) expect(j.verification).toMatchObject({ field: 'imagePullCredentialsVerificationPolicy', exemptWith: 'NeverVerifyPreloadedImages', source: '/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf' });
      // Every verdict but "kept" is at risk, and atRiskOf lists them for the views.
      expect(j.atRisk).toBe(Object.values(c.want).filter(([v]) => v !== 'protected').length);
    });
  }

  it('the report carries the remedy; atRiskOf lists an unverified image', () => {
    const k = kubelet(35, ['imagePullCredentialsVerificationPolicy', 'AlwaysVerify']);
    const r = applyNeeds(refs, imageProtection(refs, 'any'), needs, { kubelet: k });
    expect(r.report.verification?.policy).toBe('AlwaysVerify');
    expect(atRiskOf(r.refs, r.report).map((a) => `${a.refs[0]} ${a.verdict} pinnable=${a.pinnable}`)).toEqual([
      'docker.io/library/nginx:1.25 unprotected pinnable=true',
      'registry.local/app:3 losing pinnable=true',
      'docker.io/library/busybox:1.36 unverified pinnable=false',
    ]);
    // …and a k3s pin kept by its archive: pinning it durably would not help either.
    const kept = [k3sKept('docker.io/library/busybox:1.36', TOOL, 'site/busybox.tar')];
    const k3sOnly = applyNeeds(kept, imageProtection(kept, 'any'), needs, { kubelet: k });
    expect(atRiskOf(k3sOnly.refs, k3sOnly.report).filter((a) => a.verdict !== 'missing').map((a) => [a.verdict, a.pinnable])).toEqual([['unverified', false]]);
  });
});
