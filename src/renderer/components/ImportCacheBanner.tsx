// The one banner the Archives tab gives k3s's import cache (`.cache.json`): that it is on and makes
// k3s skip the unchanged archives at start, and its health (shared/importCacheHealth: absent,
// files skipped without a re-pin, a cache that saves nothing, stale entries) — said once for the node, in one place, rather than in
// two overlapping banners.
import type { ImportCacheHealth } from '../../shared/importCacheHealth';
import { importCacheBrief, importCacheReasons } from '../../shared/importCacheHealth';
import { plural } from '../../shared/wording';
import { AlertIcon, ClockIcon } from './icons';
import { appRemedy } from '../appText';

/** `who`: the node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName). */
export function ImportCacheBanner({ node, cached, health, who = 'k3s' }: { node: string; cached: number; health: ImportCacheHealth | undefined; who?: string }) {
  const brief = health ? importCacheBrief(health, who) : null;
  if (!cached && !brief) return null;
  const Icon = brief ? AlertIcon : ClockIcon;
  return (
    <div className="banner banner-warning" data-testid="cache-banner" data-health={health?.state}>
      <Icon className="banner-icon" />
      <div className="banner-text">
        <strong>{brief ?? `${who}'s import cache is on (.cache.json).`}</strong>
        {/* Files skipped without a re-pin are said in full by the reasons below: once is enough. */}
        {cached && !health?.skippedUnpinned.length ? (
          <span data-testid="cache-skips">
            {brief ? `${who}'s import cache is on: ` : ''}
            {plural(cached, 'archive')} {cached === 1 ? 'is' : 'are'} unchanged since the last import, so {who} skips{' '}
            {cached === 1 ? 'it' : 'them'} at start —{' '}
            {health?.rule === 'with-fix'
              ? 'it pins only the names .cache.json records again, not their digest references.'
              : health?.rule === 'without-fix'
                ? 'this release pins nothing it skips, so their pins are cleared and never put back.'
                : 'on releases without the .cache.json fix the pins are cleared and never put back.'}
          </span>
        ) : null}
        {health && brief
          ? importCacheReasons(health, appRemedy, node, who).map((r) => (
              <span key={r} data-testid="cache-health-reason">
                {r}
              </span>
            ))
          : null}
      </div>
    </div>
  );
}
