// The app says what kubelet's max-age GC and credential verification mean (issue #46): the Disk
// tab's thresholds, forecast banner and state titles, and the Images tab's needs banner with the
// remedy — all from the shared rules (gcPolicy, gcForecast, needs). Rendered to markup by React
// itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Forecast, StateBadge, Thresholds } from '../../../src/renderer/components/DiskPanel';
import { NeedsBanner } from '../../../src/renderer/components/SiteNeeds';
import type { ImageRef } from '../../../src/shared/domain/images';
import { NODE_DEFAULTS, type NodeDef } from '../../../src/shared/domain/nodes';
import { imageRef } from '../../support/imageRef';
import { forecastGc } from '../../../src/shared/gcForecast';
import { maxAgeWhen, resolveGcPolicy, type KubeletArg } from '../../../src/shared/gcPolicy';
import { applyNeeds } from '../../../src/shared/needs';
import { imageProtection } from '../../../src/shared/protection';
import { store } from '../../support/diskStore';

const text = (el: Parameters<typeof renderToStaticMarkup>[0]): string =>
  renderToStaticMarkup(el)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();

const arg = (flag: string, value: string, source = '/etc/rancher/k3s/config.yaml'): KubeletArg => ({ flag, value, source });
const imagefs = { roles: ['content' as const, 'snapshots' as const], paths: {}, totalBytes: 1_000_000, freeBytes: 900_000, via: 'statvfs' as const };

describe("the Disk tab and kubelet's max-age GC", () => {
  const { images, index } = store([
    { key: 'old', refs: ['docker.io/library/redis:7.2'], blobs: [['r', 20_000]], lastChangedAt: '2024-01-01T00:00:00Z' },
    { key: 'kept', refs: ['docker.io/library/nginx:1'], blobs: [['n', 40_000]], pin: 'durable', lastChangedAt: '2023-01-01T00:00:00Z' },
  ]);

  it('off: the thresholds say so, and no banner', () => {
    const policy = resolveGcPolicy([], [], { minor: 35 });
    expect(text(createElement(Thresholds, { p: { policy, imagefs } }))).toContain('Max-age GC off (image-maximum-gc-age not set)');
    const f = forecastGc({ images, index, imagefs, policy });
    expect(renderToStaticMarkup(createElement(Forecast, { f, images, who: 'k3s' }))).not.toContain('forecast-max-age');
  });

  it('on: its age and source beside the thresholds, a banner naming what goes and when, and the unprotected state says it', () => {
    const policy = resolveGcPolicy([arg('image-maximum-gc-age', '168h')], [], { minor: 35 });
    expect(text(createElement(Thresholds, { p: { policy, imagefs } }))).toContain('Max-age GC 7 days unused, whatever the disk usage — image-maximum-gc-age=168h, /etc/rancher/k3s/config.yaml');
    const f = forecastGc({ images, index, imagefs, policy });
    expect(text(createElement(Forecast, { f, images, who: 'k3s' }))).toContain(
      "kubelet's max-age GC (image-maximum-gc-age=168h, /etc/rancher/k3s/config.yaml) deletes every unpinned image no container used for 7 days, whatever the disk usage: the image below, within 7 days after kubelet's last start",
    );
    const badge = renderToStaticMarkup(createElement(StateBadge, { image: images.find((i) => i.key === 'old')!, maxAge: maxAgeWhen(policy.maxAge!) }));
    expect(badge).toContain("kubelet&#x27;s max-age GC deletes it within 7 days after kubelet&#x27;s last start, and its GC when the disk fills.");
  });
});

describe('the Images tab and kubelet’s credential verification', () => {
  const refs: ImageRef[] = [imageRef('registry.local/app:3', { labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin.' })];
  const node: NodeDef = { name: 'n1', host: '10.0.0.1', ...NODE_DEFAULTS };
  const needs = { sources: [{ kind: 'cluster' as const, label: 'kubectl on n1' }], images: [{ ref: 'registry.local/app:3', workloads: [{ kind: 'Deployment', namespace: 'default', name: 'app', why: 'running' }], source: 'cluster' as const }], notes: [] };

  it('AlwaysVerify: the pinned needed image is at risk, and the banner says what to set where', () => {
    const kubelet = resolveGcPolicy([arg('imagePullCredentialsVerificationPolicy', 'AlwaysVerify', '/etc/rancher/rke2/kubelet.yaml')], [], { minor: 35 });
    const judged = applyNeeds(refs, imageProtection(refs, 'any'), needs, { kubelet });
    const html = text(createElement(NeedsBanner, { node, images: { state: 'ready', items: judged.refs, loadedAt: 1, needs: judged.report }, onPin: () => undefined, who: 'RKE2' }));
    expect(html).toContain('1 needed image at risk');
    expect(html).toContain('at risk: verify pull');
    expect(html).toContain(
      'kubelet re-verifies images it did not pull (imagePullCredentialsVerificationPolicy: AlwaysVerify, /etc/rancher/rke2/kubelet.yaml): set it to NeverVerifyPreloadedImages (or keep NeverVerifyAllowlistedImages and add registry.local/app to preloadedImagesVerificationAllowlist), then restart RKE2.',
    );
  });
});
