// End-to-end over the LAB for live updates: two real nodes, the real service (its LiveHub
// watches each node's containerd event stream) behind the loopback server, the built UI in
// Chromium. k3s's watcher (emulated) imports an archive dropped into a node's images dir: the
// fleet overview updates by itself — no click, no refresh, no polling of images. Then
// containerd on a node goes away: the UI shows the reconnect countdown, and recovers on its own
// when containerd is back.
import path from 'node:path';
import { writeImageArchive } from '../lab/fixtures.ts';
import { startK3sWatcher, type K3sWatcher } from '../lab/k3s.ts';
import { expect, test, type Page } from './fixtures';
import { K3S_RELEASE, k3sNodeWithApps, labSuite } from './lab-fixture';

const shots = process.env['HOLDFAST_SCREENSHOTS'];

let watcher: K3sWatcher | undefined;

const suite = labSuite({
  nodes: ['edge1', 'edge2'],
  name: 'live',
  async prepare({ lab, onStop }) {
    await k3sNodeWithApps(lab.node('edge1'));
    // edge2: k3s is running with an empty images dir; its watcher imports what lands there.
    const edge2 = lab.node('edge2');
    await edge2.installDistroBinary('k3s', K3S_RELEASE);
    const running = startK3sWatcher(edge2);
    watcher = running;
    onStop(() => running.stop());
  },
});

const fleetRow = (page: Page, n: string) => page.getByTestId(`fleet-row-${n}`);

test('the fleet overview updates live when k3s imports an archive on a node, then rides out a containerd restart', async ({ holdfast }) => {
  test.setTimeout(150_000);
  const { page, errors } = await suite.open(holdfast);
  const edge2 = suite.node('edge2');

  await expect(page.getByTestId('fleet-overview')).toBeVisible({ timeout: 20_000 });
  await expect(fleetRow(page, 'edge1').getByTestId('fleet-distro')).toHaveText('2', { timeout: 20_000 });
  await expect(fleetRow(page, 'edge1').getByTestId('fleet-atRisk')).toHaveText('0');
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-distro')).toHaveText('0', { timeout: 20_000 });
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-status')).toHaveText('Connected');
  // The service watches both nodes' event streams once the page listens.
  await page.waitForTimeout(1000);
  // Count image listings: an update on screen must come from a pushed event, not a poll.
  const listsBefore = suite.reports;

  // An archive lands in edge2's images dir (a technician's USB stick, a script…); k3s imports it.
  await writeImageArchive(path.join(edge2.hostImagesDir, 'site-tools.tar'), {
    format: 'docker',
    images: [{ name: 'docker.io/library/site-tools:3.1' }],
  });
  await expect.poll(() => watcher!.imported.length, { timeout: 20_000 }).toBe(1);
  // No click: the row follows containerd's events.
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-distro')).toHaveText('1', { timeout: 15_000 });
  if (holdfast.transport === 'http') {
    // (the desktop app runs its own service: these counters only see the served UI's calls)
    expect(suite.reports).toBeGreaterThan(listsBefore); // reloaded because of the push…
    expect(suite.reports - listsBefore).toBeLessThanOrEqual(4); // …debounced, not once per event
  }
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-fleet-live.png') });

  // containerd on edge2 stops (a k3s restart): the event stream fails, the UI counts down.
  await edge2.stopContainerd();
  const status = fleetRow(page, 'edge2').getByTestId('fleet-status');
  await expect(status).toHaveText(/Reconnecting/, { timeout: 15_000 });
  await expect(page.getByTestId('node-item-edge2').getByTestId('status-dot')).toHaveAttribute('data-state', 'reconnecting');
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-fleet-reconnecting.png') });
  // edge1 is not affected.
  await expect(fleetRow(page, 'edge1').getByTestId('fleet-status')).toHaveText('Connected');

  await edge2.startContainerd();
  await expect(status).toHaveText('Connected', { timeout: 40_000 });
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-distro')).toHaveText('1');

  // And live again after the reconnect: another import shows up by itself.
  await writeImageArchive(path.join(edge2.hostImagesDir, 'site-more.tar'), {
    format: 'docker',
    images: [{ name: 'docker.io/library/site-more:1.0' }],
  });
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-distro')).toHaveText('2', { timeout: 20_000 });
  expect(errors).toEqual([]);
});
