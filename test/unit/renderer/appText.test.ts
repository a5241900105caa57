import { describe, expect, it } from 'vitest';
import { archiveRemedy, pinArchiveCommand } from '../../../src/shared/archiveRemedy';
import { appText } from '../../../src/renderer/appText';

describe('core sentences in the app', () => {
  const check = {
    node: 'edge-01',
    path: 'apps/apps.tar.gz',
    images: [
      { name: 'app:1', present: true, complete: true, durable: false, missing: [] },
      { name: 'db:2', present: true, complete: true, durable: true, missing: [] },
    ],
  };

  it('says what to click where the CLI sentence names the command', () => {
    const remedy = archiveRemedy(check)!;
    expect(remedy).toEqual({ action: 'pin', node: 'edge-01', archive: 'apps/apps.tar.gz' });
    const sentence = `app:1 is pinned by k3s only: make its pins durable first (${pinArchiveCommand('edge-01', 'apps/apps.tar.gz')}).`;
    expect(appText(sentence, remedy, 'use Make durable on this row')).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
    expect(appText(`${sentence} (and 1 more)`, remedy, 'use Make durable on this row')).toBe(
      'app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row. (and 1 more)',
    );
  });

  it('keeps sentences without a remedy as they are', () => {
    expect(appText('Every image it brings is complete and durably pinned.', undefined, 'use Make durable on this row')).toBe('Every image it brings is complete and durably pinned.');
  });

  it('finds a command whose quoted words hold parentheses and quotes', () => {
    const hostile = { ...check, node: "it's (n)", path: 'a(b);c.tar' };
    const remedy = archiveRemedy(hostile)!;
    const sentence = `app:1 is pinned by k3s only: make its pins durable first (${pinArchiveCommand(hostile.node, hostile.path)}).`;
    expect(appText(sentence, remedy, 'use Make durable on this row')).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
  });

  it('has no remedy when nothing present lacks a durable pin', () => {
    expect(archiveRemedy({ ...check, images: [{ name: 'app:1', present: false, complete: false, durable: false, missing: [] }] })).toBeUndefined();
  });
});
