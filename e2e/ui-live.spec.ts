// The fleet overview and live events over the real service and fake nodes: the landing view,
// counts by pin state and at-risk pins, keyboard use, both colour schemes, and live pushes over
// GET /api/events — a node's images changing (containerd events relayed by the real live hub),
// a dropped connection with its countdown and its recovery, job progress without the 500 ms poll.
import path from 'node:path';
import type { Handlers } from '../src/shared/handlers';
import { expect, test, type Page } from './fixtures';
import { EDGE1_IMAGES } from '../test/doubles/catalog';
import { bundle } from '../test/doubles/bundles';
import { fakeService, type Scenario } from '../test/doubles/service';

const shots = process.env['HOLDFAST_SCREENSHOTS'];

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;

async function openWith(holdfast: { open(o: { handlers: Handlers }): Promise<Page> }, handlers: Handlers) {
  const page = await holdfast.open({ handlers });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await expect(page.getByTestId('fleet-overview')).toBeVisible();
  return { page, errors };
}

async function open(holdfast: { open(o: { handlers: Handlers }): Promise<Page> }, scenario: Scenario = {}) {
  fake = await fakeService(scenario);
  return openWith(holdfast, fake.handlers);
}

test.afterEach(async () => {
  await fake?.dispose();
  fake = undefined;
});

const fleetRow = (page: Page, node: string) => page.getByTestId(`fleet-row-${node}`);

/** Wait until the page's event stream is subscribed (the server has a listener). */
async function eventsConnected() {
  await expect.poll(() => fake!.listeners.size).toBeGreaterThan(0);
}

test('the fleet banner never says no pin is lost while a connected node\'s images are still loading (issue #16)', async ({ holdfast }) => {
  const { page } = await open(holdfast, { holdImages: true });
  await expect(fleetRow(page, 'edge-01').getByTestId('fleet-status')).toHaveText('Connected');
  await expect(page.getByTestId('fleet-risk-loading')).toContainText('Loading the images of 1 connected node');
  await expect(page.getByTestId('fleet-no-risk')).toHaveCount(0);
  fake!.releaseImages();
  // once they are in, edge-01's at-risk images are counted (by image, as kubelet sees them)
  await expect(page.getByTestId('fleet-at-risk')).toContainText('3 images on 1 node will lose their pin');
  await expect(page.getByTestId('fleet-risk-loading')).toHaveCount(0);
  await expect(page.getByTestId('fleet-no-risk')).toHaveCount(0);
});

test('several nodes: lands on the fleet overview with counts by pin state and at-risk pins highlighted', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast);
  const edge1 = fleetRow(page, 'edge-01');
  // edge-01: 8 images — 2 durable, 4 k3s, 2 unpinned; 3 lose their pin at the next start.
  await expect(edge1.getByTestId('fleet-durable')).toHaveText('2');
  await expect(edge1.getByTestId('fleet-distro')).toHaveText('4');
  await expect(edge1.getByTestId('fleet-none')).toHaveText('2');
  await expect(edge1.getByTestId('fleet-atRisk')).toHaveText('3');
  await expect(edge1).toHaveClass(/row-at-risk/);
  await expect(edge1.getByTestId('fleet-status')).toHaveText('Connected');
  // edge-02's host key is unknown: the row says what to do next.
  const edge2 = fleetRow(page, 'edge-02');
  await expect(edge2.getByTestId('fleet-status')).toHaveText('Host key not trusted yet');
  await expect(edge2).toContainText('compare the fingerprint');
  await expect(page.getByTestId('fleet-at-risk')).toContainText('3 images on 1 node will lose their pin');
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  if (shots) {
    await page.screenshot({ path: path.join(shots, 'fleet-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(shots, 'fleet-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
  }

  // Click through to the node.
  await edge1.click();
  await expect(page.getByRole('heading', { level: 1, name: 'edge-01' })).toBeVisible();
  await expect(page.getByTestId('images-table')).toBeVisible();
  // And back.
  await page.getByTestId('open-fleet').click();
  await expect(page.getByTestId('fleet-overview')).toBeVisible();
  expect(errors).toEqual([]);
});

test('keyboard: Tab reaches the node list, arrows move between nodes, Enter opens one; focus is visible', async ({ holdfast }) => {
  // Many steps over the real service: room for a loaded machine (nothing here is timed).
  test.setTimeout(60_000);
  const { page } = await open(holdfast);
  await expect(fleetRow(page, 'edge-01').getByTestId('fleet-durable')).toHaveText('2');
  const first = fleetRow(page, 'edge-01').getByTestId('fleet-open');
  await first.focus();
  await expect(first).toBeFocused();
  // A visible focus indicator (outline) on keyboard focus.
  await page.keyboard.press('ArrowDown');
  const second = fleetRow(page, 'edge-02').getByTestId('fleet-open');
  await expect(second).toBeFocused();
  const outline = await second.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe('none');
  await page.keyboard.press('ArrowUp');
  await expect(first).toBeFocused();
  // Only one row button is in the tab order (roving tabindex).
  await expect(second).toHaveAttribute('tabindex', '-1');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'edge-01' })).toBeVisible();

  // Images table: rows take focus, arrows move, Enter opens the details.
  const rows = page.getByTestId('image-row');
  await rows.first().focus();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('image-details')).toHaveCount(1);
  await page.keyboard.press('End');
  await expect(rows.last()).toBeFocused();

  // Sidebar: arrows move between nodes.
  await page.getByTestId('node-item-edge-01').focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('node-item-edge-02')).toBeFocused();
});

test('live: the fleet overview and the node view update when a node changes, without refresh or polling', async ({ holdfast }) => {
  const { page } = await open(holdfast);
  const edge1 = fleetRow(page, 'edge-01');
  await expect(edge1.getByTestId('fleet-durable')).toHaveText('2');
  await eventsConnected();

  // Something outside the UI (k3s importing an archive) adds a durable image on edge-01.
  const listsBefore = fake!.calls.filter((c) => c.channel === 'images.report').length;
  const cd = fake!.node('edge-01').containerd;
  cd.addImage({ ...EDGE1_IMAGES[0]!, name: 'registry.site.lan/acme/new:1.0', imageId: 'sha256:' + 'ab'.repeat(32) });
  for (let i = 0; i < 5; i++) cd.publish('/images/create', 'registry.site.lan/acme/new:1.0');
  await expect(edge1.getByTestId('fleet-durable')).toHaveText('3');
  // A burst of five events is one reload (debounced).
  await page.waitForTimeout(600);
  expect(fake!.calls.filter((c) => c.channel === 'images.report').length - listsBefore).toBe(1);

  await edge1.click();
  const rows = page.getByTestId('image-row');
  await expect(rows).toHaveCount(9);
  await cd.deleteImage('registry.site.lan/acme/new:1.0');
  await expect(rows).toHaveCount(8);
});

test('live: a dropped connection shows "reconnecting in N s…" with its attempt, then recovers', async ({ holdfast }) => {
  // The real watcher's backoff (1 s, 2 s, 4 s …) runs its course here.
  test.setTimeout(90_000);
  const { page } = await open(holdfast);
  await expect(fleetRow(page, 'edge-01').getByTestId('fleet-status')).toHaveText('Connected');
  // The overview's first image list of edge-01 has answered (its pin counts show): these are
  // the "last known images" that must stay on screen. Dropping the link before that answer
  // leaves nothing known to keep (the real service's list fails like the link), which a loaded
  // machine did.
  await expect(fleetRow(page, 'edge-01').getByTestId('fleet-durable')).toBeVisible();
  await eventsConnected();
  fake!.node('edge-01').drop();

  // By the third attempt the wait is ~4 s: long enough to watch it count down.
  const status = fleetRow(page, 'edge-01').getByTestId('fleet-status');
  await expect(status).toHaveText(/Reconnecting in [345] s…/, { timeout: 15_000 });
  await expect(fleetRow(page, 'edge-01')).toHaveAttribute('data-state', 'reconnecting');
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'reconnecting');
  await expect(page.getByTestId('node-item-edge-01').getByTestId('node-item-problem')).toContainText('Reconnecting in');
  // The countdown ticks.
  await expect(status).toHaveText(/Reconnecting in [12] s…/, { timeout: 4000 });
  if (shots) await page.screenshot({ path: path.join(shots, 'fleet-reconnecting.png') });

  await fleetRow(page, 'edge-01').click();
  const banner = page.getByTestId('reconnecting-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('Connection to edge-01 lost');
  await expect(page.getByTestId('node-state')).toContainText('Reconnecting');
  // The last known images stay on screen meanwhile.
  await expect(page.getByTestId('image-row')).toHaveCount(8);
  if (shots) await page.screenshot({ path: path.join(shots, 'node-reconnecting.png') });

  // The link comes back: the next attempt connects and the view resyncs.
  fake!.node('edge-01').restore();
  await expect(banner).toHaveCount(0, { timeout: 40_000 });
  await expect(page.getByTestId('node-state')).toHaveText('Connected');
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
});

test('live: job progress arrives as jobs.changed; the jobs list is not polled every 500 ms', async ({ holdfast }) => {
  const { page } = await open(holdfast);
  await eventsConnected();
  const started = Date.now();
  const before = fake!.calls.filter((c) => c.channel === 'jobs.list').length;
  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  await wizard.getByLabel('Archive path').fill(bundle('telemetry-2.5.tar.gz'));
  await wizard.getByLabel('Archive path').press('Enter');
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  await wizard.getByRole('button', { name: /Next: choose nodes/ }).click();
  await wizard.getByLabel(/Select all/).check();
  await wizard.getByRole('button', { name: 'Import 1 archive to 2 nodes' }).click();
  const indicator = page.getByTestId('jobs-indicator');
  await expect(indicator).toContainText('1 job running');
  await expect(indicator).toContainText(/finished/, { timeout: 30_000 });
  const seconds = (Date.now() - started) / 1000;
  const polls = fake!.calls.filter((c) => c.channel === 'jobs.list').length - before;
  // At 500 ms that would be ≥ 2 per second; the fallback polls every 5 s while a job runs.
  expect(polls).toBeLessThanOrEqual(Math.ceil(seconds / 5) + 2);
});

test('without live events (an older server) the UI still follows jobs by polling', async ({ holdfast }) => {
  const { page } = await open(holdfast, { noEvents: true });
  await expect(fleetRow(page, 'edge-01').getByTestId('fleet-durable')).toHaveText('2');
  await expect(page.getByTestId('jobs-indicator')).toContainText('No jobs');
});

test('one node: opens it directly; the fleet entry is not offered', async ({ holdfast }) => {
  fake = await fakeService({ oneNode: true });
  const page = await holdfast.open({ handlers: fake.handlers });
  await expect(page.getByTestId('images-table')).toBeVisible();
  await expect(page.getByTestId('open-fleet')).toHaveCount(0);
});
