// shared/watcherChance: when k3s's watcher is done with an unchanged archive (issue #49, item 3).
import { describe, expect, it } from 'vitest';
import { WATCHER_DELAY_MS, watcherDoneWith, type WatcherChance } from '../../../src/shared/watcherChance';

const gaveUp: WatcherChance = { unchangedFromBefore: true, watchedMs: 8_000, streamHealthy: true, events: 0 };

describe('watcherDoneWith', () => {
  it('an archive there before the run, untouched, watched past the delay with no event: done', () => {
    expect(watcherDoneWith(gaveUp)).toBe(true);
  });

  it.each<[string, Partial<WatcherChance>]>([
    ['uploaded by this run (the watcher has an event for it)', { unchangedFromBefore: false }],
    ['watched no longer than the watcher waits before its try', { watchedMs: WATCHER_DELAY_MS }],
    ['the event stream dropped (it cannot tell)', { streamHealthy: false }],
    ['an event about its images arrived (k3s at work on them)', { events: 1 }],
  ])('not done when %s', (_, over) => {
    expect(watcherDoneWith({ ...gaveUp, ...over })).toBe(false);
  });
});
