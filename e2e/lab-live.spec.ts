// End-to-end over the LAB for live updates: two real nodes, the real service (its LiveHub
// watches each node's containerd event stream) behind the loopback server, the built UI in
// Chromium. k3s's watcher (emulated) imports an archive dropped into a node's images dir: the
// fleet overview updates by itself — no click, no refresh, no polling of images. Then
// containerd on a node goes away: the UI shows the reconnect countdown, and recovers on its own
// when containerd is back.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLab, type Lab, type LabNodeHandle } from '../lab/index.ts';
import { writeImageArchive } from '../lab/fixtures.ts';
import { emulateK3sStart, startK3sWatcher, type K3sWatcher } from '../lab/k3s.ts';
import { createHandlers, type Service } from '../src/core/service';
import { expect, test, type Page } from './fixtures';

const shots = process.env['HOLDFAST_SCREENSHOTS'];

test.describe.configure({ mode: 'serial' });

let lab: Lab | undefined;
let edge1: LabNodeHandle;
let edge2: LabNodeHandle;
let watcher: K3sWatcher | undefined;
let dir: string | undefined;
let handlers: Service | undefined;
let imageLists = 0;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  lab = await startLab({ nodes: ['edge1', 'edge2'] });
  edge1 = lab.node('edge1');
  edge2 = lab.node('edge2');
  // Real nodes answer `k3s --version` (without the lab's stand-in: "k3s/RKE2 not detected").
  for (const n of [edge1, edge2]) await n.installDistroBinary('k3s', 'v1.33.7+k3s1');
  await writeImageArchive(path.join(edge1.hostImagesDir, 'apps.tar'), {
    format: 'docker',
    images: [{ name: 'docker.io/library/app-a:1.0' }, { name: 'docker.io/library/app-b:1.0' }],
  });
  await emulateK3sStart(edge1);
  // edge2: k3s is running with an empty images dir; its watcher imports what lands there.
  watcher = startK3sWatcher(edge2);

  dir = await mkdtemp(path.join(tmpdir(), 'hf-e2e-live-'));
  handlers = createHandlers({ home: path.join(dir, 'home') });
  for (const n of [edge1, edge2]) {
    await handlers['nodes.add']({ node: { name: n.name, host: n.host, port: n.port, identity: lab.clientKey, knownHosts: lab.knownHosts } });
  }
  // Count image listings: an update on screen must come from a pushed event, not a poll.
  // (the app loads a node's images with their needs: images.report)
  const report = handlers['images.report'];
  handlers['images.report'] = async (args) => {
    imageLists++;
    return report(args);
  };
});

test.afterAll(async () => {
  test.setTimeout(120_000);
  await watcher?.stop();
  await handlers?.dispose();
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const fleetRow = (page: Page, n: string) => page.getByTestId(`fleet-row-${n}`);

test('the fleet overview updates live when k3s imports an archive on a node, then rides out a containerd restart', async ({ holdfast }) => {
  test.setTimeout(150_000);
  const page = await holdfast.open({ handlers: handlers!, home: path.join(dir!, 'home') });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await expect(page.getByTestId('fleet-overview')).toBeVisible({ timeout: 20_000 });
  await expect(fleetRow(page, 'edge1').getByTestId('fleet-k3s')).toHaveText('2', { timeout: 20_000 });
  await expect(fleetRow(page, 'edge1').getByTestId('fleet-atRisk')).toHaveText('0');
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-k3s')).toHaveText('0', { timeout: 20_000 });
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-status')).toHaveText('Connected');
  // The service watches both nodes' event streams once the page listens.
  await page.waitForTimeout(1000);
  const listsBefore = imageLists;

  // An archive lands in edge2's images dir (a technician's USB stick, a script…); k3s imports it.
  await writeImageArchive(path.join(edge2.hostImagesDir, 'site-tools.tar'), {
    format: 'docker',
    images: [{ name: 'docker.io/library/site-tools:3.1' }],
  });
  await expect.poll(() => watcher!.imported.length, { timeout: 20_000 }).toBe(1);
  // No click: the row follows containerd's events.
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-k3s')).toHaveText('1', { timeout: 15_000 });
  if (holdfast.transport === 'http') {
    // (the desktop app runs its own service: these counters only see the served UI's calls)
    expect(imageLists).toBeGreaterThan(listsBefore); // reloaded because of the push…
    expect(imageLists - listsBefore).toBeLessThanOrEqual(4); // …debounced, not once per event
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
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-k3s')).toHaveText('1');

  // And live again after the reconnect: another import shows up by itself.
  await writeImageArchive(path.join(edge2.hostImagesDir, 'site-more.tar'), {
    format: 'docker',
    images: [{ name: 'docker.io/library/site-more:1.0' }],
  });
  await expect(fleetRow(page, 'edge2').getByTestId('fleet-k3s')).toHaveText('2', { timeout: 20_000 });
  expect(errors).toEqual([]);
});
