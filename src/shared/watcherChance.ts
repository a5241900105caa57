// Whether k3s's running watcher will still import an archive whose images an import waited for
// in vain (docs/k3s-facts.md, "The file watcher"). The watcher takes a file about 2 s after an
// event about it and records its size and mtime BEFORE importing it: an import that fails
// (containerd restarting under it, or down when the watcher tried) is logged, not retried, and the
// unchanged file never counts as changed again; only a k3s start (its walk imports every archive
// in the images dir) or a delivery without k3s brings it in. So an import run that found the
// archive in place and left it untouched, watched longer than the watcher's delay and saw no event
// about its images, cannot be helped by running it again. Pure: the one home of this rule.

/** k3s's watcher queues a file this long after an event about it (watcher.go: AddAfter 2 s). */
export const WATCHER_DELAY_MS = 2_000;

export interface WatcherChance {
  /** The archive was in the images dir before this run, and this run did not write it. */
  unchangedFromBefore: boolean;
  /** How long this run watched containerd's events about the archive's images. */
  watchedMs: number;
  /** The event stream stayed up all along (a dropped stream cannot tell what happened). */
  streamHealthy: boolean;
  /** Events about the archive's images that arrived meanwhile (k3s at work on them). */
  events: number;
}

/**
 * true: k3s's watcher has had its chance at this unchanged file and will not import it by
 * itself; a k3s start or a direct delivery will, a new run of the same import will not.
 */
export function watcherDoneWith(c: WatcherChance): boolean {
  return c.unchangedFromBefore && c.streamHealthy && c.events === 0 && c.watchedMs > WATCHER_DELAY_MS;
}
