import { describe, expect, it } from 'vitest';
import { archiveRemedy, pinArchiveCommand } from '../../../src/shared/archiveRemedy';
import { appText } from '../../../src/renderer/appText';
import { commandLine } from '../../../src/shared/shellQuote';

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
    expect(remedy).toEqual({ kind: 'pin-archive', archive: 'apps/apps.tar.gz', command: 'holdfast pin edge-01 --archive apps/apps.tar.gz' });
    const sentence = `app:1 is pinned by k3s only: make its pins durable first (${pinArchiveCommand('edge-01', 'apps/apps.tar.gz')}).`;
    expect(appText(sentence, remedy, 'use Make durable on this row')).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
    expect(appText(`${sentence} (and 1 more)`, remedy, 'use Make durable on this row')).toBe(
      'app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row. (and 1 more)',
    );
  });

  it('leaves out any other quoted holdfast command, and keeps sentences without one as they are', () => {
    expect(appText('CRI\'s own record can leave the image unpinned: pin every reference (holdfast pin NODE app:1).')).toBe(
      "CRI's own record can leave the image unpinned: pin every reference.",
    );
    expect(appText('Every image it brings is complete and durably pinned.')).toBe('Every image it brings is complete and durably pinned.');
  });

  it('leaves out a command whose quoted words hold parentheses and quotes', () => {
    const hostile = { ...check, node: "it's (n)", path: 'a(b);c.tar' };
    const remedy = archiveRemedy(hostile)!;
    const sentence = `app:1 is pinned by k3s only: make its pins durable first (${remedy.command}).`;
    expect(appText(sentence, remedy, 'use Make durable on this row')).toBe('app:1 is pinned by k3s only: make its pins durable first — use Make durable on this row.');
    expect(appText(`Pin it again (${commandLine(['pin', "it's (n)", 'x(1)'])}), or release it.`)).toBe('Pin it again, or release it.');
  });

  it('has no remedy when nothing present lacks a durable pin', () => {
    expect(archiveRemedy({ ...check, images: [{ name: 'app:1', present: false, complete: false, durable: false, missing: [] }] })).toBeUndefined();
  });
});
