// The Archives tab says what k3s's import cache does once, in one banner: that it is on (the
// unchanged archives k3s skips) and its health (shared/importCacheHealth), where it used to show
// two overlapping banners. Rendered to markup by React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { importCacheBrief, importCacheHealth, importCacheReasons, type CacheHealthInput } from '../../../src/shared/importCacheHealth';
import { ImportCacheBanner } from '../../../src/renderer/components/ImportCacheBanner';
import { appRemedy } from '../../../src/renderer/appText';

const ROOT = '/var/lib/rancher/k3s/agent/images';
const files = [
  { abs: `${ROOT}/a.tar`, path: 'a.tar', size: 10, mtime: 100 },
  { abs: `${ROOT}/b.tar`, path: 'b.tar', size: 20, mtime: 200 },
];
const input = (over: Partial<CacheHealthInput>): CacheHealthInput => ({
  enabled: true,
  readable: true,
  entries: new Map(),
  honoured: 'yes',
  distroVersion: 'v1.33.2+k3s1',
  root: ROOT,
  files,
  ...over,
});

const markup = (cached: number, health = importCacheHealth(input({}))): string =>
  renderToStaticMarkup(createElement(ImportCacheBanner, { node: 'edge1', cached, health }));
const text = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/&#x27;/g, "'").replace(/\s+/g, ' ');
const banners = (html: string): number => html.split('data-testid="cache-banner"').length - 1;

describe('Archives tab: the import cache banner', () => {
  it('a cache that skips archives without a re-pin (a release without the fix): one banner says it once', () => {
    // v1.33.2 has no fix: both same-size files are skipped and nothing is re-pinned
    const health = importCacheHealth(
      input({
        entries: new Map([
          [`${ROOT}/a.tar`, { size: 10, modTime: 100, modTimeNanos: 0, images: null }],
          [`${ROOT}/b.tar`, { size: 20, modTime: 200, modTimeNanos: 0, images: ['docker.io/library/b:1'] }],
          [`${ROOT}/gone.tar`, { size: 5, modTime: 50, modTimeNanos: 0, images: null }],
        ]),
      }),
    );
    const html = markup(2, health);
    expect(banners(html)).toBe(1);
    const shown = text(html);
    expect(shown).toContain(importCacheBrief(health)!);
    expect(shown).not.toContain('unchanged since the last import'); // the reasons say it in full
    expect(shown.split('are the same size as recorded in .cache.json')).toHaveLength(2);
    for (const r of importCacheReasons(health, appRemedy, 'edge1')) expect(shown).toContain(r);
    expect(shown).toContain('gone.tar is no longer in the images dir');
  });

  it('a healthy cache that skips an archive: the banner says the cache is on', () => {
    const health = importCacheHealth(
      input({ distroVersion: 'v1.34.10+k3s1', files: [{ ...files[0]!, mtimeNanos: 0 }], entries: new Map([[`${ROOT}/a.tar`, { size: 10, modTime: 100, modTimeNanos: 0, images: ['docker.io/library/a:1'] }]]) }),
    );
    expect(importCacheBrief(health)).toBeNull();
    const html = markup(1, health);
    expect(banners(html)).toBe(1);
    expect(text(html)).toContain("k3s's import cache is on (.cache.json). 1 archive is unchanged since the last import, so k3s skips it at start — it pins only the names .cache.json records again");
  });

  it('no .cache.json: one banner with the health alone; nothing to say: no banner', () => {
    const absent = importCacheHealth(input({ enabled: false, distroVersion: 'v1.36.3+k3s1' }));
    const html = markup(0, absent);
    expect(banners(html)).toBe(1);
    expect(text(html)).toContain('no .cache.json: every k3s start re-imports every archive');
    expect(text(html)).not.toContain('unchanged since the last import');
    expect(markup(0)).toBe('');
  });
});
