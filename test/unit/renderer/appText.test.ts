import { describe, expect, it } from 'vitest';
import { archiveRemedy } from '../../../src/shared/archiveRemedy';
import type { RemedyClause } from '../../../src/shared/remedy';
import { appProse, appText } from '../../../src/renderer/appText';
import { planPrune } from '../../../src/shared/prunePlan';
import { store } from '../../support/diskStore';

describe('core sentences in the app', () => {
  const check = {
    node: 'edge-01',
    path: 'apps/apps.tar.gz',
    images: [
      { name: 'app:1', present: true, complete: true, durable: false, missing: [] },
      { name: 'db:2', present: true, complete: true, durable: true, missing: [] },
    ],
  };
  const clause = (node: string, archive: string): RemedyClause => ({
    text: 'app:1 is pinned by k3s only: make its pins durable first',
    remedy: { action: 'pin', node, archive },
    end: '.',
  });

  it('says what to click where the terminal names the command', () => {
    expect(appText(clause('edge-01', 'apps/apps.tar.gz'), 'use Make durable on this row')).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
    expect(appText({ ...clause('edge-01', 'apps/apps.tar.gz'), end: '. (and 1 more)' }, 'use Make durable on this row')).toBe(
      'app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row. (and 1 more)',
    );
  });

  it("says prune's kept reasons as sentences, their remedies left to the row's controls", () => {
    const { images, index } = store([
      { key: 'pinned', refs: ['app:1'], blobs: [['o', 70]], pin: 'durable' },
      { key: 'lost', refs: ['db:2'], blobs: [['m', 3]], lostPin: true },
    ]);
    const kept = planPrune("it's (n)", images, index, { keepVersions: 2 }).kept;
    expect(Object.fromEntries(kept.map((k) => [k.key, appProse(k.text)]))).toEqual({
      pinned: 'Pinned durably; prune never unpins. If this version is obsolete, release its pin first.',
      lost: "Holdfast made its pin durable and that pin is gone (removed behind Holdfast's back): pin it again, or release it for good before pruning it.",
    });
  });

  it('keeps sentences without a remedy as they are', () => {
    expect(appText('Every image it brings is complete and durably pinned.', 'use Make durable on this row')).toBe('Every image it brings is complete and durably pinned.');
  });

  it('names no value of the remedy: a hostile node or path never reaches the sentence', () => {
    const text = appText(clause("it's (n)", 'a(b);c.tar'), 'use Make durable on this row');
    expect(text).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
    expect(text).not.toMatch(/holdfast|a\(b\)/);
  });

  it('pins the archive, and has no remedy when nothing present lacks a durable pin', () => {
    expect(archiveRemedy(check)).toEqual({ action: 'pin', node: 'edge-01', archive: 'apps/apps.tar.gz' });
    expect(archiveRemedy({ ...check, images: [{ name: 'app:1', present: false, complete: false, durable: false, missing: [] }] })).toBeUndefined();
  });
});
