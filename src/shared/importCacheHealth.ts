// The health of k3s's import cache, `<images dir>/.cache.json` (docs/k3s-facts.md, "The import
// cache (.cache.json)"), as `holdfast archives` and the Archives tab show it. Each file's fate at
// the next start comes from the one rule (shared/importCache cacheVerdict); this sums it up (the
// cases, with their k3s sources, are on importCacheHealth). Pure: the core reads the file
// (core/archives/scan readK3sImportCache) and hands it here.
import { cacheIsNotAFile, cacheRule, cacheVerdict, type CacheRule, type CacheVerdict, type CachedFileStamp, type K3sImportCache } from './importCache';
import { cacheRepinFix, firstReleases, K3S_RELEASES, type Support } from './versions';
import type { RemedyWording } from './remedy';

/** Why the next start re-imports a file the cache records (shared/importCache CacheVerdict). */
export type ReimportWhy = Extract<CacheVerdict, { skipped: false }>['why'];

export interface ImportCacheHealth {
  /** absent: no .cache.json; ignored: this release has no import cache; unreadable: not JSON. */
  state: 'absent' | 'ignored' | 'unreadable' | 'on';
  /** Whether the release re-pins what the cache skips (k3s PR #14266): turning the cache on is safe only then. */
  repins: Support;
  /** Which comparison the release makes at start (shared/importCache cacheRule). */
  rule: CacheRule;
  /** Entries in the file. */
  entries: number;
  /** Why the file cannot be read (state unreadable), in a clause after ".cache.json". */
  unreadable?: string;
  /** Files the next start skips without pinning again what they bring (relative to the images dir). */
  skippedUnpinned: string[];
  /** Files the next start skips but whose recorded names it pins again. */
  skippedRepinned: string[];
  /** Files the cache records that the next start re-imports anyway, and why. */
  reimported: { path: string; why: ReimportWhy }[];
  /** The cache is on and the next start re-imports every file: it saves nothing. */
  savesNothing: boolean;
  /** Entries for files no longer in the images dir. */
  stale: { path: string; why: 'gone' }[];
}

export interface CacheHealthInput extends K3sImportCache {
  /** Whether the node's release honours the cache (shared/versions importCacheHonoured). */
  honoured: 'yes' | 'no' | 'unknown';
  /** The node's k3s/RKE2 release. */
  distroVersion?: string | null;
  /** The images dir as the entries' keys name it (the in-node path). */
  root: string;
  /** The files k3s's start-up walk takes, as it compares them, with their path relative to the dir. */
  files: readonly (CachedFileStamp & { path: string })[];
}

/**
 * - absent: every start re-imports every archive (slow starts, k3s #12243); create it only where
 *   the release re-pins what the cache skips (k3s PR #14266), else it loses pins;
 * - files skipped without a re-pin: their pins are lost at the next start, archive or not;
 * - files re-imported anyway (sub-second mtime, no `images`, changed): the cache saves nothing
 *   for them; when that is every file, say the cache saves nothing at all;
 * - entries of files gone from the images dir (k3s drops them at its next start).
 */
export function importCacheHealth(input: CacheHealthInput): ImportCacheHealth {
  const none = {
    entries: input.entries.size,
    skippedUnpinned: [],
    skippedRepinned: [],
    reimported: [],
    savesNothing: false,
    stale: [],
    repins: cacheRepinFix(input.distroVersion),
    rule: cacheRule(input.distroVersion),
  };
  if (!input.enabled) return { state: input.honoured === 'no' ? 'ignored' : 'absent', ...none };
  if (input.honoured === 'no') return { state: 'ignored', ...none };
  if (!input.readable) return { state: 'unreadable', ...none, ...(input.unreadable ? { unreadable: input.unreadable } : {}) };
  const root = input.root.replace(/\/+$/, '');
  const seen = new Set(input.files.map((f) => f.abs));
  const rel = (abs: string) => (abs.startsWith(`${root}/`) ? abs.slice(root.length + 1) : abs);
  const h: ImportCacheHealth = { state: 'on', ...none, skippedUnpinned: [], skippedRepinned: [], reimported: [], stale: [] };
  for (const f of input.files) {
    const v = cacheVerdict(input, f, input.distroVersion);
    if (v.skipped) (v.repins.length ? h.skippedRepinned : h.skippedUnpinned).push(f.path);
    else if (v.why !== 'not-listed') h.reimported.push({ path: f.path, why: v.why });
  }
  for (const abs of input.entries.keys()) if (!seen.has(abs)) h.stale.push({ path: rel(abs), why: 'gone' });
  // Recorded files, none of them skipped (a cache just turned on has recorded nothing yet).
  h.savesNothing = h.reimported.length > 0 && h.skippedUnpinned.length === 0 && h.skippedRepinned.length === 0;
  return h;
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
      return `.cache.json ${cacheIsNotAFile({ enabled: true, ...(h.unreadable ? { unreadable: h.unreadable } : {}) }) ? 'is not a regular file' : 'cannot be read'}: Holdfast assumes ${who} skips every archive without re-pinning`;
    case 'on': {
      const parts = [
        ...(h.skippedUnpinned.length ? [`${count(h.skippedUnpinned.length, 'file', 'files')} skipped without a re-pin (pins lost at the next start)`] : []),
        ...(h.savesNothing ? [`saves nothing (${who} re-imports every file at each start)`] : []),
        ...(h.stale.length ? [`${h.stale.length} stale`] : []),
      ];
      return parts.length ? `.cache.json: ${parts.join(', ')}` : null;
    }
  }
}

/** Why the next start re-imports a file its entry records (one clause). */
export function reimportReason(why: ReimportWhy): string {
  switch (why) {
    case 'no-images':
      return 'its entry records no images';
    case 'sub-second':
      return 'its mtime has a sub-second part, later than the whole second the entry records';
    case 'newer':
      return 'its mtime is later than the entry records';
    case 'size':
      return 'its size changed';
    default:
      return 'the cache does not apply';
  }
}

/** The files a start skips without a re-pin, said once for all of them. */
function unpinnedReasons(h: ImportCacheHealth, word: RemedyWording, node: string, who: string): string[] {
  const files = h.skippedUnpinned;
  if (!files.length) return [];
  const one = files.length === 1;
  const named = files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
  const pin = `${word({ action: 'pin', node, archive: one ? files[0]! : 'FILE' })}${one ? '' : ', for each'}`;
  if (h.rule === 'with-fix') return [`The .cache.json ${one ? 'entry' : 'entries'} of ${named} cannot be read, so Holdfast assumes ${who} skips ${one ? 'it' : 'them'} at start without pinning again. Make the pins durable (${pin}).`];
  const fix = `k3s PR #14266 (${firstReleases(K3S_RELEASES.cacheRepin)})`;
  const unless = h.rule === 'unknown' ? `unless its release has ${fix}, which Holdfast cannot tell,` : `without ${fix},`;
  return [
    `${named} ${one ? 'is' : 'are'} the same size as recorded in .cache.json, so ${who} skips ${one ? 'it' : 'them'} at start and, ${unless} pins nothing it skips: ${one ? 'its pins are lost at the next start although the archive is' : 'their pins are lost at the next start although the archives are'} still there. Make them durable (${pin}), or move ${one ? 'the' : 'a'} file out of the images dir and back in while ${who} runs (its watcher imports a file renamed into place).`,
  ];
}

/**
 * Every finding in full, one sentence each (--why, the app's details); `who` as for importCacheBrief.
 * `word`: how the reader says a remedy (the CLI's command, cli/remedyText; the app's button).
 */
export function importCacheReasons(h: ImportCacheHealth, word: RemedyWording, node = 'NODE', who = 'k3s'): string[] {
  const fixSince = firstReleases(K3S_RELEASES.cacheRepin);
  switch (h.state) {
    case 'absent': {
      const slow = `The images dir has no .cache.json, so every ${who} start re-imports every archive in it, which delays kubelet by minutes on a large images dir (k3s #12243).`;
      if (h.repins === 'yes') return [`${slow} ${who} keeps the cache only if the file exists: an empty .cache.json turns it on.`];
      return [
        `${slow} Do not create one on this release: without k3s PR #14266 (${fixSince} and later${h.repins === 'unknown' ? '; this release is not known to have it' : ''}) the cache makes ${who} skip unchanged archives at start without pinning their images again, so their pins are lost. Make the pins durable first (${word({ action: 'pin', node, needed: true })}), or upgrade.`,
      ];
    }
    case 'ignored':
      return [`This ${who} release predates the import cache (k3s PR #12237): it re-imports every archive at every start, whatever .cache.json says.`];
    case 'unreadable':
      if (cacheIsNotAFile({ enabled: true, ...(h.unreadable ? { unreadable: h.unreadable } : {}) })) {
        return [`.cache.json ${h.unreadable}: Holdfast never opens it, and ${who} expects a JSON file there. Replace it with a regular file (an empty one keeps the cache on) or remove it; until then Holdfast assumes ${who} skips every archive without re-pinning what it brought.`];
      }
      return [`.cache.json ${h.unreadable ?? 'is not a JSON object Holdfast can read'}; ${who} starts over with an empty cache, but until it does Holdfast assumes it skips every archive without re-pinning what it brought.`];
    case 'on':
      return [
        ...unpinnedReasons(h, word, node, who),
        ...(h.savesNothing
          ? [
              `The cache saves nothing: ${who} re-imports every file at each start (${[...new Set(h.reimported.map((r) => reimportReason(r.why)))].join('; ') || 'no file is recorded'}). A file written normally has a sub-second mtime, which the whole-second record never matches; only files whose mtime is a whole second (extracted from a tar, or touch -d to a second) are skipped.`,
            ]
          : []),
        ...h.stale.map((s) => `The entry for ${s.path}: ${s.path} is no longer in the images dir (${who} drops the entry at its next start).`),
      ];
  }
}

/**
 * What the next start does with one file because of the cache, in one clause (`archives --why`,
 * the Archives tab); null when the cache has no say (off, ignored, not recorded).
 */
export function cacheVerdictReason(v: CacheVerdict | undefined, who = 'k3s'): string | null {
  if (!v) return null;
  if (!v.skipped) return v.why === 'off' || v.why === 'ignored-by-release' || v.why === 'not-listed' ? null : `${who} re-imports it at start: ${reimportReason(v.why)}`;
  switch (v.why) {
    case 'unreadable':
      return `.cache.json cannot be read: Holdfast assumes ${who} skips it without a re-pin`;
    case 'unreadable-entry':
      return `its .cache.json entry cannot be read: Holdfast assumes ${who} skips it without a re-pin`;
    case 'maybe-release':
      return `${who} skips it (same size) unless the release has k3s PR #14266, which Holdfast cannot tell: pins assumed lost`;
    case 'maybe-sub-second':
    case 'unchanged': {
      const guess = v.why === 'maybe-sub-second' ? ' (the node did not tell its mtime to the nanosecond)' : '';
      if (v.rule === 'without-fix') return `${who} skips it (same size as recorded) and pins nothing it skips${guess}`;
      return `${who} skips it (unchanged to the second) and pins only its recorded names again: ${v.repins.join(', ') || 'none'}${guess}`;
    }
  }
}
