// End-to-end over the LAB for the guided air-gap import, driven through the wizard in the
// browser against the REAL backend: an archive on this machine, typed by path, uploaded to a lab
// node whose k3s watcher (emulated) imports it; then durable pins and the archive removed.
import { expect, test, type Page } from './fixtures';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { writeImageArchive, type WrittenImage } from '../lab/fixtures.ts';
import { labelsOf, startK3sWatcher, type K3sWatcher } from '../lab/k3s.ts';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const shots = process.env['HOLDFAST_SCREENSHOTS'];
const ARCHIVE = 'site-apps.tar.gz';
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

let watcher: K3sWatcher | undefined;
let written: WrittenImage[] = [];
let file = '';

const suite = labSuite({
  nodes: ['edge1'],
  name: 'import',
  async prepare({ lab, dir, onStop }) {
    const node = lab.node('edge1');
    // A real node answers `k3s --version`: without the lab's stand-in the app says "k3s/RKE2 not
    // detected" and judges fates by the safest rules of an unknown release.
    await node.installDistroBinary('k3s', K3S_RELEASE);
    // k3s is running on the node: its watcher imports what lands in the images dir.
    const running = startK3sWatcher(node);
    watcher = running;
    onStop(() => running.stop());

    file = path.join(dir, 'bundles', ARCHIVE);
    written = (
      await writeImageArchive(file, {
        format: 'docker',
        compression: 'gzip',
        images: [{ name: 'docker.io/library/site-web:2.4' }, { name: 'docker.io/library/site-worker:2.4', layerBytes: 256 * 1024 }],
      })
    ).images;
  },
});

const rows = (page: Page) => page.getByTestId('image-row');
const wizard = (page: Page) => page.getByTestId('import-wizard');

test('import an archive by typed path: upload, k3s imports, durable pins, archive removed', async ({ holdfast }) => {
  test.setTimeout(150_000);
  // The served UI (HTTP) or the desktop app (preload + IPC) over the same home: the fixture decides.
  const { page, errors } = await suite.open(holdfast);
  const node = suite.node('edge1');
  await expect(page.getByTestId('node-item-edge1').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected', { timeout: 20_000 });
  for (const img of written) await expect(rows(page).filter({ hasText: img.name })).toHaveCount(0);

  // 1. choose: the browser has no dialog; type the path.
  await page.getByRole('button', { name: 'Import archives' }).click();
  await expect(wizard(page).getByTestId('browser-note')).toBeVisible();
  const field = wizard(page).getByLabel('Archive path');
  await field.fill(file);
  await field.press('Enter');
  await expect(wizard(page).getByTestId('chosen-archive')).toContainText('docker · gzip', { timeout: 20_000 });

  // 2. review: the real inspection (format, compression, images, SHA-256).
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  const card = wizard(page).getByTestId('review-archive');
  await expect(card).toHaveAttribute('data-state', 'ok');
  await expect(card.getByTestId('review-format')).toHaveText('docker save');
  await expect(card.getByTestId('review-compression')).toHaveText('gzip');
  await expect(card.getByTestId('review-image')).toHaveCount(written.length);
  for (const img of written) await expect(card).toContainText(img.name);
  await expect(card.getByTestId('review-sha256')).toHaveAttribute('data-full', /^[0-9a-f]{64}$/);

  // 3. nodes: edge1 lacks both images, so it is preselected; both options on.
  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  await expect(wizard(page).getByTestId('pick-node-edge1').getByTestId('node-holds')).toHaveText(/^lacks 2 of 2 images: /, { timeout: 20_000 });
  await expect(wizard(page).getByTestId('pick-node-edge1').getByRole('checkbox')).toBeChecked();
  await expect(wizard(page).getByTestId('pick-node-edge1')).toContainText('Connected');
  await expect(wizard(page).getByRole('checkbox', { name: /Make pins durable/ })).toBeChecked();
  await expect(wizard(page).getByRole('checkbox', { name: /Remove the archive/ })).toBeChecked();
  await wizard(page).getByRole('button', { name: 'Import 1 archive to 1 node' }).click();

  // 4. run → 5. summary: the job finishes "done" for the node.
  await expect(wizard(page)).toHaveAttribute('data-step', /run|summary/);
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-import-run.png') });
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary', { timeout: 120_000 });
  const result = wizard(page).locator('[data-testid="summary-node"][data-node="edge1"]');
  await expect(result).toHaveAttribute('data-state', 'succeeded');
  await expect(result.getByTestId('summary-message')).toContainText('archive removed');
  await expect(wizard(page).getByTestId('summary-banner')).toContainText('succeeded');
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-import-summary.png') });
  const [job] = await suite.handlers['jobs.list']({});
  expect(job?.state).toBe('succeeded');
  expect(job?.nodes[0]).toMatchObject({ node: 'edge1', state: 'succeeded', phase: 'done' });

  // On the node: durable pins only, and the archive gone from the images dir.
  for (const img of written) {
    const labels = await labelsOf(node, img.name);
    expect(labels[CRI]).toBe('pinned');
    expect(labels[K3S]).toBeUndefined();
  }
  await expect(access(path.join(node.hostImagesDir, ARCHIVE))).rejects.toThrow();
  expect(watcher!.failed).toEqual([]);

  // The node's Images view: the archive's images, Durable. Archives tab: the archive is gone.
  await wizard(page).getByRole('button', { name: "Open edge1's images" }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'edge1' })).toBeVisible();
  for (const img of written) {
    await expect(rows(page).filter({ hasText: img.name }).getByTestId('pin-badge')).toHaveText('Durable', { timeout: 20_000 });
  }
  await page.getByRole('tab', { name: /Archives/ }).click();
  await expect(page.getByTestId('archives-empty').or(page.getByTestId('archives-table'))).toBeVisible({ timeout: 20_000 });
  await expect(page.locator(`[data-testid="archive-row"][data-path="${ARCHIVE}"]`)).toHaveCount(0);

  // The jobs panel lists the finished job.
  await page.getByTestId('jobs-indicator').click();
  await expect(page.getByTestId('jobs-panel').getByTestId('job')).toHaveAttribute('data-state', 'succeeded');

  // The same archive again: edge1 now holds both images, so it is not ticked; the user may tick it.
  await page.getByTestId('jobs-panel').getByRole('button', { name: 'Close' }).click();
  await expect(page.getByTestId('jobs-panel')).toBeHidden();
  await page.getByRole('button', { name: 'Import archives' }).click();
  await wizard(page).getByRole('button', { name: 'Import more archives' }).click();
  await wizard(page).getByLabel('Archive path').fill(file);
  await wizard(page).getByLabel('Archive path').press('Enter');
  await expect(wizard(page).getByTestId('chosen-archive')).toContainText('docker · gzip', { timeout: 20_000 });
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  const again = wizard(page).getByTestId('pick-node-edge1');
  await expect(again.getByTestId('node-holds')).toHaveText('has all 2 images', { timeout: 20_000 });
  await expect(again.getByRole('checkbox')).not.toBeChecked();
  await expect(wizard(page).getByTestId('nodes-hold-all')).toContainText('Not ticked: edge1 (it holds every image already)');
  await again.getByRole('checkbox').check();
  await expect(wizard(page).getByRole('button', { name: 'Import 1 archive to 1 node' })).toBeEnabled();
  expect(errors).toEqual([]);
});
