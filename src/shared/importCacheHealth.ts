// The health of k3s's import cache, `<images dir>/.cache.json` (docs/k3s-facts.md, "The import
// cache trap"), as `holdfast archives` and the Archives tab show it:
// - absent: k3s re-imports every archive at every start, which delays kubelet by minutes on a
//   large images dir (k3s #12243) — the cache is opt-in, so operators create it;
// - entries without `images` (written by a release before k3s PR #14266): k3s skips the file while
//   it is unchanged and has no names to re-pin, so the pins it brought are lost at the next start
//   even though the archive is still there;
// - stale entries: for a file no longer in the images dir (k3s prunes it at start), or whose size
//   or mtime no longer match (k3s re-imports it, or — same size, before k3s #14284 — skips it).
// Creating the file is advice only where the release re-pins what the cache skips (k3s PR #14266):
// on a release with the cache but without that fix, turning it on loses the pins of every
// unchanged archive at each start — the trap itself.
// Pure: the core reads the file (core/archives/scan readK3sImportCache) and hands it here.
import { cacheRepinFix, firstReleases, K3S_RELEASES, type Support } from './versions';

export interface ImportCacheHealth {
  /** absent: no .cache.json; ignored: this release has no import cache; unreadable: not JSON. */
  state: 'absent' | 'ignored' | 'unreadable' | 'on';
  /** Whether the release re-pins what the cache skips (k3s PR #14266): turning the cache on is safe only then. */
  repins: Support;
  /** Entries in the file. */
  entries: number;
  /** Files (relative to the images dir) whose entry records no images, present and unchanged. */
  withoutImages: string[];
  /** Entries that no longer describe a file of the images dir. */
  stale: { path: string; why: 'gone' | 'changed' }[];
}

/** One entry as read (core/archives/scan K3sCacheEntry); null: an entry Holdfast cannot read. */
export interface CacheEntryInput {
  size: number;
  /** Whole seconds since the epoch. */
  modTime: number;
  images: string[] | null;
}

export interface CacheHealthInput {
  enabled: boolean;
  readable: boolean;
  entries: ReadonlyMap<string, CacheEntryInput | null>;
  /** Whether the node's release honours the cache (shared/versions importCacheHonoured). */
  honoured: 'yes' | 'no' | 'unknown';
  /** The node's k3s/RKE2 release, for whether it re-pins what the cache skips. */
  distroVersion?: string | null;
  /** The images dir as the entries' keys name it (the in-node path). */
  root: string;
  /** The files k3s's start-up walk takes: in-node path, path relative to the dir, size, mtime (s). */
  files: readonly { abs: string; path: string; size: number; mtime: number }[];
}

export function importCacheHealth(input: CacheHealthInput): ImportCacheHealth {
  const none = { entries: input.entries.size, withoutImages: [], stale: [], repins: cacheRepinFix(input.distroVersion) };
  if (!input.enabled) return { state: input.honoured === 'no' ? 'ignored' : 'absent', ...none };
  if (input.honoured === 'no') return { state: 'ignored', ...none };
  if (!input.readable) return { state: 'unreadable', ...none };
  const root = input.root.replace(/\/+$/, '');
  const byAbs = new Map(input.files.map((f) => [f.abs, f]));
  const rel = (abs: string) => (abs.startsWith(`${root}/`) ? abs.slice(root.length + 1) : abs);
  const withoutImages: string[] = [];
  const stale: ImportCacheHealth['stale'] = [];
  for (const [abs, e] of input.entries) {
    const f = byAbs.get(abs);
    if (!f) stale.push({ path: rel(abs), why: 'gone' });
    else if (e && (e.size !== f.size || e.modTime !== f.mtime)) stale.push({ path: f.path, why: 'changed' });
    else if (e && e.images === null) withoutImages.push(f.path);
  }
  return { state: 'on', entries: input.entries.size, withoutImages, stale, repins: none.repins };
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * One short line for `holdfast archives`; null when there is nothing to say (a healthy cache).
 * `who`: the node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName).
 */
export function importCacheBrief(h: ImportCacheHealth, who = 'k3s'): string | null {
  switch (h.state) {
    case 'absent':
      return `no .cache.json: every ${who} start re-imports every archive (slow starts on a large images dir)`;
    case 'ignored':
      return null;
    case 'unreadable':
      return `.cache.json cannot be read: Holdfast assumes ${who} skips every archive without re-pinning`;
    case 'on': {
      const parts = [
        ...(h.withoutImages.length ? [`${count(h.withoutImages.length, 'entry', 'entries')} without images (pins lost at the next start)`] : []),
        ...(h.stale.length ? [`${h.stale.length} stale`] : []),
      ];
      return parts.length ? `.cache.json: ${parts.join(', ')}` : null;
    }
  }
}

/** Every finding in full, one sentence each (--why, the app's details); `who` as for importCacheBrief. */
export function importCacheReasons(h: ImportCacheHealth, node = 'NODE', who = 'k3s'): string[] {
  switch (h.state) {
    case 'absent': {
      const slow = `The images dir has no .cache.json, so every ${who} start re-imports every archive in it, which delays kubelet by minutes on a large images dir (k3s #12243).`;
      if (h.repins === 'yes') return [`${slow} ${who} keeps the cache only if the file exists: an empty .cache.json turns it on.`];
      return [
        `${slow} Do not create one on this release: without k3s PR #14266 (${firstReleases(K3S_RELEASES.cacheRepin)} and later${h.repins === 'unknown' ? '; this release is not known to have it' : ''}) the cache makes ${who} skip unchanged archives at start without pinning their images again, so their pins are lost. Make the pins durable first (holdfast pin ${node} --needed), or upgrade.`,
      ];
    }
    case 'ignored':
      return [`This ${who} release predates the import cache (k3s PR #12237): it re-imports every archive at every start, whatever .cache.json says.`];
    case 'unreadable':
      return [`.cache.json is not a JSON object Holdfast can read; ${who} starts over with an empty cache, but until it does Holdfast assumes it skips every archive without re-pinning what it brought.`];
    case 'on':
      return [
        ...h.withoutImages.map(
          (p) =>
            `The entry for ${p} records no images (written before k3s PR #14266): while ${p} is unchanged ${who} skips it at start and has no names to pin again, so the pins it brought are lost at the next start although the archive is still there. Make them durable (holdfast pin ${node} --archive ${p}), or move the file out of the images dir and back in while ${who} runs (its watcher imports a file renamed into place).`,
        ),
        ...h.stale.map((s) =>
          s.why === 'gone'
            ? `The entry for ${s.path}: ${s.path} is no longer in the images dir (${who} drops the entry at its next start).`
            : `The entry for ${s.path} records another size or modification time than the file has now: ${who} imports it again at start when its size changed (or, with k3s #14284, its mtime is newer), else skips it.`,
        ),
      ];
  }
}
