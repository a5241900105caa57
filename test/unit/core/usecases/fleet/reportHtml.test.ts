// The HTML report's tables keep their Why column readable and a digest to one short run (#49
// item 13): a 64-digit digest shows as `sha256:<12 digits>…<last 4>`, the whole digest in its
// title; names wrap after a `/`, and long words where the cell ends instead of widening the table
// past its Why column; the image id and size never wrap.
import { describe, expect, it } from 'vitest';
import { computeDrift, fleetHtml, summarizeFleet, type FleetNodeResult } from '../../../../../src/core/usecases/fleet';
import type { ImageRef } from '../../../../../src/shared/domain/images';

const HEX = '5ad44c7d16e3b2f0c9a8e1d4f7b6a5c3e2d1f0a9b8c7d6e5f4a3b2c1d0e91e8d';
const ID = '80d331785726a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6e551';
const NAME = 'docker.io/library/holdfast-sample:1.0';
const DIGEST_REF = `docker.io/library/holdfast-sample@sha256:${HEX}`;

const ref = (name: string, reason: string): ImageRef => ({
  name,
  digest: `sha256:${HEX}`,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: `sha256:${ID}`,
  size: 2150,
  platforms: ['linux/amd64'],
  createdAt: null,
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason,
  archive: 'extra/site-apps/holdfast-telemetry-collector-2.5.1-build.1234.tar.zst',
});

function page(): string {
  const node: FleetNodeResult = {
    node: 'edge-site-a-rack-07-worker-12',
    reachable: true,
    error: null,
    versions: { containerdVersion: '2.1.9', containerdRevision: 'abc', distro: 'k3s', distroVersion: 'v1.33.7+k3s1' },
    images: [
      ref(NAME, 'not pinned: kubelet may remove it when the disk fills'),
      ref(DIGEST_REF, `the digest record of ${NAME}, not pinned`),
      ref(`sha256:${ID}`, `CRI's own record of the image of ${NAME} and ${DIGEST_REF}: kubelet sees the image as pinned through ${DIGEST_REF}`),
    ],
    archives: [],
    disk: { path: '/var/lib/rancher/k3s/agent/images', freeBytes: 50 * 1024 ** 3, totalBytes: 100 * 1024 ** 3, via: 'statvfs' },
  };
  const drift = computeDrift([node]);
  return fleetHtml({ generatedAt: '2026-12-07T16:00:00Z', nodes: [node], drift, summary: summarizeFleet([node], drift) });
}

/** What a reader sees: the body's text, tags (and so their attributes) removed. */
const visible = (html: string) => html.slice(html.indexOf('<body>')).replace(/<[^>]+>/g, '');

describe('the HTML report', () => {
  it('shows a digest as a short run with the whole digest in its title', () => {
    const html = page();
    expect(visible(html)).not.toMatch(/[0-9a-f]{64}/);
    expect(visible(html)).toContain(`docker.io/library/holdfast-sample@sha256:${HEX.slice(0, 12)}…${HEX.slice(-4)}`);
    expect(html).toContain('docker.io/<wbr>library/<wbr>holdfast-sample<wbr>@<span class="digest"');
    expect(visible(html)).toContain(`sha256:${ID.slice(0, 12)}…${ID.slice(-4)}`);
    expect(html).toContain(`title="sha256:${HEX}"`);
    expect(html).toContain(`title="sha256:${ID}"`);
  });

  it('gives the Why column room and lets long words wrap in their cell; ids and sizes stay on one line', () => {
    const html = page();
    const css = html.slice(html.indexOf('<style>'), html.indexOf('</style>'));
    expect(css).toMatch(/td\.why\{min-width:\d+ch/);
    expect(css).toMatch(/td\{overflow-wrap:anywhere\}/);
    // breaking anywhere even where a word fits made six-line cells of a digest and a path
    expect(css).not.toContain('word-break:break-all');
    expect(css).toContain('td.nowrap{white-space:nowrap}');
    const rows = [...html.matchAll(/<tr><td class="ref">.*?<\/tr>/g)].map((m) => m[0]);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatch(/<td class="why">/);
      expect(row).toMatch(/<td class="mono nowrap">[0-9a-f]{12}<\/td><td class="nowrap">2\.1 KiB<\/td>/);
    }
  });
});
