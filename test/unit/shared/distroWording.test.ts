// On an RKE2 node the sentences name RKE2 where they mean the node's distro (issue #37): who pins,
// who strips, whose next start. Each text takes the distro's display name (shared/distro
// distroDisplayName) and says k3s when it is not given, as before.
import { describe, expect, it } from 'vitest';
import { explainText } from '../../../src/cli/commands/explain';
import { Screen } from '../../../src/cli/screen';
import { nodeRow } from '../../../src/cli/transferRows';
import { fleetHtml } from '../../../src/core/usecases/fleet/html';
import { fleetDistroName, nodeDistroName, nodeRisk, summarizeFleet } from '../../../src/core/usecases/fleet/summary';
import { chooseRemoteName } from '../../../src/core/usecases/import/remoteName';
import { archiveBrief } from '../../../src/shared/archiveRemedy';
import { distroDisplayName, distrosDisplayName } from '../../../src/shared/distro';
import type { ArchiveInfo } from '../../../src/shared/domain/archives';
import type { ImageRef } from '../../../src/shared/domain/images';
import { explainReference } from '../../../src/shared/explain';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { listTakeoverReason, listTrapHeading } from '../../../src/shared/listTrap';
import { judgeNeeds, type NodeNeeds } from '../../../src/shared/needs';
import { applyImageProtection, durableProtection, fateBrief, imageProtection, protectionBrief } from '../../../src/shared/protection';
import { lostPinsText } from '../../../src/cli/lostPins';
import { pinStateText } from '../../../src/cli/pinText';
import { imageRef } from '../../support/imageRef';
import type { LostPin } from '../../../src/shared/domain/lostPins';
import { peerServing, type EmbeddedRegistryConfig } from '../../../src/shared/embeddedRegistry';
import { importCacheBrief, importCacheReasons, type ImportCacheHealth } from '../../../src/shared/importCacheHealth';
import { remedyCommand } from '../../../src/cli/remedyText';
import { LOST_PIN_KIND_TEXT, lostPinKindText } from '../../../src/shared/lostPins';
import { parseMirrorsBlock } from '../../../src/shared/registryMirrors';

const RKE2 = distroDisplayName('rke2');
const ID = 'sha256:' + 'a'.repeat(64);
const DIGEST = 'sha256:' + 'd'.repeat(64);
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const PINNED = { ...CRI, 'io.cattle.rke2.pinned': 'pinned' };

/** One reference of the one image these tests share (test support's imageRef, this image's ids). */
const ref = (name: string, over: Partial<ImageRef> = {}): ImageRef =>
  imageRef(name, { digest: DIGEST, imageId: ID, mediaType: 'application/vnd.oci.image.index.v1+json', size: 2048, ...over });
/** Pinned by the distro, and nothing in the images dir pins it again: the next start strips it. */
const losing = (name: string, over: Partial<ImageRef> = {}) => ref(name, { labels: PINNED, pin: 'distro', reason: 'RKE2 strips this pin at its next start.', ...over });
const durable = (name: string) => ref(name, { labels: CRI, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin.' });
/** The image as the distro leaves it after an import whose archive is gone: tag and digest reference pinned, CRI's record unlabelled. */
const seed = () => [losing('docker.io/library/app:1.0'), losing(`docker.io/library/app@${DIGEST}`), ref(ID)];

/** Every word of `text` that names a distro's start, pins or labels: on RKE2, never k3s. */
const noK3s = (text: string) => expect(text).not.toMatch(/\bk3s\b(?! PR| #)/);

describe('the protection model names the node’s distro', () => {
  it("CRI's own record, the image's verdict and each reference's clause say RKE2", () => {
    const [, , record] = applyImageProtection(seed(), 'any', RKE2);
    expect(record!.reason).toBe(`CRI's own record of the image of docker.io/library/app:1.0 and docker.io/library/app@${DIGEST}, which loses its pin at the next RKE2 start.`);
    const p = imageProtection(seed(), 'any', RKE2).get(ID)!;
    expect(p.reason).toMatch(/^No reference keeps its pin at the next RKE2 start, so kubelet may then delete the image\./);
    expect(protectionBrief(p, seed(), 'any', RKE2)).toBe('RKE2 strips its pin; no archive brings it back');
    expect(fateBrief(losing('a:1', { archive: 'a.tar' }), RKE2)).toBe('RKE2 strips its pin; a.tar will not pin it again');
    expect(fateBrief(ref('a:1', { labels: CRI, pin: 'durable' }), RKE2)).toBe('its pin does not last the next RKE2 start');
    expect(fateBrief(ref('a:1', { labels: CRI, pin: 'durable', afterRestart: 'pinned', listTrap: { list: 'a.txt', listed: 'a:2' } }), RKE2)).toBe(
      'RKE2 takes it over: a.txt names a:2 (same image)',
    );
    // without a name: k3s, as every caller said before
    expect(fateBrief(losing('a:1'))).toBe('k3s strips its pin; no archive brings it back');
  });

  it('the kept image and the 1.7.3–1.7.9 rule say whose start', () => {
    const kept = [durable('app:1'), losing(`app@${DIGEST}`)];
    expect(imageProtection(kept, 'any', RKE2).get(ID)!.reason).toMatch(/^kubelet keeps the image after the next RKE2 start through app:1\./);
    expect(imageProtection([durable('app:1'), durable(ID)], 'first-loaded', RKE2).get(ID)!.reason).toMatch(/keeps io\.cri-containerd\.pinned at the next RKE2 start/);
    expect(imageProtection(kept, 'first-loaded', RKE2).get(ID)!.reason).toMatch(/is not pinned after the next RKE2 start: kubelet may treat/);
    expect(durableProtection(seed(), 'any', RKE2).reason).toMatch(/pinned by RKE2 only, which strips the pin at its next start/);
  });
});

describe('the site-needs verdicts name the node’s distro', () => {
  const needs = (ref: string): NodeNeeds => ({ sources: [{ kind: 'cluster', label: 'kubectl on n1' }], images: [{ ref, workloads: [], source: 'cluster' }], notes: [] });

  it('a needed image losing its pin, and the provenance of one nothing names', () => {
    const refs = seed().map((r) => ({ ...r, archive: null }));
    const j = judgeNeeds(refs, imageProtection(refs, 'any', RKE2), needs('docker.io/library/app:1.0'), { who: RKE2 });
    expect(j.byImage.get(ID)!.because).toMatch(/; loses its pin at the next RKE2 start$/);
    const blind = judgeNeeds(refs, imageProtection(refs, 'any', RKE2), null, { who: RKE2 });
    expect(blind.byImage.get(ID)!.neededBecause).toBe('RKE2 imported it from an air-gap archive');
    const digestOnly = [ref(`docker.io/library/app@${DIGEST}`)];
    expect(judgeNeeds(digestOnly, imageProtection(digestOnly, 'any'), null, { who: RKE2 }).byImage.get(ID)!.neededBecause).toBe(
      `RKE2's digest reference docker.io/library/app@sha256:${'d'.repeat(12)}… shows it came from an air-gap archive`,
    );
    const sourced = [ref('docker.io/library/app:1.0')];
    expect(judgeNeeds(sourced, imageProtection(sourced, 'any'), null, { who: RKE2, distributionSourced: new Set([DIGEST]) }).byImage.get(ID)!.neededBecause).toBe(
      "its content carries RKE2's containerd.io/distribution.source labels from an air-gap import",
    );
  });
});

describe('holdfast explain names the node’s distro', () => {
  const report = { basis: 'known' as const, sources: [{ kind: 'cluster' as const, label: 'kubectl on n1' }], notes: [], missing: [], atRisk: 0 };
  const archive = (over: Partial<ArchiveInfo>): ArchiveInfo => ({
    path: 'app.tar',
    kind: 'archive',
    compression: 'none',
    size: 1,
    mtime: '2026-12-05T00:00:00.000Z',
    images: ['docker.io/library/app:1.0'],
    imported: true,
    safeToRemove: false,
    reason: 'x',
    cachedByK3s: false,
    ...over,
  });

  it('its advice, its clauses and the text say RKE2, never k3s', () => {
    const refs = seed().map((r) => ({
      ...r,
      need: { verdict: 'losing' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads: [], neededBecause: 'needed by Deployment default/app', because: 'x' },
    }));
    const e = explainReference({ node: 'n1', ref: 'docker.io/library/app:1.0', images: refs, needs: report, lost: [], archives: [], mode: 'any', who: RKE2 })!;
    expect(e.advice[0]!.text).toBe('The site needs it: make its pins durable before the next RKE2 start.');
    expect(e.image!.refs[1]!.brief).toBe('RKE2 strips its pin; no archive brings it back');
    const text = explainText(e, Screen.plain, RKE2);
    // The pin state prints as the distro's name ("RKE2"); --json keeps its data name, k3s.
    expect(text).toContain(`docker.io/library/app@${DIGEST}: RKE2, unpinned after the next RKE2 start — RKE2 strips its pin; no archive brings it back`);
    expect(text).toMatch(/Pin now +RKE2\b/);
    expect(text).toContain(`sha256:${'a'.repeat(64)}: RKE2 — CRI's own record`);
    noK3s(text);
    expect(JSON.parse(JSON.stringify(e)).image.shown.pin).toBe('distro');
    // a k3s node's text as before
    const k3s = explainText(explainReference({ node: 'n1', ref: 'docker.io/library/app:1.0', images: refs, needs: report, lost: [], archives: [], mode: 'any' })!, Screen.plain);
    expect(k3s).toContain(`docker.io/library/app@${DIGEST}: k3s, unpinned after the next k3s start — k3s strips its pin; no archive brings it back`);
    expect(k3s).toMatch(/Pin now +k3s\b/);

    const plain = seed();
    const unwanted = explainReference({ node: 'n1', ref: 'docker.io/library/app:1.0', images: plain, needs: report, lost: [], archives: [], mode: 'any', who: RKE2 })!;
    expect(unwanted.advice[0]!.text).toBe('It loses its pin at the next RKE2 start: if it is still wanted, make it durable.');
    const none = explainReference({ node: 'n1', ref: 'docker.io/library/app:1.0', images: plain, needs: report, lost: [], archives: [], mode: 'none', who: RKE2 })!;
    expect(none.advice[0]!.text).toMatch(/so that the next RKE2 start brings it back\.$/);
    const kept = plain.map((r) => ({ ...r, afterRestart: 'pinned' as const, archive: 'app.tar' }));
    const rePinned = explainReference({
      node: 'n1',
      ref: 'docker.io/library/app:1.0',
      images: kept,
      needs: report,
      lost: [],
      archives: [archive({ remedy: { action: 'pin', node: 'n1', archive: 'app.tar' } })],
      mode: 'any',
      who: RKE2,
    })!;
    expect(rePinned.advice.map((a) => a.text)).toContain('app.tar pins it again at every RKE2 start; to remove that archive one day, make its pins durable first.');
  });

  it('a needed image an archive holds but the distro has not imported', () => {
    const missing = { ...report, missing: [{ ref: 'docker.io/library/report:1.0', workloads: [], source: 'list' as const, because: 'x', heldBy: [] }] };
    const e = explainReference({
      node: 'n1',
      ref: 'docker.io/library/report:1.0',
      images: [],
      needs: missing,
      lost: [],
      archives: [archive({ images: ['docker.io/library/report:1.0'], imported: false })],
      mode: 'any',
      who: RKE2,
    })!;
    expect(e.advice[0]!.text).toBe('app.tar in the images dir holds it, but RKE2 has not imported it: restart RKE2, or import it with Holdfast.');
    expect(e.archives[0]!.brief).toBe('RKE2 has not imported all it brings: it holds the only copy');
  });
});

describe('archives, .txt lists and the fleet name the node’s distro', () => {
  it("an archive's short clause", () => {
    expect(archiveBrief({ kind: 'ignored', imported: false, safeToRemove: false }, RKE2)).toBe('RKE2 ignores this file: removed only with --force');
    expect(archiveBrief({ kind: 'ignored', imported: false, safeToRemove: false })).toBe('k3s ignores this file: removed only with --force');
  });

  it('the .txt list take-over heading and sentence', () => {
    expect(listTrapHeading(1, RKE2)).toBe('1 durable pin RKE2 takes over at its next start (a .txt list names another tag of its image):');
    const long = listTakeoverReason('busybox.txt', [{ ref: 'r/busybox:1', listed: 'busybox:latest' }], RKE2);
    expect(long).toBe(
      'RKE2 pins every tag of an image busybox.txt names at each start, so r/busybox:1 (same image as busybox:latest) becomes RKE2-managed, and once busybox.txt is gone the start after that strips its pin. Remove busybox.txt before the next RKE2 start to keep that pin durable.',
    );
  });

  it("a fleet node's risk, and the fleet's totals when the nodes' distros differ", () => {
    const node = (distro: 'k3s' | 'rke2' | 'unknown'): FleetNodeResult => ({
      node: 'n1',
      reachable: true,
      error: null,
      versions: { containerdVersion: '2.0.5', containerdRevision: 'x', distro, distroVersion: null },
      images: seed(),
      archives: [],
      disk: null,
    });
    expect(nodeRisk(node('rke2')).reasons).toContain('1 image loses its pin at the next RKE2 start (as kubelet sees it): docker.io/library/app:1.0');
    expect(nodeDistroName(node('unknown'))).toBe('k3s');
    const rke2 = fleetHtml({ generatedAt: 'now', summary: summarizeFleet([node('rke2')], []), nodes: [node('rke2')], drift: [] });
    expect(rke2).toContain('images lose their pin at the next RKE2 start');
    expect(rke2).toContain('<th>After next RKE2 start</th>');
    expect(rke2).toContain('0 durable, 3 RKE2-pinned, 0 unpinned'); // (CRI's record counts with its image: shared/protection pinCounts)
    expect(rke2).not.toMatch(/next k3s start|k3s-pinned/);
    const mixed = fleetHtml({ generatedAt: 'now', summary: summarizeFleet([node('rke2'), { ...node('k3s'), node: 'n2' }], []), nodes: [node('rke2'), { ...node('k3s'), node: 'n2' }], drift: [] });
    expect(mixed).toContain('images lose their pin at the next k3s/RKE2 start');
    expect(distrosDisplayName(['rke2', 'rke2'])).toBe('RKE2');
    expect(distrosDisplayName(['rke2', 'k3s'])).toBe('k3s/RKE2');
    expect(distrosDisplayName(['unknown', 'k3s'])).toBe('k3s');
    // An undetected node (unreachable, no --version) says nothing of the others, in every transport.
    expect(distrosDisplayName(['rke2', 'unknown'])).toBe('RKE2');
    const withUnreached = [node('rke2'), { ...node('unknown'), node: 'n3' }];
    expect(fleetDistroName(withUnreached)).toBe('RKE2');
    expect(fleetHtml({ generatedAt: 'now', summary: summarizeFleet(withUnreached, []), nodes: withUnreached, drift: [] })).toContain('images lose their pin at the next RKE2 start');
    expect(distrosDisplayName([])).toBe('k3s');
  });
});

describe('an import through the images dir names the node’s distro', () => {
  const archive = { path: '/tmp/app.tar', size: 10, sha256: 'f'.repeat(64) };
  const node = { imagesDir: '/var/lib/rancher/rke2/agent/images', importCache: { enabled: false, readable: true, entries: new Map() }, distroVersion: null, distro: 'rke2' as const };

  it('the name it chooses, and why', () => {
    const taken = chooseRemoteName(archive, { ...node, files: [{ path: 'app.tar', size: 11, mtime: 0 }] }, 1);
    expect(taken.renamed).toBe(`app.tar on the node is another file, and RKE2 keeps its record of that name (a replacement might never be imported): uploaded as app.${'f'.repeat(12)}.tar`);
    const cached = chooseRemoteName(
      archive,
      { ...node, files: [], importCache: { enabled: true, readable: true, entries: new Map([['/var/lib/rancher/rke2/agent/images/app.tar', null]]) } },
      1,
    );
    expect(cached.renamed).toBe(`RKE2's .cache.json still records an earlier app.tar, which the next RKE2 start would compare this file with: uploaded as app.${'f'.repeat(12)}.tar`);
  });

  it('the progress line while it waits', () => {
    expect(nodeRow('n1', { phase: 'importing', message: 'RKE2 imported 1 of 3 images' }).text).toBe('waiting for RKE2 to import (1 of 3 images so far)…');
    expect(nodeRow('n1', { phase: 'importing', message: 'waiting for RKE2 to import the archive' }).text).toBe('waiting for RKE2 to import the archive…');
    expect(nodeRow('n1', { phase: 'importing' }).text).toBe('waiting for k3s to import the archive…');
  });
});

describe("the import cache's health names the node's distro", () => {
  const health = (over: Partial<ImportCacheHealth>): ImportCacheHealth => ({
    state: 'on',
    repins: 'yes',
    rule: 'with-fix',
    entries: 1,
    skippedUnpinned: [],
    skippedRepinned: [],
    reimported: [],
    savesNothing: false,
    stale: [],
    ...over,
  });

  it('its short line', () => {
    expect(importCacheBrief(health({ state: 'absent' }), RKE2)).toBe('no .cache.json: every RKE2 start re-imports every archive (slow starts on a large images dir)');
    expect(importCacheBrief(health({ state: 'unreadable' }), RKE2)).toBe('.cache.json cannot be read: Holdfast assumes RKE2 skips every archive without re-pinning');
    expect(importCacheBrief(health({ state: 'absent' }))).toBe('no .cache.json: every k3s start re-imports every archive (slow starts on a large images dir)');
    expect(importCacheBrief(health({ state: 'unreadable' }))).toBe('.cache.json cannot be read: Holdfast assumes k3s skips every archive without re-pinning');
  });

  it('every finding in full', () => {
    const [absent] = importCacheReasons(health({ state: 'absent' }), remedyCommand, 'n1', RKE2);
    expect(absent).toBe(
      'The images dir has no .cache.json, so every RKE2 start re-imports every archive in it, which delays kubelet by minutes on a large images dir (k3s #12243). RKE2 keeps the cache only if the file exists: an empty .cache.json turns it on.',
    );
    const [risky] = importCacheReasons(health({ state: 'absent', repins: 'no' }), remedyCommand, 'n1', RKE2);
    expect(risky).toContain('the cache makes RKE2 skip unchanged archives at start');
    expect(importCacheReasons(health({ state: 'ignored' }), remedyCommand, 'n1', RKE2)).toEqual([
      'This RKE2 release predates the import cache (k3s PR #12237): it re-imports every archive at every start, whatever .cache.json says.',
    ]);
    expect(importCacheReasons(health({ state: 'unreadable' }), remedyCommand, 'n1', RKE2)[0]).toMatch(/^\.cache\.json is not a JSON object Holdfast can read; RKE2 starts over with an empty cache,/);
    const on = importCacheReasons(
      health({ rule: 'without-fix', skippedUnpinned: ['a.tar'], reimported: [{ path: 'c.tar', why: 'sub-second' }], savesNothing: true, stale: [{ path: 'b.tar', why: 'gone' }] }), remedyCommand,
      'n1',
      RKE2,
    );
    expect(on[0]).toContain('so RKE2 skips it at start');
    expect(on[0]).toContain('back in while RKE2 runs (its watcher imports a file renamed into place)');
    expect(on[1]).toContain('The cache saves nothing: RKE2 re-imports every file at each start');
    expect(on[2]).toBe('The entry for b.tar: b.tar is no longer in the images dir (RKE2 drops the entry at its next start).');
    for (const t of [absent!, risky!, ...on]) noK3s(t);
    // k3s where no name is given, as before
    const k3s = importCacheReasons(health({ rule: 'without-fix', skippedUnpinned: ['a.tar'], stale: [{ path: 'b.tar', why: 'gone' }] }), remedyCommand, 'n1');
    expect(k3s[0]).toContain('so k3s skips it at start');
    expect(k3s[1]).toBe('The entry for b.tar: b.tar is no longer in the images dir (k3s drops the entry at its next start).');
    expect(importCacheReasons(health({ state: 'absent' }), remedyCommand)[0]).toMatch(/every k3s start re-imports .* k3s keeps the cache only if the file exists/);
  });
});

describe("the embedded registry's reasons name the node's distro", () => {
  const D = 'sha256:' + 'e'.repeat(64);
  const TAG = 'docker.io/library/nginx:1.27';
  const cfg = (distro: string): EmbeddedRegistryConfig => ({ enabled: 'on', from: `/etc/rancher/${distro}/config.yaml`, mirrors: ['docker.io'], notes: [] });

  it('who adds the digest reference and sets the distribution.source label at import', () => {
    const noDigest = peerServing([{ name: TAG, digest: D }], cfg('rke2'), new Map(), 'rke2', RKE2).get(TAG)!;
    expect(noDigest.reason).toContain('Import its archive again (RKE2 adds the reference at import), or recreate it');
    const noLabel = peerServing([{ name: TAG, digest: D }, { name: `docker.io/library/nginx@${D}`, digest: D }], cfg('rke2'), new Map([[D, {}]]), 'rke2', RKE2).get(TAG)!;
    expect(noLabel.reason).toMatch(/Import its archive again \(RKE2 sets the label at import\)\.$/);
    expect(peerServing([{ name: TAG, digest: D }], cfg('k3s'), new Map()).get(TAG)!.reason).toContain('(k3s adds the reference at import)');
    expect(peerServing([{ name: TAG, digest: D }, { name: `docker.io/library/nginx@${D}`, digest: D }], cfg('k3s'), new Map([[D, {}]])).get(TAG)!.reason).toContain('(k3s sets the label at import)');
  });
});

describe("registries.yaml's notes name the node's distro", () => {
  const lines = (s: string) => s.replace(/^\n/, '').split('\n');
  const text = `
mirrors:
  docker.io:
    endpoint: https://m.example.com
    rewrite: x
    @@dropped
  quay.io:
    endpoint:
      - https://q
`;

  it('a key it ignores, a file it refuses', () => {
    expect(parseMirrorsBlock(lines(text), RKE2).notes).toEqual([
      'a key other than endpoint/rewrite: ignored, as RKE2 does; its value stayed on the node',
      'mirror docker.io: endpoint is not a list (RKE2 refuses the file)',
      'mirror docker.io: rewrite is not a mapping (RKE2 refuses the file)',
    ]);
    expect(parseMirrorsBlock(lines('mirrors:\n  a.io:\n    endpoint: []\n  a.io:\n    endpoint: []'), RKE2).notes).toEqual(['line 4: "a.io" is given twice (RKE2 refuses the file)']);
    expect(parseMirrorsBlock(lines(text)).notes).toEqual([
      'a key other than endpoint/rewrite: ignored, as k3s does; its value stayed on the node',
      'mirror docker.io: endpoint is not a list (k3s refuses the file)',
      'mirror docker.io: rewrite is not a mapping (k3s refuses the file)',
    ]);
  });
});

describe("the distro's pin and a pin it manages again, in the CLI's text", () => {
  it("the PIN column's value: the distro's name; the others as they are", () => {
    expect(pinStateText('distro', RKE2)).toBe('RKE2');
    expect(pinStateText('distro')).toBe('k3s');
    expect(pinStateText('durable', RKE2)).toBe('durable');
    expect(pinStateText('none', RKE2)).toBe('none');
  });

  it("a lost pin's kind", () => {
    expect(lostPinKindText('k3s-managed-again', RKE2)).toBe('RKE2-managed again');
    expect(lostPinKindText('k3s-managed-again')).toBe('k3s-managed again');
    expect(lostPinKindText('label-removed', RKE2)).toBe(LOST_PIN_KIND_TEXT['label-removed']);
    const lost: LostPin = {
      node: 'n1',
      kind: 'k3s-managed-again',
      ref: 'app:1',
      imageId: ID,
      pinnedAt: '2026-03-01T08:00:00.000Z',
      pinnedBy: 'u',
      summary: 's',
      causes: ['c'],
      remedy: { kind: 'repin', text: 'r', command: 'holdfast pin n1 app:1' },
      stillPinnedVia: null,
    };
    expect(lostPinsText([lost], '  ', Screen.plain, true, RKE2)).toContain('app:1 — RKE2-managed again (made durable by u at 2026-03-01T08:00:00.000Z)');
    expect(lostPinsText([lost])).toContain('app:1 — k3s-managed again (');
  });
});
