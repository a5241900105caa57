// Every view of an RKE2 node's images dir says the removal's verdict (shared/removalVerdict,
// #49 item 10): the last top-level archive is "yes, but" with its warning, never a plain "yes" or
// "safe… loses nothing" beside the warning — in the table cell, the JSON, `explain`'s brief and the
// fleet's HTML report. The listing carries what the removal check warns of (removalWarnings).
import { describe, expect, it } from 'vitest';
import { computeDrift, fleetHtml, summarizeFleet, type FleetNodeResult } from '../../../src/core/usecases/fleet';
import { archiveBrief } from '../../../src/shared/archiveRemedy';
import { archivesReport } from '../../../src/shared/archivesReport';
import type { ArchiveInfo } from '../../../src/shared/domain/archives';
import { archiveVerdict, REMOVAL_TONE_TEXT, removalVerdict, removalWarnings } from '../../../src/shared/removalVerdict';
import { RKE2_LISTS_REMOVAL_BRIEF, rke2ListsRemovalWarning } from '../../../src/shared/rke2Lists';

const WARNING = rke2ListsRemovalWarning('edge1', 'runtime.tar');
const file = (path: string, over: Partial<ArchiveInfo> = {}): ArchiveInfo => ({
  path,
  kind: 'archive',
  compression: 'none',
  size: 1,
  mtime: '2026-12-07T00:00:00.000Z',
  images: ['docker.io/rancher/rke2-runtime:v1.31.6-rke2r1'],
  imported: true,
  safeToRemove: true,
  reason: 'Every image it brings is complete and durably protected now.',
  cachedByK3s: false,
  ...over,
});
const warned = file('runtime.tar', { removalWarnings: [{ brief: RKE2_LISTS_REMOVAL_BRIEF, reason: WARNING }] });

describe('removalWarnings: what a removal sets off, for the check and the listing alike', () => {
  it('the last top-level archive on RKE2: the lists warning, short and in full', () => {
    expect(removalWarnings('edge1', 'rke2', ['runtime.tar', 'site/apps.tar', 'x-image.txt'], 'runtime.tar')).toEqual([{ brief: RKE2_LISTS_REMOVAL_BRIEF, reason: WARNING }]);
  });
  it('none with another top-level archive left, for a subfolder file, or on k3s', () => {
    expect(removalWarnings('edge1', 'rke2', ['runtime.tar', 'apps.tar'], 'runtime.tar')).toEqual([]);
    expect(removalWarnings('edge1', 'rke2', ['runtime.tar', 'site/apps.tar'], 'site/apps.tar')).toEqual([]);
    expect(removalWarnings('edge1', 'k3s', ['runtime.tar'], 'runtime.tar')).toEqual([]);
    expect(removalWarnings('edge1', 'unknown', ['runtime.tar'], 'runtime.tar')).toEqual([]);
  });
});

describe('the verdict on a listed file', () => {
  it('a table cell per tone', () => {
    expect(archiveVerdict(warned)).toMatchObject({ tone: 'caution', cell: 'yes, but' });
    expect(archiveVerdict(file('a.tar'))).toMatchObject({ tone: 'safe', cell: 'yes' });
    expect(archiveVerdict(file('a.tar', { safeToRemove: false, removalWarnings: warned.removalWarnings! }))).toMatchObject({ tone: 'refused', cell: 'no' });
  });
  it('the headings say what the tone words say', () => {
    for (const tone of ['safe', 'caution', 'refused'] as const) {
      const v = removalVerdict({ allowed: tone !== 'refused', warnings: tone === 'caution' ? [WARNING] : [] });
      expect(v.tone).toBe(tone);
      expect(v.heading.toLowerCase()).toBe(REMOVAL_TONE_TEXT[tone]);
    }
  });
  it("its brief (the terminal's line, explain's): the warning's clause, never \"loses nothing\"", () => {
    expect(archiveBrief(warned, 'RKE2')).toBe(`removable, but ${RKE2_LISTS_REMOVAL_BRIEF}`);
    expect(archiveBrief(file('a.tar'))).toBe('safe to remove: removing it loses nothing');
  });
});

describe('archives --json and the fleet JSON', () => {
  it('each file gains its removal tone, every other field kept', () => {
    const r = archivesReport('edge1', [warned, file('a.tar'), file('b.tar', { safeToRemove: false })]);
    expect(r.archives.map((a) => a.removalTone)).toEqual(['caution', 'safe', 'refused']);
    expect(r.archives[0]).toEqual({ ...warned, removalTone: 'caution' });
  });
});

describe("the fleet's HTML report", () => {
  it('says "yes, but" in the warning colour, and the warning as its why', () => {
    const caution = { ...warned, reason: `Every image it brings is complete and durably protected from kubelet's garbage collector now. ${WARNING}` };
    const { importCache, archives } = archivesReport('edge1', [caution, file('apps.tar', { path: 'site/apps.tar' })]);
    const node: FleetNodeResult = {
      node: 'edge1',
      reachable: true,
      error: null,
      versions: { containerdVersion: '2.1.9', containerdRevision: 'abc', distro: 'rke2', distroVersion: 'v1.33.7+rke2r1' },
      images: [],
      importCache,
      archives,
      disk: null,
    };
    const drift = computeDrift([node]);
    const html = fleetHtml({ generatedAt: '2026-12-07T16:00:00Z', nodes: [node], drift, summary: summarizeFleet([node], drift) });
    expect(html).toContain('<span class="tag warn" data-tone="caution">yes, but</span>');
    expect(html).toContain('<span class="tag ok" data-tone="safe">yes</span>');
    const row = html.slice(html.indexOf('runtime.tar'), html.indexOf('</tr>', html.indexOf('runtime.tar')));
    expect(row).not.toContain('loses nothing');
    expect(row.replace(/<[^>]+>/g, '').replace(/&#60;/g, '<').replace(/&#62;/g, '>')).toContain(WARNING);
  });
});
