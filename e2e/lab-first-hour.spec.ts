// End-to-end over the LAB (issue #33), three real nodes (containerd + sshd) with the lab's stand-in
// k3s of one release, the seed archive imported and pinned by a k3s start on each, and a fourth
// node whose identity file does not exist:
// - each node page and the fleet overview show the release each node's `k3s --version` answers;
// - the fleet overview names the real cause of the failed connection, as the node page does;
// - on n2 the archive is gone (k3s has not started since): the Disk tab counts its image's k3s pin
//   as the Images tab does — lost at the next start — and the empty GC forecast reads consistently;
//   then a real k3s start takes the pin, as both said;
// - the import wizard ticks the three reachable nodes, not the fourth.
// Screenshots go to /tmp/ui-shots/.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { writeImageArchive } from '../lab/fixtures.ts';
import { emulateK3sStart, labelsOf } from '../lab/k3s.ts';
import { SEED_ARCHIVE, SEED_SAMPLE_IMAGE, writeSeedArchive } from '../lab/seed.ts';
import { expect, openFromOverview, test, type Page, screenshotTo } from './fixtures';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const shotsDir = '/tmp/ui-shots';

let archive: string;

const suite = labSuite({
  nodes: ['n1', 'n2', 'n3'],
  name: 'first-hour',
  async prepare({ lab, dir }) {
    for (const node of lab.nodes) {
      await node.installDistroBinary('k3s', K3S_RELEASE);
      await writeSeedArchive(node.hostImagesDir);
      const started = await emulateK3sStart(node);
      expect(started.failed).toEqual([]);
      expect(await labelsOf(node, SEED_SAMPLE_IMAGE)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    }
    // On n2 someone removed the archive; k3s has not started since, so the image is still pinned.
    await rm(path.join(lab.node('n2').hostImagesDir, SEED_ARCHIVE));

    archive = path.join(dir, 'site-tools-1.0.tar');
    await writeImageArchive(archive, { format: 'docker', images: [{ name: 'docker.io/library/site-tools:1.0' }] });
  },
  async configure(handlers, { lab, dir }) {
    // A node whose key file is not where its settings say: the connection fails before any SSH.
    const n1 = lab.node('n1');
    await handlers['nodes.add']({ node: { name: 'nokey', host: n1.host, port: n1.port, identity: path.join(dir, 'id_missing'), knownHosts: lab.knownHosts } });
  },
});

const shot = (page: Page, name: string): Promise<void> => screenshotTo(shotsDir, page, name);

test('fleet overview and node page: each node’s k3s release; the real cause of a failed connection', async ({ holdfast }) => {
  test.setTimeout(90_000);
  const { page } = await suite.open(holdfast);
  for (const n of ['n1', 'n2', 'n3']) {
    await expect(page.getByTestId(`fleet-row-${n}`).getByTestId('fleet-release')).toHaveText(K3S_RELEASE, { timeout: 30_000 });
  }
  const bad = page.getByTestId('fleet-row-nokey');
  await expect(bad.getByTestId('fleet-status')).toHaveText('Authentication failed');
  const cause = `Cannot read the identity file ${path.join(suite.dir, 'id_missing')}: it does not exist.`;
  await expect(bad.getByTestId('fleet-cause')).toHaveText(cause);
  await expect(bad.getByTestId('fleet-cause')).toHaveAttribute('title', /Point the node at a readable private key file/);
  await shot(page, 'lab-fleet.png');

  // The node page: the same cause; and each node's release in its header.
  await page.getByTestId('node-item-nokey').click();
  await expect(page.getByTestId('connection-error').locator('.error-message')).toHaveText(cause);
  await page.getByTestId('node-item-n1').click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  const distro = page.getByTestId('node-distro');
  await expect(distro.locator('dt')).toHaveText('k3s');
  await expect(distro.locator('dd')).toHaveText(K3S_RELEASE);
  await shot(page, 'lab-node-header.png');
});

test('Disk tab on n2: the k3s pin its archive no longer backs counts as lost at the next start, as on the Images tab; a k3s start takes it', async ({ holdfast }) => {
  test.setTimeout(120_000);
  const { page } = await suite.open(holdfast);
  await openFromOverview(page, 'n2', page.getByTestId('images-table'));
  const imageRow = page.getByTestId('image-row').filter({ has: page.locator(`[title="${SEED_SAMPLE_IMAGE}"]`) });
  await expect(imageRow).toHaveAttribute('data-fate', 'lose');

  await page.getByTestId('tab-disk').click();
  const storeRow = page.locator(`[data-testid=store-row][data-ref="${SEED_SAMPLE_IMAGE}"]`);
  await expect(storeRow.getByTestId('store-state')).toHaveAttribute('data-state', 'distro');
  await expect(storeRow.getByTestId('store-state')).toHaveAttribute('data-fate', 'lose');
  await expect(storeRow.getByTestId('fate')).toHaveText('Will lose pin');
  await expect(page.getByTestId('disk-summary')).toContainText('0 pinned · 1 loses its pin at the next k3s start');

  // Nothing kubelet may delete today, and what that means, in words that agree with each other.
  const forecast = page.getByTestId('gc-forecast');
  await expect(forecast.getByTestId('forecast-empty')).toHaveText(
    'Nothing: every image is in use or pinned for kubelet (1 of them only until the next k3s start, which strips its pin).',
  );
  await expect(forecast).toContainText("With nothing it may delete, kubelet's GC frees no space: once the disk reaches 85 %, it keeps filling until pods are evicted.");
  await expect(forecast).not.toContainText('Even deleting every image it may delete');
  // One percentage format over the real node's file systems.
  const percents = (await page.getByTestId('tabpanel-disk').innerText()).match(/\d+(\.\d+)? ?%/g) ?? [];
  expect(percents.length).toBeGreaterThan(5);
  for (const p of percents) expect(p).toMatch(/^\d+(\.[1-9])? %$/);
  await shot(page, 'lab-n2-disk.png');

  // The proof: k3s starts; the pin is gone, as both tabs said.
  const restarted = await emulateK3sStart(suite.node('n2'));
  expect(restarted.cleared).toContain(SEED_SAMPLE_IMAGE);
  expect((await labelsOf(suite.node('n2'), SEED_SAMPLE_IMAGE))[CRI]).toBeUndefined();
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(storeRow.getByTestId('store-state')).toHaveAttribute('data-state', 'unprotected');
  await expect(forecast.getByTestId('forecast-step').filter({ hasText: SEED_SAMPLE_IMAGE })).toHaveCount(1);
  await expect(forecast.getByTestId('forecast-empty')).toHaveCount(0);
});

test('import wizard: the three reachable nodes are ticked, the one whose connection failed is not', async ({ holdfast }) => {
  test.setTimeout(90_000);
  const { page } = await suite.open(holdfast);
  await expect(page.getByTestId('fleet-row-nokey').getByTestId('fleet-status')).toHaveText('Authentication failed');
  for (const n of ['n1', 'n2', 'n3']) await expect(page.getByTestId(`fleet-row-${n}`).getByTestId('fleet-status')).toHaveText('Connected', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Import archives' }).click();
  const wizard = page.getByTestId('import-wizard');
  await wizard.getByLabel('Archive path').fill(archive);
  await wizard.getByLabel('Archive path').press('Enter');
  await expect(wizard.getByTestId('chosen-archive')).toContainText('docker · uncompressed', { timeout: 20_000 });
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  await expect(wizard.getByTestId('review-archive')).toHaveAttribute('data-state', 'ok');
  await wizard.getByRole('button', { name: /Next: choose nodes/ }).click();
  for (const n of ['n1', 'n2', 'n3']) await expect(wizard.getByTestId(`pick-node-${n}`).getByRole('checkbox')).toBeChecked();
  await expect(wizard.getByTestId('pick-node-nokey').getByRole('checkbox')).not.toBeChecked();
  await expect(wizard.getByRole('button', { name: 'Import 1 archive to 3 nodes' })).toBeEnabled();
  await shot(page, 'lab-wizard-nodes.png');
});

test("image details: CRI's sha256:<id> record reads as its image — its image's pin, the same fate", async ({ holdfast }) => {
  test.setTimeout(90_000);
  const { page } = await suite.open(holdfast);
  await page.getByTestId('node-item-n3').click();
  const row = page.getByTestId('image-row').filter({ hasText: 'holdfast-sample' });
  await row.getByRole('button', { name: /Details of/ }).click();
  const details = page.getByTestId('image-details');
  const record = details.locator('tr').filter({ hasText: /^sha256:/ });
  await expect(record).toHaveCount(1);
  // Before: "Not pinned" beside "Pinned at start" (a fate it cannot gain: it has no labels at all).
  await expect(record.getByTestId('pin-badge')).toHaveText('k3s pin');
  await expect(record.getByTestId('pin-inherited')).toHaveText("(its image's)");
  const tag = details.locator('tr').filter({ hasText: SEED_SAMPLE_IMAGE.replace('docker.io/library/', '') }).first();
  await expect(record.getByTestId('fate')).toHaveText(await tag.getByTestId('fate').innerText());
  await shot(page, 'lab-sha256-record.png');
});
