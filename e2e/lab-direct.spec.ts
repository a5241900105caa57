// End-to-end over the LAB for direct delivery (issue #35), driven through the wizard in the
// browser against the REAL backend: "Straight into containerd" chosen on the nodes step, an OCI
// archive on this machine written into a lab node's containerd over the tunnel, only the blobs
// it lacks, pinned durably — no k3s watcher runs, and nothing lands in the images dir. A second
// archive sharing the first one's base layer then sends only what the node still lacks.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { criPinned } from '../lab/cri.ts';
import { labelsOf } from '../lab/k3s.ts';
import { writeLayeredArchive, type LayeredImage } from '../lab/layered.ts';
import { expect, screenshotTo, test, type Page } from './fixtures';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const shots = process.env['HOLDFAST_SCREENSHOTS'];
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const KiB = 1024;
// One base layer shared by both releases, as the versions of one app built on one base.
const BASE = { seed: 'site-base', bytes: 384 * KiB };

let first: LayeredImage[] = [];
let update: LayeredImage[] = [];
let firstFile = '';
let updateFile = '';

const suite = labSuite({
  nodes: ['edge1'],
  name: 'direct',
  async prepare({ lab, dir }) {
    // A real node answers `k3s --version`; no watcher runs: a direct delivery needs none.
    await lab.node('edge1').installDistroBinary('k3s', K3S_RELEASE);
    firstFile = path.join(dir, 'bundles', 'site-api-3.1.tar');
    first = await writeLayeredArchive(firstFile, [
      { name: 'docker.io/library/site-api:3.1', layers: [BASE, { seed: 'api-3.1', bytes: 96 * KiB }] },
      { name: 'docker.io/library/site-jobs:3.1', layers: [BASE, { seed: 'jobs-3.1', bytes: 64 * KiB }] },
    ]);
    updateFile = path.join(dir, 'bundles', 'site-api-3.2.tar');
    update = await writeLayeredArchive(updateFile, [{ name: 'docker.io/library/site-api:3.2', layers: [BASE, { seed: 'api-3.2', bytes: 96 * KiB }] }]);
  },
});

const wizard = (page: Page) => page.getByTestId('import-wizard');

/** Choose → review → nodes with "Straight into containerd" picked; checks what the step says. */
async function toDirectNodesStep(page: Page, file: string): Promise<void> {
  const field = wizard(page).getByLabel('Archive path');
  await field.fill(file);
  await field.press('Enter');
  await expect(wizard(page).getByTestId('chosen-archive')).toContainText('oci', { timeout: 20_000 });
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  await expect(wizard(page).getByTestId('review-archive')).toHaveAttribute('data-state', 'ok');
  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  await expect(wizard(page).getByTestId('pick-node-edge1').getByRole('checkbox')).toBeChecked();

  // The images dir is the default; choosing direct replaces the two options by the implied pin.
  const viaDir = wizard(page).getByRole('radio', { name: /Through the images dir \(k3s imports it\)/ });
  const direct = wizard(page).getByRole('radio', { name: /Straight into containerd/ });
  await expect(viaDir).toBeChecked();
  await expect(wizard(page).getByRole('checkbox', { name: /Remove the archive/ })).toBeChecked();
  await expect(wizard(page).getByTestId('import-plan')).toContainText('wait for k3s to import');
  await direct.check();
  await expect(direct).toBeChecked();
  await expect(wizard(page).getByTestId('delivery')).toContainText('No file on the node: only the layers a node lacks are sent');
  await expect(wizard(page).getByRole('checkbox', { name: /Remove the archive/ })).toHaveCount(0);
  await expect(wizard(page).getByRole('checkbox', { name: /Make pins durable/ })).toHaveCount(0);
  await expect(wizard(page).getByTestId('pin-implied')).toContainText('Pins made durable');
  const plan = wizard(page).getByTestId('import-plan');
  await expect(plan).toContainText('send only the missing ones');
  await expect(plan).toContainText('No file is written to the images dir');
  await expect(plan).not.toContainText('k3s');
}

/** Starts the import from the nodes step and waits for the summary; returns edge1's summary line. */
async function runToSummary(page: Page): Promise<string> {
  await wizard(page).getByRole('button', { name: 'Import 1 archive to 1 node' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary', { timeout: 120_000 });
  const result = wizard(page).locator('[data-testid="summary-node"][data-node="edge1"]');
  await expect(result).toHaveAttribute('data-state', 'succeeded');
  await expect(wizard(page).getByTestId('summary-banner')).toContainText('succeeded');
  return (await result.getByTestId('summary-message').textContent()) ?? '';
}

const imagesDirFiles = (dir: string): Promise<string[]> => readdir(dir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));

test('straight into containerd from the wizard: only missing blobs sent, pinned durably, verified, nothing in the images dir', async ({ holdfast }) => {
  test.setTimeout(240_000);
  const { page, errors } = await suite.open(holdfast);
  const node = suite.node('edge1');
  await expect(page.getByTestId('node-item-edge1').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected', { timeout: 20_000 });

  // 1. A fresh node: every blob is sent.
  await page.getByRole('button', { name: 'Import archives' }).click();
  await toDirectNodesStep(page, firstFile);
  if (shots) await screenshotTo(shots, page, 'lab-direct-wizard.png');
  const summary = await runToSummary(page);
  // 2 manifests, 2 configs, 3 distinct layers (the base once): none on the node before. Each
  // image gets its name and its name@sha256 reference, both pinned.
  expect(summary).toMatch(/^sent [\d.]+ (KiB|MiB) in 7 blobs, 0 of 7 were already there, unpacked 3 layers \(\w+\), 4 references pinned durably, verified$/);
  if (shots) await screenshotTo(shots, page, 'lab-direct-summary.png');

  const [job] = await suite.handlers['jobs.list']({});
  expect(job).toMatchObject({ state: 'succeeded', options: { direct: true, pin: true, removeArchive: false }, archive: { sha256: null } });
  expect(job?.nodes[0]).toMatchObject({ node: 'edge1', state: 'succeeded', phase: 'done', result: { relPath: '', summary } });

  // On the node: durable pins only (no k3s pin: no k3s import happened), CRI says pinned, and
  // no archive in the images dir.
  for (const img of first) {
    const labels = await labelsOf(node, img.name);
    expect(labels[CRI]).toBe('pinned');
    expect(labels[K3S]).toBeUndefined();
    expect(await criPinned(node, img.name, true)).toBe(true);
  }
  expect((await imagesDirFiles(node.hostImagesDir)).filter((f) => f.startsWith('site-api'))).toEqual([]);

  // The finished job card in the jobs panel words it as a direct delivery.
  await page.getByTestId('jobs-indicator').click();
  const card = page.getByTestId('jobs-panel').getByTestId('job');
  await expect(card).toHaveAttribute('data-state', 'succeeded');
  await expect(card).toContainText('straight into containerd');
  await expect(card).toContainText('durable pins');
  await expect(card).not.toContainText('archive removed');
  await expect(card).not.toContainText(/k3s|Uploading|images dir/);
  await expect(card.getByTestId('job-node-message')).toHaveText(summary);
  if (shots) await card.screenshot({ path: path.join(shots, 'lab-direct-job.png'), animations: 'disabled' });
  await page.keyboard.press('Escape');

  // 2. An update sharing the base layer: the node already holds it, so it is not sent again.
  await wizard(page).getByRole('button', { name: 'Import more archives' }).click();
  await toDirectNodesStep(page, updateFile);
  const second = await runToSummary(page);
  // Its manifest, config and own layer are sent and unpacked; the base layer is neither.
  expect(second).toMatch(/^sent [\d.]+ KiB in 3 blobs, 1 of 4 were already there, unpacked 1 layer \(\w+\), 2 references pinned durably, verified$/);
  const labels = await labelsOf(node, update[0]!.name);
  expect(labels[CRI]).toBe('pinned');
  expect(await criPinned(node, update[0]!.name, true)).toBe(true);

  // The node's Images view: every delivered image, Durable.
  await wizard(page).getByRole('button', { name: "Open edge1's images" }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'edge1' })).toBeVisible();
  for (const img of [...first, ...update]) {
    await expect(page.getByTestId('image-row').filter({ hasText: img.name }).getByTestId('pin-badge')).toHaveText('Durable', { timeout: 20_000 });
  }
  expect(errors).toEqual([]);
});
