// UI smoke test: the built renderer served by startServer, over the real service with fake nodes (serveReal): node state in test/doubles/node.ts, the local archives the import wizard is given in test/doubles/bundles.ts.
import { expect, openFromOverview, test, type Page } from './fixtures';
import path from 'node:path';
import { startServer, type RunningServer } from '../src/server/http';
import { operations } from '../src/shared/contract';
import { DELETED_REF, EDGE1_IMAGES, FINGERPRINT, OLD_FINGERPRINT } from '../test/doubles/catalog';
import { bundle, BUNDLES, writeBundles } from '../test/doubles/bundles';
import { nodeImageId } from '../test/doubles/node';
import { fakeService, type Scenario } from '../test/doubles/service';
import { readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { formatBytes } from '../src/shared/format';

const rendererDir = path.resolve(import.meta.dirname, '..', 'out', 'renderer');
const shots = process.env['HOLDFAST_SCREENSHOTS'];

let server: RunningServer;
let service: Awaited<ReturnType<typeof fakeService>> | undefined;
/** Every call the UI made, in order. */
let calls: { channel: string; args: unknown }[] = [];

/** The real service over fake nodes. */
async function serveReal(scenario: Scenario = {}) {
  service = await fakeService(scenario);
  calls = service.calls;
  server = await startServer({ handlers: service.handlers, rendererDir });
}

test.afterEach(async () => {
  await server?.close();
  await service?.dispose();
  service = undefined;
});

async function openApp(page: Page) {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  // Two nodes: the app lands on the fleet overview; open the first node from there.
  await expect(page.getByTestId('fleet-overview')).toBeVisible();
  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));
  return errors;
}

const rows = (page: Page) => page.getByTestId('image-row');

test('lists nodes and groups references by image id, with pin badges', async ({ page }) => {
  await serveReal();
  const errors = await openApp(page);

  // The token moved from the address bar into sessionStorage.
  expect(new URL(page.url()).searchParams.has('token')).toBe(false);

  const sidebar = page.getByRole('navigation', { name: 'Nodes' });
  await expect(sidebar.getByRole('button', { name: /edge-01/ })).toBeVisible();
  await expect(sidebar.getByRole('button', { name: /edge-02/ })).toBeVisible();
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  await expect(page.getByTestId('node-item-edge-02').getByTestId('status-dot')).toHaveAttribute('data-state', 'error');

  await expect(page.getByRole('heading', { level: 1, name: 'edge-01' })).toBeVisible();
  await expect(page.getByTestId('node-versions')).toContainText('v2.0.4-k3s2');
  await expect(page.getByTestId('node-versions')).toContainText('v1.31.9+k3s1');

  // 10 references, 8 image ids → 8 rows.
  await expect(rows(page)).toHaveCount(8);
  const nginx = rows(page).filter({ hasText: 'nginx:1.27.3' });
  await expect(nginx).toHaveCount(1);
  await expect(nginx.getByTestId('image-ref')).toHaveCount(2);
  await expect(nginx).toContainText('docker.io/library/nginx@sha256:a1a1a1a1a1a1');
  await expect(nginx.getByTestId('pin-badge')).toHaveText('Durable');
  await expect(nginx).toContainText(nodeImageId(EDGE1_IMAGES[0]!).slice(7, 19)); // short image id (the node's config digest)
  await expect(nginx).toContainText('69.1 MiB');

  await expect(rows(page).filter({ hasText: 'mirrored-pause:3.6' }).getByTestId('pin-badge')).toHaveText('k3s pin');
  await expect(rows(page).filter({ hasText: 'telemetry-agent' }).getByTestId('pin-badge')).toHaveText('Unpinned');

  // Counts on the filter buttons.
  await expect(page.getByTestId('filter-all')).toContainText('8');
  await expect(page.getByTestId('filter-durable')).toContainText('2');
  await expect(page.getByTestId('filter-distro')).toContainText('4');
  await expect(page.getByTestId('filter-none')).toContainText('2');
  await expect(page.getByTestId('filter-atRisk')).toContainText('3');

  if (shots) {
    await page.screenshot({ path: path.join(shots, 'holdfast-images.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(shots, 'holdfast-images-dark.png') });
  }
  expect(errors).toEqual([]);
});

test('search and pin filter narrow the table; sorting works', async ({ page }) => {
  await serveReal();
  await openApp(page);
  const search = page.getByRole('searchbox', { name: 'Search images' });

  await search.fill('telemetry');
  await expect(rows(page)).toHaveCount(1);
  await search.fill('Acme Field'); // label value
  await expect(rows(page)).toHaveCount(1);
  // The node's own ids and digests (it builds real configs and manifests), as core lists them.
  const listed = await service!.handlers['images.list']({ node: 'edge-01' });
  const pause = listed.find((r) => r.name.endsWith('mirrored-pause:3.6'))!;
  await search.fill(pause.imageId!.slice(0, 20)); // image id
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page)).toContainText('mirrored-pause:3.6');
  await search.fill(listed.find((r) => r.name.includes('coredns'))!.digest.slice(7, 19)); // target digest
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page)).toContainText('coredns');
  await search.fill('nothing-like-this');
  await expect(page.getByTestId('images-no-match')).toContainText('No images match');
  await page.getByRole('button', { name: 'Clear search and filter' }).click();
  await expect(rows(page)).toHaveCount(8);

  await page.getByRole('button', { name: /^k3s/ }).click();
  await expect(page.getByTestId('filter-distro')).toHaveAttribute('aria-pressed', 'true');
  await expect(rows(page)).toHaveCount(4);
  for (const badge of await page.getByTestId('pin-badge').all()) await expect(badge).toHaveText('k3s pin');
  await search.fill('coredns');
  await expect(rows(page)).toHaveCount(1);
  await search.fill('');
  await page.getByRole('button', { name: /^Durable/ }).click();
  await expect(rows(page)).toHaveCount(2);
  await page.getByRole('button', { name: /^Unpinned/ }).click();
  await expect(rows(page)).toHaveCount(2);
  await page.getByRole('button', { name: /^All/ }).click();

  // Sort by size, largest first, then ascending.
  await page.getByRole('button', { name: /^Size/ }).click();
  await expect(rows(page).first()).toContainText('telemetry-agent');
  await page.getByRole('button', { name: /^Size/ }).click();
  await expect(rows(page).first()).toContainText('mirrored-pause');
  await expect(page.getByRole('columnheader', { name: /Size/ })).toHaveAttribute('aria-sort', 'ascending');

  // Refresh lists again.
  const before = calls.filter((c) => c.channel === 'images.report').length;
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.getByRole('button', { name: 'Refresh' })).toBeEnabled();
  expect(calls.filter((c) => c.channel === 'images.report').length).toBe(before + 1);
});

test('unknown host key: shows the fingerprint, Trust records it and reconnects', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('button', { name: /edge-02/ }).click();

  const panel = page.getByTestId('host-key-unknown');
  await expect(panel).toBeVisible();
  await expect(panel.getByRole('heading', { name: 'Unknown host key' })).toBeVisible();
  await expect(panel.getByTestId('fingerprint')).toHaveText(FINGERPRINT);
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-hostkey.png') });

  // Cancel leaves the node unconnected and trusts nothing.
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('not-connected')).toBeVisible();
  expect(calls.some((c) => c.channel === 'nodes.trustHostKey')).toBe(false);

  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  await page.getByRole('button', { name: 'Trust this host' }).click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  await expect(rows(page)).toHaveCount(1);
  await expect(page.getByTestId('node-item-edge-02').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  expect(calls.filter((c) => c.channel === 'nodes.trustHostKey')).toEqual([
    { channel: 'nodes.trustHostKey', args: { name: 'edge-02', fingerprint: FINGERPRINT } },
  ]);
});

test('changed host key is a blocking error with both fingerprints and no trust button', async ({ page }) => {
  await serveReal({ edge2HostKey: 'changed' });
  await openApp(page);
  await page.getByRole('button', { name: /edge-02/ }).click();
  const panel = page.getByTestId('host-key-changed');
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId('expected-fingerprint')).toHaveText(OLD_FINGERPRINT);
  await expect(panel.getByTestId('fingerprint')).toHaveText(FINGERPRINT);
  await expect(panel).toContainText('ssh-keygen -R');
  await expect(page.getByRole('button', { name: 'Trust this host' })).toHaveCount(0);
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-hostkey-changed.png') });
});

test('add, edit and remove a node', async ({ page }) => {
  await serveReal();
  await openApp(page);

  await page.getByRole('button', { name: 'Add node' }).first().click();
  const form = page.getByRole('dialog', { name: 'Add node' });
  await expect(form).toBeVisible();
  // Client-side validation before anything is sent.
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form.getByLabel(/^Name\b/)).toHaveAttribute('aria-invalid', 'true');
  expect(calls.some((c) => c.channel === 'nodes.add')).toBe(false);

  await form.getByLabel(/^Name\b/).fill('edge-01');
  await form.getByLabel(/^Host\b/).fill('10.20.0.99');
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form.getByRole('alert')).toContainText('already exists'); // server-side CONFLICT

  await form.getByLabel(/^Name\b/).fill('edge-03');
  await form.getByLabel('Port').fill('2200');
  await form.getByLabel('Identity file').fill('/home/tech/.ssh/id_ed25519');
  await form.getByText('Advanced').click();
  await form.getByLabel('Namespace').fill('k8s.io');
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-add-node.png') });
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form).toBeHidden();
  expect(calls.filter((c) => c.channel === 'nodes.add').at(-1)?.args).toEqual({
    node: { name: 'edge-03', host: '10.20.0.99', port: 2200, identity: '/home/tech/.ssh/id_ed25519', namespace: 'k8s.io' },
  });
  // The fake cannot reach edge-03: other errors show message, hint and Retry.
  const err = page.getByTestId('connection-error');
  await expect(err).toContainText('Cannot reach 10.20.0.99:2200.');
  await expect(err).toContainText('Check the address');
  await expect(err.getByRole('button', { name: 'Retry' })).toBeVisible();
  await expect(page.getByTestId('node-item-edge-03').getByTestId('status-dot')).toHaveAttribute('data-state', 'error');

  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit node edge-03' });
  await expect(edit.getByLabel(/^Host\b/)).toHaveValue('10.20.0.99');
  await edit.getByLabel(/^Host\b/).fill('10.20.0.13');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByTestId('node-item-edge-03')).toContainText('10.20.0.13');

  await page.getByRole('button', { name: 'Remove' }).click();
  const confirm = page.getByRole('dialog', { name: 'Remove edge-03?' });
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('node-item-edge-03')).toBeVisible();
  await page.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog', { name: 'Remove edge-03?' }).getByRole('button', { name: 'Remove node' }).click();
  await expect(page.getByTestId('node-item-edge-03')).toHaveCount(0);
  expect(calls.filter((c) => c.channel === 'nodes.remove')).toEqual([
    { channel: 'nodes.remove', args: { name: 'edge-03' } },
  ]);
});

test('keyboard: the filter and sort controls are reachable and operable', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('searchbox', { name: 'Search images' }).focus();
  await page.keyboard.press('Tab'); // "All"
  await page.keyboard.press('Tab'); // "Durable"
  await expect(page.getByTestId('filter-durable')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(rows(page)).toHaveCount(2);
});

// ---------------------------------------------------------------------------------------------
// Fate at the next k3s start, tabs, previewed pin changes and archive removal.

const row = (page: Page, text: string) => rows(page).filter({ hasText: text });
const callsOf = (channel: string) => calls.filter((c) => c.channel === channel);

test('fate markers: kept, will lose pin, stays unpinned, pinned at start; reasons on hover and in details', async ({ page }) => {
  await serveReal();
  const errors = await openApp(page);

  const banner = page.getByTestId('at-risk-banner');
  await expect(banner).toContainText('3 images will lose their pin when k3s restarts');
  await expect(banner.getByRole('button', { name: 'Make them durable' })).toBeVisible();
  // The tab counts the needed images at risk (edge-01's cluster, test/doubles/cluster.ts): 4.
  await expect(page.getByRole('tab', { name: /Images/ })).toContainText('4');

  const coredns = row(page, 'coredns');
  await expect(coredns.getByTestId('fate')).toHaveText('Will lose pin');
  await expect(coredns.getByTestId('fate')).toHaveAttribute('data-fate', 'lose');
  await expect(coredns.getByTestId('fate')).toHaveAttribute('title', /no readable archive brings it back \(broken\.tar\.gz could not be read\)/);
  await expect(row(page, 'mirrored-pause:3.6').getByTestId('fate')).toHaveText('Kept');
  await expect(row(page, 'nginx:1.27.3').getByTestId('fate')).toHaveText('Kept');
  await expect(row(page, 'telemetry-agent').getByTestId('fate')).toHaveText('Stays unpinned');
  await expect(row(page, 'busybox').getByTestId('fate')).toHaveText('Pinned at start');
  if (shots) await page.screenshot({ path: path.join(shots, 'images-at-risk.png') });

  // Details panel: the reason sentence in full and the archive that brings the image.
  const klipper = row(page, 'klipper-helm');
  await klipper.getByRole('button', { name: /Details of/ }).click();
  await expect(klipper.getByRole('button', { name: /Details of/ })).toHaveAttribute('aria-expanded', 'true');
  const details = page.getByTestId('image-details');
  await expect(details.getByTestId('fate-reason')).toContainText('skips apps/apps.tar.gz (same size in .cache.json) and re-pins nothing it skips');
  await expect(details.getByTestId('image-archive')).toContainText('apps/apps.tar.gz');
  await coredns.getByRole('button', { name: /Details of/ }).click();
  await expect(page.getByTestId('image-details').nth(1).getByTestId('image-archive')).toContainText('No archive');

  // "At risk" chip and the banner's "Show them".
  await page.getByTestId('filter-atRisk').click();
  await expect(rows(page)).toHaveCount(3);
  for (const f of await page.getByTestId('image-row').getByTestId('fate').all()) await expect(f).toHaveText('Will lose pin');
  await page.getByTestId('filter-all').click();
  await banner.getByRole('button', { name: 'Show them' }).click();
  await expect(page.getByTestId('filter-atRisk')).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('filter-all').click();

  if (shots) await page.screenshot({ path: path.join(shots, 'images-details.png') });
  expect(errors).toEqual([]);
});

test('tabs: Images | Archives | Disk | Log, operable with the keyboard', async ({ page }) => {
  await serveReal();
  await openApp(page);
  const tablist = page.getByRole('tablist', { name: 'Node views' });
  await expect(tablist.getByRole('tab')).toHaveText([/Images/, /Archives/, /Disk/, /Log/]);
  const images = page.getByRole('tab', { name: /Images/ });
  await expect(images).toHaveAttribute('aria-selected', 'true');
  await images.focus();
  await page.keyboard.press('ArrowRight');
  const archives = page.getByRole('tab', { name: /Archives/ });
  await expect(archives).toBeFocused();
  await expect(archives).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('tabpanel', { name: /Archives/ })).toBeVisible();
  // The fake data's seven files and k3s's import cache (.cache.json: every file of the dir is a row).
  await expect(page.getByTestId('archive-row')).toHaveCount(8);
  await page.keyboard.press('End');
  await expect(page.getByRole('tab', { name: 'Log' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('log-entry')).toHaveCount(3);
  await page.keyboard.press('ArrowRight'); // wraps
  await expect(images).toBeFocused();
  await expect(page.getByTestId('images-table')).toBeVisible();
  // Only the selected tab is in the tab order.
  await expect(archives).toHaveAttribute('tabindex', '-1');
});

test('log tab: a removal says again what its check warned of; a prune says what it removed', async ({ page }) => {
  const warning = 'Removing it leaves no archive at the top level of the images dir: at its next start RKE2 writes its own image lists there.';
  await serveReal({
    moreAudit: [
      { time: '2025-03-02T09:00:00Z', user: 'tech', node: 'edge-01', action: 'rm-archive', archive: { path: 'runtime.tar', size: 2048, sha256: 'c'.repeat(64) }, warnings: [warning] },
      { time: '2025-03-02T10:00:00Z', user: 'tech', node: 'edge-01', action: 'prune', pruned: { keepVersions: 2, plannedBytes: 3 * 1024 * 1024, freedBytes: 3 * 1024 * 1024, images: [{ imageId: 'sha256:' + 'd'.repeat(64), refs: ['docker.io/library/redis:7.2'], digests: [], bytes: 3 * 1024 * 1024 }] } },
    ],
  });
  await openApp(page);
  await page.getByRole('tab', { name: 'Log' }).click();
  const prune = page.locator('[data-testid=log-entry][data-action=prune]');
  await expect(prune).toContainText('1 image removed, 3 MiB freed (kept the 2 newest versions of every repository in use)');
  await expect(prune.getByTestId('log-pruned-image')).toContainText('redis:7.2');
  await expect(prune.getByTestId('log-pruned-image')).toContainText('1 reference · 3 MiB');
  const removal = page.locator('[data-testid=log-entry][data-action=rm-archive]').filter({ hasText: 'runtime.tar' });
  await expect(removal.getByTestId('log-warning')).toHaveText(warning);
});

test('archives tab: kind, compression, images, imported, cached by k3s, safe to remove, unreadable', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('tab', { name: /Archives/ }).click();
  const arow = (p: string) => page.locator(`[data-testid="archive-row"][data-path="${p}"]`);
  await expect(page.getByTestId('archives-summary')).toContainText('8 files');
  // k3s v1.31.6 has no .cache.json fix: the cached archive is skipped and nothing re-pins it.
  await expect(page.getByTestId('cache-banner')).toContainText('.cache.json: 1 file skipped without a re-pin (pins lost at the next start)');
  await expect(page.getByTestId('cache-banner')).toContainText('although the archive is still there');

  const apps = arow('apps/apps.tar.gz');
  await expect(apps.getByTestId('archive-kind')).toHaveText('Archive');
  await expect(apps.getByTestId('archive-compression')).toHaveText('gzip');
  await expect(apps.getByTestId('cached-badge')).toBeVisible();
  // Which .cache.json rule applies to the file, and why (k3s v1.31.6: no fix).
  await expect(apps.getByTestId('cache-verdict')).toHaveText('.cache.json: k3s skips it (same size as recorded) and pins nothing it skips');
  await expect(apps).toContainText('klipper-helm');
  await expect(apps.getByTestId('archive-imported')).toHaveText('Imported');
  await expect(apps.getByTestId('safe-to-remove')).toHaveText('Not safe to remove');
  // Core's reason quotes the CLI command; the app says what to click instead.
  await expect(apps.getByTestId('removal-reason')).toHaveText(
    'docker.io/rancher/klipper-helm:v0.9.3-build20241008 is pinned by k3s only: make its pins durable first — use Make durable on this row. (and 1 more)',
  );
  await expect(page.getByTestId('archives-table')).not.toContainText('holdfast ');
  await expect(page.getByTestId('archives-table')).not.toContainText('--archive');

  await expect(arow('node-exporter-v1.8.2.tar').getByTestId('safe-to-remove')).toHaveText('Safe to remove');
  await expect(arow('node-exporter-v1.8.2.tar').getByTestId('cached-badge')).toHaveCount(0);
  await expect(arow('prepull.txt').getByTestId('archive-kind')).toHaveText('Pre-pull list');
  await expect(arow('README.md').getByTestId('archive-kind')).toHaveText('Ignored');
  // k3s's own import cache is listed as SFTP lists it on a node, as a file k3s does not import.
  await expect(arow('.cache.json').getByTestId('archive-kind')).toHaveText('Ignored');
  await expect(arow('broken.tar.gz').getByTestId('archive-error')).toContainText('truncated: the gzip stream ends before the end of the archive');
  // Make durable is offered for archives only.
  await expect(arow('prepull.txt').getByRole('button', { name: /Make durable/ })).toHaveCount(0);
  if (shots) {
    await page.screenshot({ path: path.join(shots, 'archives.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(shots, 'archives-dark.png') });
  }
});

test('make one image durable: preview of label changes, then apply, then the refreshed state', async ({ page }) => {
  await serveReal();
  await openApp(page);
  const coredns = row(page, 'coredns');
  await coredns.getByRole('button', { name: /^Make durable/ }).click();

  const dialog = page.getByRole('dialog', { name: /Make docker.io\/rancher\/mirrored-coredns-coredns:1.12.0 durable/ });
  await expect(dialog).toBeVisible();
  await expect(dialog).toHaveAttribute('aria-modal', 'true');
  const change = dialog.getByTestId('plan-change');
  await expect(change).toHaveCount(1);
  await expect(change).toContainText('docker.io/rancher/mirrored-coredns-coredns:1.12.0');
  await expect(change.getByTestId('pin-badge')).toHaveText(['k3s pin', 'Durable']);
  // k3s's label goes; core records who made the pin durable and when.
  await expect(change.getByTestId('label-diff')).toHaveText([/removes io\.cattle\.k3s\.pinned=pinned/, /adds io\.holdfast\.pinned-at=20\d\d-/, /adds io\.holdfast\.pinned-by=./]);
  await expect(change.getByTestId('label-diff').first()).toHaveAttribute('data-kind', 'removed');
  // Planned, not applied.
  expect(callsOf('pins.plan').at(-1)?.args).toEqual({
    node: 'edge-01',
    action: 'pin',
    target: { refs: ['docker.io/rancher/mirrored-coredns-coredns:1.12.0'] },
  });
  expect(callsOf('pins.apply')).toHaveLength(0);
  if (shots) await page.screenshot({ path: path.join(shots, 'pin-preview.png') });

  const listsBefore = callsOf('images.report').length;
  await dialog.getByRole('button', { name: 'Apply 1 change' }).click();
  await expect(dialog.getByTestId('apply-done')).toBeVisible();
  await expect(dialog.getByTestId('plan-summary')).toHaveText('1 reference was changed on edge-01.');
  expect(callsOf('pins.apply')).toHaveLength(1);
  // The table is listed again (once after the apply, and maybe again on the service's live event).
  expect(callsOf('images.report').length).toBeGreaterThan(listsBefore);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  await expect(coredns.getByTestId('pin-badge')).toHaveText('Durable');
  await expect(coredns.getByTestId('fate')).toHaveText('Kept');
  await expect(page.getByTestId('at-risk-banner')).toContainText('2 images will lose their pin');
  await expect(coredns.getByRole('button', { name: /^Release durable pin/ })).toBeVisible();

  // The log shows it, newest first.
  await page.getByRole('tab', { name: 'Log' }).click();
  const first = page.getByTestId('log-entry').first();
  await expect(first).toContainText('Made durable');
  await expect(first.getByTestId('log-change')).toContainText('mirrored-coredns-coredns:1.12.0');
});

test('banner "Make them durable" pins exactly the at-risk references; Esc and Cancel apply nothing', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('button', { name: 'Make them durable' }).click();
  const dialog = page.getByTestId('pin-dialog');
  await expect(dialog.getByTestId('plan-change')).toHaveCount(3);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  expect(callsOf('pins.apply')).toHaveLength(0);

  await page.getByRole('button', { name: 'Make them durable' }).click();
  await expect(dialog.getByTestId('plan-change')).toHaveCount(3);
  // Focus stays inside the modal dialog.
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  }
  await dialog.getByRole('button', { name: 'Apply 3 changes' }).click();
  await expect(dialog.getByTestId('apply-done')).toBeVisible();
  const applied = callsOf('pins.apply')[0]?.args as { action: string; target: { refs: string[] } };
  expect(applied.action).toBe('pin');
  expect([...applied.target.refs].sort()).toEqual([
    'docker.io/rancher/klipper-helm:v0.9.3-build20241008',
    'docker.io/rancher/local-path-provisioner:v0.0.30',
    'docker.io/rancher/mirrored-coredns-coredns:1.12.0',
  ]);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByTestId('at-risk-banner')).toHaveCount(0);
  await expect(page.getByTestId('filter-atRisk')).toContainText('0');
});

test('make all k3s pins durable sends { allK3s: true }; release a durable pin warns and is cancellable', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('button', { name: 'Make all k3s pins durable' }).click();
  const dialog = page.getByRole('dialog', { name: 'Make all k3s pins durable' });
  await expect(dialog.getByTestId('plan-change')).toHaveCount(5);
  expect(callsOf('pins.plan').at(-1)?.args).toEqual({ node: 'edge-01', action: 'pin', target: { allK3s: true } });
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await row(page, 'nginx:1.27.3').getByRole('button', { name: /^Release durable pin/ }).click();
  const release = page.getByRole('dialog', { name: /Release the durable pin/ });
  await expect(release.getByTestId('plan-change')).toHaveCount(2);
  await expect(release.getByTestId('label-diff').first()).toContainText('io.cri-containerd.pinned');
  await expect(release).toContainText('kubelet image garbage collection may delete');
  await release.getByRole('button', { name: 'Cancel' }).click();
  await expect(release).toHaveCount(0);
  expect(callsOf('pins.apply')).toHaveLength(0);
});

test('an apply error from the envelope is shown with message and hint', async ({ page }) => {
  // edge-01's containerd answers the plan's reads, then refuses the label update.
  await serveReal({ failApply: true });
  await openApp(page);
  await row(page, 'coredns').getByRole('button', { name: /^Make durable/ }).click();
  const dialog = page.getByTestId('pin-dialog');
  await dialog.getByRole('button', { name: 'Apply 1 change' }).click();
  const err = dialog.getByRole('alert');
  await expect(err).toContainText('containerd is not answering on 10.20.0.11');
  await expect(err).toContainText('Check that k3s (or containerd) is running on the node');
  await expect(err).toContainText('CONTAINERD_UNAVAILABLE');
  // Still in preview: the user can retry or cancel; nothing changed on the node.
  await expect(dialog.getByRole('button', { name: 'Apply 1 change' })).toBeEnabled();
  expect(service!.node('edge-01').containerd.records.get('docker.io/rancher/mirrored-coredns-coredns:1.12.0')!.labels['io.cattle.k3s.pinned']).toBe('pinned');
});

test('remove archive: refused with problems, then forced only with the typed path', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('tab', { name: /Archives/ }).click();
  await page.getByRole('button', { name: 'Remove safely: apps/apps.tar.gz' }).click();

  const dialog = page.getByRole('dialog', { name: 'Remove archive safely' });
  await expect(dialog.getByTestId('removal-blocked')).toBeVisible();
  await expect(dialog.getByTestId('removal-problems').getByRole('listitem')).toHaveCount(2);
  await expect(dialog.getByTestId('removal-problems')).toContainText('klipper-helm');
  await expect(dialog.getByTestId('removal-problems').getByRole('listitem').first()).toHaveText(
    'docker.io/rancher/klipper-helm:v0.9.3-build20241008 is pinned by k3s only: make its pins durable first — the button below does that.',
  );
  await expect(dialog.getByTestId('removal-problems')).not.toContainText('holdfast ');
  await expect(dialog.getByRole('button', { name: 'Make its pins durable first' })).toBeVisible();
  await expect(dialog.getByTestId('removal-image')).toHaveCount(2);
  await expect(dialog.getByTestId('removal-image').first()).toContainText('Present');
  await expect(dialog.getByTestId('removal-image').first()).toContainText('Not durable');
  await expect(dialog.getByRole('button', { name: 'Remove archive' })).toBeDisabled();

  await dialog.getByRole('button', { name: 'Force remove…' }).click();
  const force = dialog.getByTestId('force-section');
  await expect(force).toContainText('loses its pin at the next k3s start');
  const confirm = force.getByLabel(/Type the archive's path/);
  const forceBtn = dialog.getByRole('button', { name: 'Force remove' });
  await expect(forceBtn).toBeDisabled();
  await confirm.fill('apps.tar.gz');
  await expect(forceBtn).toBeDisabled();
  await confirm.fill('apps/apps.tar.gz');
  await expect(forceBtn).toBeEnabled();
  if (shots) await page.screenshot({ path: path.join(shots, 'remove-dialog.png') });
  expect(callsOf('archives.remove')).toHaveLength(0);

  await forceBtn.click();
  await expect(dialog.getByTestId('remove-done')).toContainText('Archive removed (forced).');
  await expect(dialog.getByTestId('removed-sha256')).toHaveText(/^[0-9a-f]{64}$/);
  expect(callsOf('archives.remove')).toEqual([
    { channel: 'archives.remove', args: { node: 'edge-01', path: 'apps/apps.tar.gz', force: true, confirm: 'apps/apps.tar.gz' } },
  ]);
  await dialog.getByRole('button', { name: 'Close' }).click();

  await expect(page.locator('[data-testid="archive-row"][data-path="apps/apps.tar.gz"]')).toHaveCount(0);
  await expect(page.getByTestId('archive-row')).toHaveCount(7);
  await page.getByRole('tab', { name: 'Log' }).click();
  const first = page.getByTestId('log-entry').first();
  await expect(first).toContainText('Removed archive');
  await expect(first.getByTestId('log-forced')).toBeVisible();
  await expect(first.getByTestId('log-sha256')).toHaveText(/^[0-9a-f]{64}$/);
  await page.getByRole('tab', { name: /Images/ }).click();
  // Forced: klipper-helm's k3s pin now has no archive to come back from.
  await expect(row(page, 'klipper-helm').getByTestId('fate')).toHaveAttribute('data-fate', 'lose');
  await expect(row(page, 'klipper-helm').getByTestId('fate')).toHaveAttribute('title', /klipper-helm:v0\.9\.3-build20241008: k3s strips this pin at start and no readable archive brings it back/);
});

test('remove archive safely: make its pins durable first, then the removal is allowed', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByRole('tab', { name: /Archives/ }).click();
  const airgap = 'k3s-airgap-images-amd64.tar.zst';
  await page.getByRole('button', { name: `Remove safely: ${airgap}` }).click();
  await page.getByTestId('remove-dialog').getByRole('button', { name: 'Make its pins durable first' }).click();

  const pin = page.getByRole('dialog', { name: 'Make the archive’s pins durable' });
  await expect(pin.getByTestId('plan-change')).toHaveCount(2);
  expect(callsOf('pins.plan').at(-1)?.args).toEqual({ node: 'edge-01', action: 'pin', target: { archive: airgap } });
  await pin.getByRole('button', { name: 'Apply 2 changes' }).click();
  await expect(pin.getByTestId('apply-done')).toBeVisible();
  await pin.getByRole('button', { name: 'Close' }).click();

  const arow = page.locator(`[data-testid="archive-row"][data-path="${airgap}"]`);
  await expect(arow.getByTestId('safe-to-remove')).toHaveText('Safe to remove');
  await page.getByRole('button', { name: `Remove safely: ${airgap}` }).click();
  const dialog = page.getByTestId('remove-dialog');
  await expect(dialog.getByTestId('removal-allowed')).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Force remove…' })).toHaveCount(0);
  await dialog.getByRole('button', { name: 'Remove archive' }).click();
  await expect(dialog.getByTestId('remove-done')).toContainText('Archive removed.');
  expect(callsOf('archives.remove').at(-1)?.args).toEqual({ node: 'edge-01', path: airgap });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(arow).toHaveCount(0);
  await page.getByRole('tab', { name: /Images/ }).click();
  await expect(row(page, 'mirrored-pause:3.6').getByTestId('pin-badge')).toHaveText('Durable');
  await expect(row(page, 'mirrored-pause:3.6').getByTestId('fate')).toHaveText('Kept');
});

// ---------------------------------------------------------------------------------------------
// Upload archives and guided air-gap import: the wizard, the jobs panel, the desktop bridge.

writeBundles();
const MIB = 1024 * 1024;
const TELEMETRY = bundle('telemetry-2.5.tar.gz');
/** A local bundle's size as the app writes it. */
const sizeOf = (name: string) => formatBytes(statSync(bundle(name)).size);
const TELEMETRY_SIZE = sizeOf('telemetry-2.5.tar.gz');
const CRI_PINNED = 'io.cri-containerd.pinned';
const K3S_PINNED = 'io.cattle.k3s.pinned';
const wizard = (page: Page) => page.getByTestId('import-wizard');
const reviewCard = (page: Page, name: string) => page.getByTestId('review-archive').filter({ hasText: name });

async function addPath(page: Page, p: string) {
  const field = wizard(page).getByLabel('Archive path');
  await field.fill(p);
  await field.press('Enter');
}

/** Wizard to the "run" step for one archive and both nodes, options left on. */
async function startTelemetryImport(page: Page) {
  await page.getByRole('button', { name: 'Import archives' }).click();
  await addPath(page, TELEMETRY);
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  await expect(reviewCard(page, 'telemetry-2.5.tar.gz')).toHaveAttribute('data-state', 'ok');
  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  await wizard(page).getByLabel(/Select all/).check();
  await wizard(page).getByRole('button', { name: 'Import 1 archive to 2 nodes' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'run');
}

test('import wizard (browser): typed paths, review with refused archives, per-node progress, summary, run again', async ({ page }) => {
  test.setTimeout(150_000);
  // 12 MiB over a 1 MiB/s link: the upload's live figures show for about 12 s, and are asserted
  // then (at 3 MiB/s, 4 s, a loaded machine once missed them: two CI runs at once on 2 cores).
  await serveReal({ uploadBytesPerSec: 1 * MIB });
  const errors = await openApp(page);
  await page.getByRole('button', { name: 'Import archives' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'choose');
  await expect(page.getByRole('heading', { level: 1, name: 'Import archives' })).toBeVisible();

  // The browser has no file dialog and a dropped File has no path: say so, offer the path field.
  await expect(wizard(page).getByTestId('browser-note')).toContainText('no file dialog');
  await expect(wizard(page).getByRole('button', { name: /Choose files/ })).toHaveCount(0);
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['x'], 'dropped.tar.gz'));
    return d;
  });
  await wizard(page).getByRole('heading', { name: 'Choose the archives to import' }).dispatchEvent('drop', { dataTransfer: dt });
  await expect(wizard(page).getByTestId('drop-note')).toContainText('does not tell Holdfast where a dropped file is');
  await expect(wizard(page).getByLabel('Archive path')).toBeFocused();

  await addPath(page, 'bundles/relative.tar');
  await expect(wizard(page).getByRole('alert')).toContainText('Type the full path');
  await addPath(page, TELEMETRY);
  await addPath(page, bundle('broken.tar.gz'));
  await addPath(page, bundle('notes.tar.xz'));
  await expect(wizard(page).getByTestId('chosen-archive')).toHaveCount(3);
  await expect(wizard(page).getByLabel('Archive path')).toHaveValue('');
  await expect(wizard(page).getByTestId('chosen-archive').first()).toContainText('docker · gzip');
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-1-choose.png') });

  // Review: format, compression, size, SHA-256, images with platforms; refused ones red and excluded.
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  const tel = reviewCard(page, 'telemetry-2.5.tar.gz');
  await expect(tel).toHaveAttribute('data-state', 'ok');
  await expect(tel.getByTestId('review-format')).toHaveText('docker save');
  await expect(tel.getByTestId('review-compression')).toHaveText('gzip');
  await expect(tel.getByTestId('review-size')).toContainText(TELEMETRY_SIZE);
  await expect(tel.getByTestId('review-sha256')).toHaveText(/^[0-9a-f]{16}…$/);
  await expect(tel.getByTestId('review-sha256')).toHaveAttribute('data-full', /^[0-9a-f]{64}$/);
  await expect(tel.getByTestId('review-image')).toHaveCount(2);
  await expect(tel.getByTestId('review-image').first()).toContainText('registry.site.lan/acme/telemetry-agent:2.5.0');
  // docker save holds one platform per image: the node's.
  await expect(tel.getByTestId('review-image').first()).toContainText('linux/amd64');
  await expect(tel.getByTestId('review-sha256')).toHaveAttribute('data-full', createHash('sha256').update(readFileSync(TELEMETRY)).digest('hex'));
  const broken = reviewCard(page, 'broken.tar.gz');
  await expect(broken).toHaveAttribute('data-state', 'refused');
  await expect(broken.getByTestId('refused-reason')).toContainText('truncated: the gzip stream ends before the end of the archive');
  await expect(broken.getByTestId('excluded')).toBeVisible();
  await expect(reviewCard(page, 'notes.tar.xz').getByTestId('refused-reason')).toContainText('does not end in a suffix k3s/RKE2 imports');
  await expect(wizard(page).getByTestId('review-summary')).toHaveText('1 to import, 2 excluded');
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-2-review.png'), fullPage: true });

  // Nodes: every node that can take the import is ticked (edge-02's key is not trusted yet: not
  // ticked); status shown; options default on.
  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  await expect(wizard(page).getByTestId('pick-node-edge-01').getByRole('checkbox')).toBeChecked();
  await expect(wizard(page).getByTestId('pick-node-edge-02').getByRole('checkbox')).not.toBeChecked();
  await expect(wizard(page).getByTestId('pick-node-edge-02')).toContainText('Host key not trusted yet');
  await wizard(page).getByLabel(/Select all/).check();
  await expect(wizard(page).getByTestId('pick-node-edge-02').getByRole('checkbox')).toBeChecked();
  const pinBox = wizard(page).getByRole('checkbox', { name: /Make pins durable/ });
  const removeBox = wizard(page).getByRole('checkbox', { name: /Remove the archive/ });
  await expect(pinBox).toBeChecked();
  await expect(removeBox).toBeChecked();
  await pinBox.uncheck();
  await expect(removeBox).toBeDisabled();
  await expect(removeBox).not.toBeChecked();
  await expect(wizard(page)).toContainText('Needs durable pins');
  await pinBox.check();
  await expect(removeBox).toBeEnabled();
  await expect(removeBox).toBeChecked();
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-3-nodes.png'), fullPage: true });
  await wizard(page).getByRole('button', { name: 'Import 1 archive to 2 nodes' }).click();
  // The click returns before the request reaches the service: wait for the call, then check it.
  const firstRun = { nodes: ['edge-01', 'edge-02'], path: TELEMETRY, pin: true, removeArchive: true };
  await expect.poll(() => callsOf('jobs.startImport').map((c) => c.args)).toEqual([firstRun]);

  // Run: one job, a row per node with phase, bytes, rate and ETA while uploading.
  await expect(wizard(page)).toHaveAttribute('data-step', 'run');
  const job = wizard(page).getByTestId('job');
  await expect(job).toHaveCount(1);
  await expect(job.getByTestId('job-node')).toHaveCount(2);
  const uploading = job.locator('[data-testid="job-node"][data-phase="uploading"]').first();
  await expect(uploading.getByTestId('upload-stats')).toContainText(new RegExp(`(KiB|MiB) of ${TELEMETRY_SIZE.replace('.', '\\.')} · .+/s · .+ left`));
  await expect(uploading.getByRole('progressbar')).toBeVisible();
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-4-run.png'), fullPage: true });

  // Summary: edge-01 uploaded, imported by its k3s, pinned and cleaned up; edge-02 refused to
  // connect, its host key not trusted yet — with what to do.
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary', { timeout: 60_000 });
  const ok = wizard(page).locator('[data-testid="summary-node"][data-node="edge-01"]');
  const bad = wizard(page).locator('[data-testid="summary-node"][data-node="edge-02"]');
  await expect(ok).toHaveAttribute('data-state', 'succeeded');
  await expect(ok.getByTestId('summary-message')).toContainText('uploaded and imported');
  await expect(bad).toHaveAttribute('data-state', 'failed');
  await expect(bad.getByTestId('summary-message')).toContainText('presented a host key that is not known yet');
  await expect(bad).toContainText('Compare the fingerprint with the node before trusting it.');
  await expect(wizard(page).getByTestId('summary-banner')).toContainText('1 of 2 imports succeeded');
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-5-summary.png'), fullPage: true });
  // On edge-01 itself: both images durable (CRI label, k3s's label gone), the archive removed.
  const edge1 = service!.node('edge-01');
  for (const name of ['registry.site.lan/acme/telemetry-agent:2.5.0', 'registry.site.lan/acme/telemetry-sidecar:1.3']) {
    expect(edge1.containerd.records.get(name)?.labels[CRI_PINNED]).toBe('pinned');
    expect(edge1.containerd.records.get(name)?.labels[K3S_PINNED]).toBeUndefined();
  }
  expect(edge1.k3sImported).toEqual(['telemetry-2.5.tar.gz']);
  expect([...edge1.files.files.keys()].filter((f) => f.includes('telemetry'))).toEqual([]);

  // Trust edge-02's key from its node view, back to the wizard, run again on the failed node only:
  // the import is idempotent; this time it succeeds.
  await page.getByTestId('node-item-edge-02').click();
  await page.getByRole('button', { name: 'Trust this host' }).click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  await page.getByRole('button', { name: 'Import archives' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary');
  await wizard(page).getByRole('button', { name: 'Run again on edge-02' }).click();
  await expect.poll(() => callsOf('jobs.startImport').map((c) => c.args)).toEqual([firstRun, { nodes: ['edge-02'], path: TELEMETRY, pin: true, removeArchive: true }]);
  await expect(wizard(page).getByTestId('summary-banner')).toContainText('All 1 import succeeded', { timeout: 60_000 });
  expect(service!.node('edge-02').containerd.records.get('registry.site.lan/acme/telemetry-agent:2.5.0')?.labels[CRI_PINNED]).toBe('pinned');

  // Back from the wizard to a node's images: the imported images are there, durable.
  await wizard(page).getByRole('button', { name: "Open edge-02's images" }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'edge-02' })).toBeVisible();
  await expect(row(page, 'telemetry-agent:2.5.0').getByTestId('pin-badge')).toHaveText('Durable');
  expect(errors).toEqual([]);
});

test('jobs panel: sidebar progress, survives navigating to a node and back and a reload; views refresh when a job ends', async ({ page }) => {
  test.setTimeout(90_000);
  // 12 MiB at 1 MiB/s: the job is still running when a loaded machine gets to its Cancel button
  await serveReal({ uploadBytesPerSec: 1 * MIB });
  const errors = await openApp(page);
  await expect(page.getByTestId('jobs-indicator')).toContainText('No jobs');
  await expect(row(page, 'telemetry-agent:2.5.0')).toHaveCount(0);
  await startTelemetryImport(page);

  const indicator = page.getByTestId('jobs-indicator');
  await expect(indicator).toContainText('1 job running');
  await expect(indicator.getByRole('progressbar')).toBeVisible();

  // Navigate to a node: the job keeps running, the indicator stays.
  await page.getByTestId('node-item-edge-01').click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  await indicator.click();
  const panel = page.getByTestId('jobs-panel');
  await expect(panel.getByTestId('job')).toHaveCount(1);
  await expect(panel.getByTestId('job-node')).toHaveCount(2);
  await expect(panel.getByTestId('job').getByRole('button', { name: /^Cancel/ })).toBeVisible();
  if (shots) await page.screenshot({ path: path.join(shots, 'jobs-panel-running.png') });
  await panel.getByRole('button', { name: 'Close' }).click();

  // Back to the wizard: still on the run (or summary) step of the same job.
  await page.getByRole('button', { name: 'Import archives' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', /run|summary/);
  await expect(wizard(page).getByTestId('job').or(wizard(page).getByTestId('summary-job'))).toHaveCount(1);
  await page.getByTestId('node-item-edge-01').click();

  // The images view of edge-01 refreshes by itself when the job ends.
  await expect(row(page, 'telemetry-agent:2.5.0').getByTestId('pin-badge')).toHaveText('Durable', { timeout: 30_000 });
  await expect(indicator).toContainText('1 job finished');
  await expect(indicator).toContainText('1 failed');

  // A reload: the jobs are owned by the server (main), not the page.
  await page.reload();
  // Two nodes: a fresh page lands on the fleet overview, which shows the imported image's pin.
  await expect(page.getByTestId('fleet-overview')).toBeVisible();
  await expect(page.getByTestId('fleet-row-edge-01').getByTestId('fleet-durable')).not.toHaveText('0');
  await expect(indicator).toContainText('1 job finished');
  await indicator.click();
  await expect(panel.getByTestId('job')).toHaveAttribute('data-state', 'failed');
  await expect(panel.locator('[data-testid="job-node"][data-node="edge-02"]').getByTestId('job-node-error')).toContainText('HOST_KEY_UNKNOWN');
  if (shots) await page.screenshot({ path: path.join(shots, 'jobs-panel-finished.png') });
  await panel.getByRole('button', { name: "Open edge-02's images" }).click();
  await expect(panel).toBeHidden();
  await expect(page.getByRole('heading', { level: 1, name: 'edge-02' })).toBeVisible();
  expect(errors).toEqual([]);
});

test('jobs panel: Cancel stops a running import', async ({ page }) => {
  await serveReal({ uploadBytesPerSec: 1 * MIB });
  await openApp(page);
  await startTelemetryImport(page);
  await page.getByTestId('jobs-indicator').click();
  const panel = page.getByTestId('jobs-panel');
  await panel.getByRole('button', { name: /^Cancel/ }).click();
  await expect(panel.getByTestId('job')).toHaveAttribute('data-state', 'cancelled');
  await expect(panel.getByTestId('job-state')).toHaveText('Cancelled');
  expect(callsOf('jobs.cancel')).toHaveLength(1);
  await panel.getByRole('button', { name: 'Close' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary');
  await expect(wizard(page).getByTestId('summary-node')).toHaveCount(2);
  await expect(wizard(page).getByRole('button', { name: 'Run again on 2 failed nodes' })).toBeVisible();
  // Nothing reached the images dir under its name, so k3s imported nothing (the partial upload is kept to resume).
  const edge1 = service!.node('edge-01');
  expect(edge1.files.files.has('telemetry-2.5.tar.gz')).toBe(false);
  expect(edge1.containerd.records.has('registry.site.lan/acme/telemetry-agent:2.5.0')).toBe(false);
});

/** Stand in for the Electron preload: the contract over the test server, plus pathForFile. */
async function desktopBridge(page: Page) {
  const token = new URL(server.url).searchParams.get('token');
  await page.addInitScript(
    ({ token, ops, dir }) => {
      const api: Record<string, unknown> = {};
      for (const [op, channel] of Object.entries(ops)) {
        api[op] = (args: unknown) =>
          fetch(`/api/${channel}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-holdfast-token': token ?? '' },
            body: JSON.stringify(args ?? {}),
          }).then((r) => r.json());
      }
      api['pathForFile'] = (f: File) => `${dir}/${f.name}`;
      (window as unknown as { holdfast: unknown }).holdfast = Object.freeze(api);
    },
    { token, ops: operations, dir: BUNDLES },
  );
}

test('desktop: file dialog and drag and drop add paths (webUtils path through the preload)', async ({ page }) => {
  await serveReal({ dialogPaths: [TELEMETRY, bundle('k3s-airgap-images-arm64.tar.zst')] });
  await desktopBridge(page);
  await openApp(page);
  await page.getByRole('button', { name: 'Import archives' }).click();
  await expect(wizard(page).getByTestId('browser-note')).toHaveCount(0);
  await wizard(page).getByRole('button', { name: 'Choose files…' }).click();
  await expect(wizard(page).getByTestId('chosen-archive')).toHaveCount(2);
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['x'], 'site-apps-2.4.tar.gz'));
    return d;
  });
  await wizard(page).getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: dt });
  await expect(wizard(page).getByTestId('chosen-archive')).toHaveCount(3);
  await expect(wizard(page).locator(`[data-testid="chosen-archive"][data-path="${bundle('site-apps-2.4.tar.gz')}"]`)).toContainText('docker · gzip');
  if (shots) await page.screenshot({ path: path.join(shots, 'wizard-1-choose-desktop.png') });
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  await expect(reviewCard(page, 'k3s-airgap-images-arm64.tar.zst').getByTestId('review-format')).toHaveText('OCI layout');
  await expect(reviewCard(page, 'k3s-airgap-images-arm64.tar.zst').getByTestId('review-image')).toHaveCount(3);
});

test('desktop without a dialog: pickArchives fails with INVALID_INPUT and the path field is offered', async ({ page }) => {
  await serveReal();
  await desktopBridge(page);
  await openApp(page);
  await page.getByRole('button', { name: 'Import archives' }).click();
  await wizard(page).getByRole('button', { name: 'Choose files…' }).click();
  const err = wizard(page).getByTestId('dialog-error');
  await expect(err).toContainText('there is no file dialog');
  await expect(err).toContainText('INVALID_INPUT');
  await expect(wizard(page).getByLabel('Archive path')).toBeFocused();
  await addPath(page, TELEMETRY);
  await expect(wizard(page).getByTestId('chosen-archive')).toHaveCount(1);
});

test('pins lost behind Holdfast’s back and a node that cannot pin: banners, fleet markers, re-pin, live alert', async ({ page }) => {
  await serveReal({ lostPins: true, edge1Containerd: '1.6.20~ds1' });
  await page.goto(server.url);

  // The fleet overview marks edge-01: pins gone, and a containerd without CRI pinning.
  const fleetRow = page.getByTestId('fleet-row-edge-01');
  await expect(fleetRow.getByTestId('fleet-lost')).toHaveText('2 durable pins gone');
  await expect(fleetRow.getByTestId('fleet-capability')).toContainText('no CRI pinning');
  await expect(page.getByTestId('fleet-lost-banner')).toContainText('2 durable pins Holdfast made are gone on 1 node');
  await expect(page.getByTestId('fleet-row-edge-02').getByTestId('fleet-lost')).toHaveCount(0);
  if (shots) await page.screenshot({ path: path.join(shots, 'lost-pins-fleet.png') });

  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));

  // Node banner: the capability warning, worded as the shared rule words it.
  await expect(page.getByTestId('capability-banner')).toContainText(
    "containerd 1.6.20~ds1 has no CRI image pinning (needs 1.7.3+; k3s bundles 1.7/2.x) — kubelet's image GC may delete any image",
  );
  // Which pins went, when Holdfast made them and who, the likely causes, the remedy.
  const banner = page.getByTestId('lost-pins-banner');
  await expect(banner).toContainText('2 durable pins Holdfast made are gone');
  const items = banner.getByTestId('lost-pin');
  await expect(items).toHaveCount(2);
  const deleted = items.filter({ hasText: DELETED_REF });
  await expect(deleted).toHaveAttribute('data-kind', 'image-deleted');
  await expect(deleted.getByTestId('lost-pin-when')).toContainText('Made durable by ops on 2025-02-2');
  await expect(deleted.getByTestId('lost-pin-remedy')).toContainText('import it again');
  // The app says what to do in words; command lines are the terminal's (#47: remedies as data).
  await expect(deleted.getByTestId('lost-pin-remedy')).toContainText('with durable pins');
  await expect(deleted).not.toContainText('holdfast ');
  const nginx = items.filter({ hasText: 'nginx:1.27.3' });
  await expect(nginx).toHaveAttribute('data-kind', 'label-removed');
  // containerd 1.6 has no CRI pinning: no other reference keeps the image (shared/protection)
  await expect(nginx).toContainText('nothing pins the image now');
  await expect(nginx.getByTestId('lost-pin-when')).toContainText('Made durable by tech');
  await nginx.getByText('Likely causes').click();
  await expect(nginx).toContainText('ctr -n k8s.io images label docker.io/library/nginx:1.27.3 io.cri-containerd.pinned=');
  if (shots) await page.screenshot({ path: path.join(shots, 'lost-pins-node.png') });

  // One click re-pins; the dialog says kubelet on this node will not honour it.
  await nginx.getByTestId('lost-pin-repin').click();
  const dialog = page.getByTestId('pin-dialog');
  await expect(dialog.getByTestId('plan-change')).toHaveCount(1);
  await expect(dialog.getByTestId('pin-not-honoured')).toContainText('kubelet on edge-01 will not honour this pin: containerd 1.6.20~ds1 has no CRI image pinning');
  await dialog.getByTestId('apply-pins').click();
  await expect(dialog.getByTestId('apply-done')).toBeVisible();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(banner.getByTestId('lost-pin')).toHaveCount(1);
  await expect(banner).toContainText('1 durable pin Holdfast made is gone');
  expect(callsOf('pins.apply').at(-1)?.args).toEqual({ node: 'edge-01', action: 'pin', target: { refs: ['docker.io/library/nginx:1.27.3'] } });
  expect(service!.node('edge-01').containerd.records.get('docker.io/library/nginx:1.27.3')!.labels['io.cri-containerd.pinned']).toBe('pinned');

  // Someone takes the pin off again behind Holdfast's back: containerd's event reaches the live
  // hub, which reports the new loss — an alert at once, on whatever view is open.
  await page.getByTestId('tab-archives').click();
  await service!.node('edge-01').containerd.updateImageLabels('docker.io/library/nginx:1.27.3', { 'io.cri-containerd.pinned': null });
  const alert = page.getByTestId('pin-alert');
  await expect(alert).toContainText('A durable pin just disappeared on edge-01');
  await expect(alert).toContainText('docker.io/library/nginx:1.27.3 — pin label removed (made durable by');
  if (shots) await page.screenshot({ path: path.join(shots, 'lost-pins-alert.png') });
  await alert.getByRole('button', { name: 'Dismiss' }).click();
  await expect(alert).toHaveCount(0);
});

// ---- Layout at the README's 1280×800, and text meant for the app (issue #16 item 5) ----

/** Elements matching `selector` that are cut: wider than their own box, or sticking out of their table cell's content box. */
async function clipped(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((els) =>
    els.flatMap((el) => {
      const e = el as HTMLElement;
      const out: string[] = [];
      if (e.scrollWidth > e.clientWidth) out.push(`${e.textContent}: ${e.scrollWidth} > ${e.clientWidth}`);
      const td = e.closest('td');
      if (td) {
        const r = e.getBoundingClientRect();
        const c = td.getBoundingClientRect();
        const cs = getComputedStyle(td);
        const left = c.left + parseFloat(cs.paddingLeft) - 0.5;
        const right = c.right - parseFloat(cs.paddingRight) + 0.5;
        if (r.left < left || r.right > right) out.push(`${e.textContent}: ${r.left.toFixed(1)}–${r.right.toFixed(1)} outside ${left.toFixed(1)}–${right.toFixed(1)}`);
      }
      return out;
    }),
  );
}

/** Nothing scrolls sideways: the page, and every table wrapper in it. */
async function sidewaysScroll(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const se = document.scrollingElement!;
    if (se.scrollWidth > se.clientWidth) out.push(`page: ${se.scrollWidth} > ${se.clientWidth}`);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.table-wrap, main'))) {
      if (el.scrollWidth > el.clientWidth) out.push(`${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return out;
  });
}

test('at 1280×800 nothing scrolls sideways, the fleet versions show whole, and no badge, row button or image name is cut', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await serveReal({ lostPins: true });
  await page.goto(server.url);
  const row = page.getByTestId('fleet-row-edge-01');
  await expect(row.getByTestId('fleet-atRisk')).toHaveText('3');
  expect(await sidewaysScroll(page)).toEqual([]);
  const versions = row.locator('.fleet-versions');
  await expect(versions).toContainText('containerd v2.0.4-k3s2');
  expect(await clipped(page, '.fleet-versions span')).toEqual([]);

  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));
  // nginx's tag lost its pin while its digest reference kept it: the widest badge, "mixed pins".
  await expect(page.getByTestId('pin-mixed')).toHaveCount(1);
  expect(await sidewaysScroll(page)).toEqual([]);
  expect(await clipped(page, '[data-testid=pin-badge], [data-testid=pin-mixed], [data-testid=fate], [data-testid=row-action]')).toEqual([]);
  await expect(page.getByTestId('fate')).not.toHaveCount(0);
  // A long reference gives way in its middle (issue #33): its path first, cut at its end so the
  // registry's start stays; then its name; never its tag. Here the names of coredns and
  // local-path-provisioner show whole (docker.io/rancher/mirrored-coredns-coredns:1.12.0 is wider
  // than the column).
  const names = page.locator('[data-testid=image-ref].ref-tag .ref-base');
  await expect(names.filter({ hasText: /^mirrored-coredns-coredns$/ })).toHaveCount(1);
  await expect(names.filter({ hasText: /^local-path-provisioner$/ })).toHaveCount(1);
  expect(await clipped(page, '[data-testid=image-ref].ref-tag .ref-suffix')).toEqual([]);
  for (const name of ['mirrored-coredns-coredns', 'local-path-provisioner']) {
    expect(await clipped(page, `[data-testid=image-ref].ref-tag:has(.ref-base:text-is("${name}")) .ref-base`)).toEqual([]);
  }
  const paths = await page.locator('[data-testid=image-ref].ref-tag .ref-path').evaluateAll((els) =>
    els.map((e) => ({ text: e.textContent, chars: Math.round(e.clientWidth / (e.scrollWidth / (e.textContent?.length || 1))), left: e.scrollLeft })),
  );
  for (const p of paths) expect(p.chars >= 4 && p.left === 0, `${p.text}: ${p.chars} characters of it show from its start`).toBe(true);

  await page.getByTestId('tab-archives').click();
  await expect(page.getByTestId('archive-row').first()).toBeVisible();
  expect(await sidewaysScroll(page)).toEqual([]);
  expect(await clipped(page, '[data-testid=safe-to-remove], [data-testid=archive-kind], [data-testid=cached-badge]')).toEqual([]);
});

test('a node whose k3s/RKE2 did not answer says so and what to do, not a bare "unknown"', async ({ page }) => {
  await serveReal({ edge1DistroUnknown: true });
  await page.goto(server.url);
  await expect(page.getByTestId('fleet-row-edge-01').getByTestId('fleet-release')).toHaveText('k3s/RKE2 not detected (no k3s or rke2 binary answered --version)');
  await openApp(page);
  const distro = page.getByTestId('node-distro');
  await expect(distro.locator('dt')).toHaveText('k3s/RKE2');
  await expect(distro.locator('dd')).toHaveText('not detectedno k3s or rke2 binary answered --version');
  // The flag stays whole on one line (a browser may break the line after its hyphens).
  const flag = distro.locator('.versions-note .nowrap');
  await expect(flag).toHaveText('--version');
  expect(await flag.evaluate((e) => e.getClientRects().length)).toBe(1);
  await expect(distro.locator('dd')).toHaveAttribute('title', /make the binary reachable for the SSH user, then reconnect/);
  await expect(page.getByTestId('node-versions')).not.toContainText('unknown');
});

test('the import review shows what k3s will skip in an archive (a one-platform ctr export), and says "uncompressed"', async ({ page }) => {
  await serveReal();
  await openApp(page);
  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  await wizard.getByLabel('Archive path').fill(bundle('nginx-ctr-export.tar'));
  await wizard.getByLabel('Archive path').press('Enter');
  await wizard.getByLabel('Archive path').fill(TELEMETRY);
  await wizard.getByLabel('Archive path').press('Enter');
  await expect(wizard).toContainText(`oci · uncompressed · ${sizeOf('nginx-ctr-export.tar')} · 1 image · 1 warning`);
  await expect(wizard).toContainText(`docker · gzip · ${TELEMETRY_SIZE} · 2 images`);
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  const card = wizard.getByTestId('review-archive').filter({ hasText: 'nginx-ctr-export.tar' });
  await expect(card).toHaveAttribute('data-state', 'ok');
  await expect(card.getByTestId('review-compression')).toHaveText('uncompressed');
  await expect(card.getByTestId('review-warnings')).toContainText('k3s imports it, with one catch:');
  await expect(card.getByTestId('review-warning')).toHaveCount(1);
  await expect(card.getByTestId('review-warning')).toContainText('linux/arm64 is listed but its blobs are not in the archive');
  await expect(card.getByTestId('review-warning').locator('code')).toHaveText('ctr images export');
  // An archive without findings has no warning box.
  await expect(wizard.getByTestId('review-archive').filter({ hasText: 'telemetry-2.5.tar.gz' }).getByTestId('review-warnings')).toHaveCount(0);
});
