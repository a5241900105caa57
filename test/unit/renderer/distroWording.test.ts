// On an RKE2 node the app, the disk and prune texts, the lost pins and the node warnings name RKE2
// where they mean the node's distro (issue #37); k3s where none is given, as before. Components
// rendered to markup by React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { diskText } from '../../../src/cli/commands/disk';
import { CapabilityBanner } from '../../../src/renderer/components/NodeNotices';
import { StateBadge, storeSummaryText } from '../../../src/renderer/components/DiskPanel';
import { ImportCacheBanner } from '../../../src/renderer/components/ImportCacheBanner';
import { forcedLosses } from '../../../src/renderer/components/RemoveArchiveDialog';
import type { DiskPicture } from '../../../src/shared/diskPicture';
import type { AuditEntry } from '../../../src/shared/domain/audit';
import { forecastGc, neededFlags } from '../../../src/shared/gcForecast';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';
import { summariseStore } from '../../../src/shared/imageStore';
import { activeDurablePins, findLostPins } from '../../../src/shared/lostPins';
import { nodeWarnings, pinNotHonoured } from '../../../src/shared/nodeWarnings';
import { planPrune } from '../../../src/shared/prunePlan';
import { proseText } from '../../../src/shared/remedy';
import { store } from '../../support/diskStore';
import { fleetOverviewText, nextStep } from '../../../src/renderer/components/FleetOverview';
import { imagesPanelText } from '../../../src/renderer/components/ImagesPanel';
import { PinBadge } from '../../../src/renderer/components/PinBadge';
import { FateBadge } from '../../../src/renderer/components/FateBadge';
import { FleetMatrix } from '../../../src/renderer/components/FleetMatrix';
import { StoreProvider } from '../../../src/renderer/context';
import { createAppStore, type AppState } from '../../../src/renderer/store';
import { createStore } from 'zustand/vanilla';
import { fakeApi } from '../../doubles/api';
import { countsOfRefs, groupImages, groupsOfRefs } from '../../../src/renderer/model/images';
import { lostPinLine } from '../../../src/renderer/model/lostPins';
import type { NodeStatus } from '../../../src/shared/domain/connection';
import type { ImageRef } from '../../../src/shared/domain/images';

const text = (el: Parameters<typeof renderToStaticMarkup>[0]): string =>
  renderToStaticMarkup(el)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');

describe('the app names RKE2 on an RKE2 node', () => {
  it('a forced removal, the import cache banner and the old-release banner', () => {
    const check = { node: 'n1', path: 'a.tar', allowed: false, problems: [], images: [{ name: 'app:1', present: true, complete: true, durable: false, missing: [] }] };
    expect(forcedLosses(check, 'RKE2')).toEqual(['app:1 loses its pin at the next RKE2 start; kubelet may then delete it.']);
    expect(forcedLosses(check)).toEqual(['app:1 loses its pin at the next k3s start; kubelet may then delete it.']);
    const banner = text(createElement(ImportCacheBanner, { node: 'n1', cached: 2, health: undefined, who: 'RKE2' }));
    expect(banner).toContain("RKE2's import cache is on (.cache.json).");
    expect(banner).toContain('2 archives are unchanged since the last import, so RKE2 skips them at start');
    expect(banner).not.toMatch(/k3s/);
    const old = text(createElement(CapabilityBanner, { info: { containerdVersion: '1.7.11', distro: 'rke2', distroVersion: 'v1.28.5+rke2r1' } }));
    expect(old).toContain('This node’s RKE2 pins nothing it imports');
  });

  it("the Disk tab's states and summary", () => {
    const { images, index } = store([{ key: 'a', refs: ['app:1'], blobs: [['x', 10]], pin: 'distro', lastChangedAt: '2025-01-01T00:00:00Z' }]);
    expect(storeSummaryText(summariseStore(images, index), images, 'RKE2')).toContain('1 loses its pin at the next RKE2 start');
    const badge = renderToStaticMarkup(createElement(StateBadge, { image: images[0]!, who: 'RKE2' }));
    expect(badge).toContain('RKE2 pin');
    expect(badge).toContain('no reference keeps its pin at the next RKE2 start');
    expect(badge).not.toMatch(/k3s(?!")/); // (the state's own name, k3s, stays in data-state and the class)
  });
});

describe('disk, prune and GC texts name RKE2', () => {
  const { images, index } = store([
    { key: 'a', refs: ['app:1'], blobs: [['x', 10]], pin: 'distro', archive: 'app.tar', lastChangedAt: '2025-01-01T00:00:00Z' },
    { key: 'b', refs: ['tool:1'], blobs: [['y', 10]], archive: 'tools.txt', lastChangedAt: '2025-01-01T00:00:00Z' },
    { key: 'c', refs: ['lib:1'], blobs: [['z', 10]], archive: 'lib.tar', lastChangedAt: '2025-01-01T00:00:00Z' },
  ]);

  it("prune's reasons to keep an image", () => {
    const kept = planPrune('n1', images, index, { keepVersions: 1 }, new Map(), 'RKE2').kept.map((k) => k.text);
    expect(kept).toContain('Pinned by RKE2: app.tar in the images dir brings it. Prune never unpins; remove the archive first if the image is obsolete.');
    expect(kept).toContain('The pre-pull list tools.txt in the images dir names it: RKE2 would try to pull it again at its next start.');
    expect(kept).toContain('The archive lib.tar in the images dir brings it: RKE2 would import it again. Remove the archive first if the image is obsolete.');
  });

  it("the GC forecast's needed flags", () => {
    const flags = neededFlags(images, 1, 'RKE2');
    expect(flags.get('b')!.map((f) => f.text)).toContain('The pre-pull list tools.txt in the images dir names it: RKE2 would try to pull it at its next start, which fails without a registry.');
    expect(flags.get('c')!.map((f) => f.text)).toContain('The archive lib.tar in the images dir brings it: until RKE2 imports it again, no pod can start from it.');
  });

  it('holdfast disk', () => {
    // only the pin RKE2 strips: nothing for GC to take
    const one = store([{ key: 'a', refs: ['app:1'], blobs: [['x', 10]], pin: 'distro', archive: 'app.tar', lastChangedAt: '2025-01-01T00:00:00Z' }]);
    const policy = resolveGcPolicy([]);
    const p: DiskPicture = {
      node: 'n1',
      takenAt: '2026-12-05T00:00:00Z',
      fileSystems: [],
      imagefs: null,
      policy,
      criPinning: 'any',
      images: one.images,
      summary: summariseStore(one.images, one.index),
      forecast: forecastGc({ images: one.images, index: one.index, imagefs: null, policy, who: 'RKE2' }),
      containers: 0,
      notes: [],
    };
    const out = diskText(p, undefined, false, 'RKE2');
    expect(out).toMatch(/1 pinned by RKE2 \(1 loses the pin at the next RKE2 start\)/);
    expect(out).toContain('RKE2 pin, lost at restart');
    expect(out).toContain('(1 only until the next RKE2 start)');
  });
});

describe('lost pins and node warnings name RKE2', () => {
  const CRI = 'io.cri-containerd.pinned';
  const RKE2 = { [CRI]: 'pinned', 'io.cattle.rke2.pinned': 'pinned' };
  const ID = 'sha256:' + '1'.repeat(64);
  const entry: AuditEntry = { time: '2026-03-01T08:00:00.000Z', user: 'u', node: 'n1', action: 'pin', changes: [{ ref: 'app:1', imageId: ID, before: RKE2, after: { [CRI]: 'pinned' } }] };
  const lost = (imagesDir: Parameters<typeof findLostPins>[0]['imagesDir']) =>
    findLostPins({
      node: 'n1',
      pins: activeDurablePins([entry], 'n1'),
      refs: [{ name: 'app:1', imageId: ID, labels: RKE2, pin: 'distro', createdAt: null }],
      imagesDir,
      info: { containerdVersion: '2.0.5', distro: 'rke2' },
    })[0]!;

  it('a pin RKE2 manages again: its causes and remedy', () => {
    const viaArchive = lost([{ path: 'app.tar', kind: 'archive', images: ['app:1'], cachedByK3s: false }]);
    expect(viaArchive.causes[0]).toBe('app.tar in the images dir brings it: RKE2 imported it again (at its last start, or its watcher when the file appeared) and put its pin label back.');
    expect(proseText(viaArchive.remedy.text)).toMatch(/or the next RKE2 start hands the pin back to RKE2\.$/);
    const viaList = lost([{ path: 'l.txt', kind: 'prepull', images: ['app:1'] }]);
    expect(viaList.causes).toEqual(['The pre-pull list l.txt names it: RKE2 pins the images a .txt list names at every start.']);
    expect(lost([]).causes).toEqual(['An archive that brings it was put into the images dir and RKE2 imported it; that file has gone since.']);
    expect(proseText(lost([]).remedy.text)).toBe('Make it durable again before RKE2 restarts.');
  });

  it('a containerd without CRI pinning', () => {
    const info = { containerdVersion: '1.6.20', distro: 'rke2' as const, distroVersion: null };
    expect(nodeWarnings(info)[0]!.message).toContain('(needs 1.7.3+; RKE2 bundles 1.7/2.x)');
    expect(pinNotHonoured('n1', info)).toContain('(needs 1.7.3+; RKE2 bundles 1.7/2.x)');
  });
});

describe('the Images tab and the fleet overview name the node’s distro', () => {
  const ID = 'sha256:' + '2'.repeat(64);
  const DIGEST = 'sha256:' + '3'.repeat(64);
  const PINNED = { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.rke2.pinned': 'pinned' };
  const ref = (name: string): ImageRef => ({
    name,
    digest: DIGEST,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: ID,
    size: 10,
    platforms: ['linux/amd64'],
    createdAt: null,
    labels: PINNED,
    pin: 'distro',
    afterRestart: 'unpinned',
    reason: 'x',
    archive: null,
  });

  it("the Images tab's words", () => {
    const t = imagesPanelText('RKE2');
    expect(t.filters.find((f) => f.value === 'distro')!.label).toBe('RKE2');
    expect(t.atRisk(1)).toBe('1 image will lose its pin when RKE2 restarts');
    expect(t.atRisk(3)).toBe('3 images will lose their pin when RKE2 restarts');
    expect(t.makeAllDurable).toBe('Make all RKE2 pins durable');
    expect(t.makeAllDurableSubject).toBe('every image pinned by RKE2');
    expect(t.fateColumn).toBe('At next RKE2 start');
    expect(t.refFateColumn).toBe('After next RKE2 start');
    expect(t.peersTitle).toBe("Whether other nodes can pull the image from this one through RKE2's embedded registry");
    const k3s = imagesPanelText('k3s');
    expect(k3s.filters.map((f) => f.label)).toEqual(['All', 'Durable', 'k3s', 'Unpinned', 'At risk']);
    expect(k3s.atRisk(3)).toBe('3 images will lose their pin when k3s restarts');
    expect(k3s.makeAllDurable).toBe('Make all k3s pins durable');
    expect(k3s.fateColumn).toBe('At next k3s start');
    expect(k3s.refFateColumn).toBe('After next k3s start');
  });

  it("the pin badge: the distro's pin by its name", () => {
    const rke2 = renderToStaticMarkup(createElement(PinBadge, { pin: 'distro', who: 'RKE2' }));
    expect(text(createElement(PinBadge, { pin: 'distro', who: 'RKE2' })).trim()).toBe('RKE2 pin');
    expect(rke2).toContain('title="Pinned by RKE2: the pin is removed at the next RKE2 start unless the archive is re-imported."');
    expect(rke2).toContain('data-pin="distro"');
    expect(renderToStaticMarkup(createElement(PinBadge, { pin: 'durable', who: 'RKE2' }))).toContain('RKE2 never strips it');
    expect(text(createElement(PinBadge, { pin: 'distro', who: 'k3s' })).trim()).toBe('k3s pin');
  });

  it("the fleet matrix's empty state: the connected nodes' distro", () => {
    const empty = (distros: ('k3s' | 'rke2')[]) => {
      const nodes = distros.map((_, i) => ({ name: `n${i}`, host: `n${i}.lan`, port: 22, user: 'root', socket: '/run/k3s/containerd/containerd.sock', imagesDir: '/x', namespace: 'k8s.io' }));
      const statuses = Object.fromEntries(
        distros.map((distro, i): [string, NodeStatus] => [`n${i}`, { name: `n${i}`, state: 'connected', info: { containerdVersion: '2.0.5', containerdRevision: 'x', distro, distroVersion: null } }]),
      );
      // A server render reads a zustand store's initial state: a store that starts with these nodes.
      const state: AppState = { ...createAppStore(fakeApi({})).getState(), nodes, statuses };
      return text(createElement(StoreProvider, { store: createStore<AppState>()(() => state), children: createElement(FleetMatrix) }));
    };
    expect(empty(['rke2', 'rke2'])).toContain('which pins the next RKE2 start removes');
    expect(empty(['rke2', 'k3s'])).toContain('which pins the next k3s/RKE2 start removes');
    expect(empty(['k3s'])).toContain('which pins the next k3s start removes');
  });

  it("the fate badge: whose next start, when no reason is given", () => {
    for (const fate of ['kept', 'lose', 'gain', 'none', 'drops'] as const) {
      const rke2 = renderToStaticMarkup(createElement(FateBadge, { fate, who: 'RKE2' }));
      expect(rke2).toContain('next RKE2 start');
      expect(rke2).not.toMatch(/k3s/);
    }
    expect(renderToStaticMarkup(createElement(FateBadge, { fate: 'lose', who: 'k3s' }))).toContain('title="Pinned now, but the next k3s start removes the pin');
  });

  it("the image's verdict, grouped for the table (and memoised per distro)", () => {
    const refs = [ref('app:1'), ref(`app@${DIGEST}`)];
    const [g] = groupImages(refs, 'any', 'RKE2');
    expect(g!.reason).toMatch(/^No reference keeps its pin at the next RKE2 start/);
    expect(groupImages(refs, 'any')[0]!.reason).toMatch(/^No reference keeps its pin at the next k3s start/);
    expect(groupsOfRefs(refs, 'any', 'RKE2')[0]!.reason).toMatch(/next RKE2 start/);
    expect(groupsOfRefs(refs, 'any')[0]!.reason).toMatch(/next k3s start/);
    expect(groupsOfRefs(refs, 'any', 'RKE2')).toBe(groupsOfRefs(refs, 'any', 'RKE2'));
    expect(countsOfRefs(refs, 'any', 'RKE2')).toMatchObject({ distro: 1, atRisk: 1 });
  });

  it("the fleet overview's words", () => {
    const t = fleetOverviewText('RKE2');
    expect(t.atRiskTitle(1)).toBe('1 image loses its pin at the next RKE2 start');
    expect(t.fleetAtRisk(2, 1)).toBe('2 images on 1 node will lose their pin at the next RKE2 start');
    expect(t.fleetAtRiskAdvice).toBe('Open a highlighted node and make its pins durable before anyone restarts RKE2.');
    expect(t.loading(2)).toBe('Loading the images of 2 connected nodes: whether a pin is lost at the next RKE2 start is not known until they are in.');
    expect(t.allClear).toBe('No pin on a connected node is lost at the next RKE2 start.');
    expect(t.pinColumn).toBe('RKE2 pin');
    expect(t.atRiskColumnTitle).toBe('Images whose pin the next RKE2 start removes (as kubelet sees them)');
    expect(t.neededColumnTitle).toBe('Images the site needs that are missing, not pinned, or lose their pin at the next RKE2 start');
    expect(t.marker['distro-pins-nothing']).toBe('RKE2 pins nothing');
    expect(fleetOverviewText('k3s/RKE2').fleetAtRisk(1, 1)).toBe('1 image on 1 node will lose its pin at the next k3s/RKE2 start');
    const k3s = fleetOverviewText('k3s');
    expect(k3s.fleetAtRiskAdvice).toBe('Open a highlighted node and make its pins durable before anyone restarts k3s.');
    expect(k3s.pinColumn).toBe('k3s pin');
    expect(k3s.marker['distro-pins-nothing']).toBe('k3s pins nothing');
  });

  it('what to do when containerd does not answer', () => {
    const error = { code: 'CONTAINERD_UNAVAILABLE', message: 'x' } as const;
    expect(nextStep(error, 'rke2')).toBe('Check that RKE2 is running on it, then Connect all.');
    expect(nextStep(error, 'k3s')).toBe('Check that k3s is running on it, then Connect all.');
    expect(nextStep(error)).toBe('Check that k3s or RKE2 is running on it, then Connect all.');
  });

  it('a live alert of a pin the distro manages again', () => {
    const l = { node: 'n1', ref: 'app:1', kind: 'k3s-managed-again' as const, pinnedAt: '2026-03-01T08:00:00.000Z', pinnedBy: 'u' };
    expect(lostPinLine(l, 'RKE2')).toMatch(/^n1: app:1 — RKE2-managed again \(made durable by u, /);
    expect(lostPinLine(l)).toMatch(/^n1: app:1 — k3s-managed again \(/);
  });
});
