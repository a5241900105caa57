// The short forms beside the long reasons (issue #33), each next to the rule that writes the long
// one: what a list of references shows for CRI's sha256:<id> record (its image's pin, never
// "none" beside "pinned"), a fate, an image's protection, a need, an archive, and the advice
// `holdfast explain` gives.
import { describe, expect, it } from 'vitest';
import { archiveBrief } from '../../../src/shared/archiveRemedy';
import type { ArchiveInfo } from '../../../src/shared/domain/archives';
import type { ImageRef } from '../../../src/shared/domain/images';
import { explainReference } from '../../../src/shared/explain';
import { explainInWords } from '../../../src/cli/commands/explain';
import { NEEDED_FLAG_BRIEF } from '../../../src/shared/gcForecast';
import { applyNeeds, atRiskBrief, atRiskOf, neededByBrief, type NodeNeeds } from '../../../src/shared/needs';
import { PRUNE_KEEP_BRIEF } from '../../../src/shared/prunePlan';
import { applyImageProtection, fateBrief, imageProtection, protectionBrief, refReading } from '../../../src/shared/protection';

const ID = 'sha256:' + 'a'.repeat(64);
const K3S = { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' };
const CRI = { 'io.cri-containerd.pinned': 'pinned' };

const ref = (name: string, over: Partial<ImageRef> = {}): ImageRef => ({
  name,
  digest: 'sha256:' + 'd'.repeat(64),
  mediaType: 'application/vnd.oci.image.index.v1+json',
  imageId: ID,
  size: 2048,
  platforms: ['linux/amd64'],
  createdAt: null,
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason: 'Not pinned: kubelet may delete it.',
  archive: null,
  ...over,
});

/** The seed's image as k3s leaves it: tag and digest reference k3s-pinned, CRI's record unlabelled. */
function seeded(fate: Partial<ImageRef>): ImageRef[] {
  const refs = [
    ref('docker.io/library/app:1.0', { labels: K3S, pin: 'distro', ...fate }),
    ref(`docker.io/library/app@sha256:${'d'.repeat(64)}`, { labels: K3S, pin: 'distro', ...fate }),
    ref(ID),
  ];
  return applyImageProtection(refs, 'any');
}

describe("refReading: CRI's sha256:<id> record reads as its image", () => {
  it('shows the image pin (inherited) beside the image fate, where its own labels say none', () => {
    const refs = seeded({ afterRestart: 'pinned', archive: 'app.tar', reason: 'k3s re-imports app.tar at start and pins it again.' });
    const p = imageProtection(refs, 'any').get(ID)!;
    expect(refs[2]).toMatchObject({ pin: 'none', afterRestart: 'pinned' }); // the contradiction a reader saw
    expect(refReading(refs[2]!, refs, p)).toEqual({ pin: 'distro', outcome: 'pinned', inherited: true });
    expect(refReading(refs[0]!, refs, p)).toEqual({ pin: 'distro', outcome: 'pinned', inherited: false });
  });

  it('loses its pin with its image', () => {
    const refs = seeded({ afterRestart: 'unpinned', reason: 'k3s strips this pin at start and no archive in the images dir brings it back.' });
    const p = imageProtection(refs, 'any').get(ID)!;
    expect(refReading(refs[2]!, refs, p)).toEqual({ pin: 'distro', outcome: 'loses-pin', inherited: true });
  });

  it('a record with a label of its own (holdfast pin labels it too), or alone, shows its own', () => {
    const refs = [ref('docker.io/library/app:1.0', { labels: CRI, pin: 'durable', afterRestart: 'pinned' }), ref(ID, { labels: CRI, pin: 'durable', afterRestart: 'pinned' })];
    const p = imageProtection(refs, 'any').get(ID)!;
    expect(refReading(refs[1]!, refs, p)).toEqual({ pin: 'durable', outcome: 'pinned', inherited: false });
    const alone = [ref(ID)];
    expect(refReading(alone[0]!, alone, imageProtection(alone, 'any').get(ID)!)).toEqual({ pin: 'none', outcome: 'unpinned', inherited: false });
  });
});

describe('short clauses', () => {
  it('a fate: who strips the pin and what (not) brings it back', () => {
    expect(fateBrief({ pin: 'durable', afterRestart: 'pinned', archive: null })).toBe('durable pin');
    expect(fateBrief({ pin: 'distro', afterRestart: 'pinned', archive: 'app.tar' })).toBe('app.tar pins it again');
    expect(fateBrief({ pin: 'distro', afterRestart: 'unpinned', archive: null })).toBe('k3s strips its pin; no archive brings it back');
    expect(fateBrief({ pin: 'distro', afterRestart: 'unpinned', archive: 'app.tar' })).toBe('k3s strips its pin; app.tar will not pin it again');
    expect(fateBrief({ pin: 'none', afterRestart: 'unpinned', archive: null })).toBe('not pinned');
  });

  it("an image's protection: the deciding reference's fate, or the containerd rule", () => {
    const refs = seeded({ afterRestart: 'unpinned' });
    const p = imageProtection(refs, 'any').get(ID)!;
    expect(protectionBrief(p, refs, 'any')).toBe('k3s strips its pin; no archive brings it back');
    expect(protectionBrief(p, refs, 'none')).toBe('no CRI image pinning on this containerd (before 1.7.3)');
    expect(protectionBrief({ afterRestart: false, deciding: [ID] }, refs, 'first-loaded')).toMatch(/1\.7\.3–1\.7\.9/);
    // each clause is short: one line of a narrow terminal
    for (const s of [protectionBrief(p, refs, 'any'), ...Object.values(PRUNE_KEEP_BRIEF), ...Object.values(NEEDED_FLAG_BRIEF)]) expect(s.length).toBeLessThanOrEqual(60);
  });

  it('a need at risk: its verdict, then who needs it', () => {
    const needs: NodeNeeds = {
      sources: [{ kind: 'cluster', label: 'kubectl on n1' }],
      images: [
        { ref: 'docker.io/library/app:1.0', source: 'cluster', workloads: [{ kind: 'Deployment', namespace: 'default', name: 'app', why: 'running' }, { kind: 'Pod', namespace: 'default', name: 'app-1', why: 'running' }] },
        { ref: 'docker.io/library/report:1.0', source: 'cluster', workloads: [{ kind: 'CronJob', namespace: 'default', name: 'nightly', why: 'CronJob between runs' }] },
      ],
      notes: [],
    };
    const refs = seeded({ afterRestart: 'unpinned' });
    const judged = applyNeeds(refs, imageProtection(refs, 'any'), needs);
    const atRisk = atRiskOf(judged.refs, judged.report);
    expect(atRisk.map((a) => atRiskBrief(a, judged.refs, judged.report))).toEqual([
      'at risk at restart: needed by Deployment default/app +1',
      'missing: needed by CronJob default/nightly',
    ]);
    // the long form is still there, whole
    expect(atRisk[1]!.because).toBe('needed by CronJob default/nightly (CronJob between runs); not on this node');
    expect(neededByBrief('list', [])).toBe("on the operator's list");
  });

  it('an archive: the first thing that keeps it from being removed', () => {
    const a = (over: Partial<ArchiveInfo>): ArchiveInfo => ({ path: 'app.tar', kind: 'archive', compression: null, size: 1, mtime: '', images: [], imported: true, safeToRemove: false, reason: '', cachedByK3s: false, ...over });
    expect(archiveBrief(a({ safeToRemove: true }))).toBe('safe to remove: removing it loses nothing');
    expect(archiveBrief(a({ imported: false }))).toBe('k3s has not imported all it brings: it holds the only copy');
    expect(archiveBrief(a({ remedy: { action: 'pin', node: 'n1', archive: 'app.tar' } }))).toBe('its images are not durably pinned yet');
    expect(archiveBrief(a({ kind: 'prepull' }))).toMatch(/pre-pull list/);
  });
});

describe('explainReference', () => {
  const needs = { basis: 'known' as const, sources: [{ kind: 'cluster' as const, label: 'kubectl on n1' }], notes: [], missing: [], atRisk: 0 };

  it("gathers one reference's image, fate, need and archives, and says what to do", () => {
    const refs = seeded({ afterRestart: 'unpinned', reason: 'k3s strips this pin at start and no archive in the images dir brings it back.' }).map((r) => ({
      ...r,
      need: { verdict: 'losing' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads: [], neededBecause: 'needed by Deployment default/app', because: 'needed by Deployment default/app; loses its pin at the next k3s start' },
    }));
    const e = explainInWords(explainReference({ node: 'n1', ref: ID, images: refs, needs, lost: [], archives: [], mode: 'any' })!);
    expect(e.image!.shown).toEqual({ pin: 'distro', outcome: 'loses-pin', inherited: true });
    expect(e.image!.protection).toMatchObject({ now: true, afterRestart: false, losesPin: true, brief: 'k3s strips its pin; no archive brings it back' });
    expect(e.image!.refs.map((r) => r.name)).toEqual([ID, 'docker.io/library/app:1.0', `docker.io/library/app@sha256:${'d'.repeat(64)}`]);
    expect(e.need).toMatchObject({ verdict: 'losing', atRisk: true });
    expect(e.advice).toEqual([{ text: 'The site needs it: make its pins durable before the next k3s start.', command: 'holdfast pin n1 --needed' }]);
  });

  it('a needed image the node lacks; null for a name it neither has nor needs', () => {
    const missing = { ...needs, missing: [{ ref: 'docker.io/library/report:1.0', workloads: [], source: 'list' as const, because: "on the operator's list; not on this node", heldBy: [] }] };
    const e = explainInWords(explainReference({ node: 'n1', ref: 'docker.io/library/report:1.0', images: [], needs: missing, lost: [], archives: [], mode: 'any' })!);
    expect(e).toMatchObject({ present: false, image: null, need: { verdict: 'missing', atRisk: true } });
    expect(e.advice[0]!.command).toBe('holdfast import n1 ARCHIVE --pin');
    expect(explainReference({ node: 'n1', ref: 'nothing:1', images: [], needs, lost: [], archives: [], mode: 'any' })).toBeNull();
  });
});
