// End-to-end over the LAB for "will a pod at this site fail?": two real nodes (containerd + sshd),
// n1 a k3s server whose stand-in kubectl answers a Deployment and a CronJob, n2 an agent of the
// same group that learns its needs from n1. The seed's loss (k3s #11363: the archive is gone, k3s
// restarts, the pin with it) leaves the Deployment's image unpinned on n1; no node has the
// CronJob's image. The app must show both per node in the fleet overview and on n1's Images tab,
// make the needed image durable from the banner, and the pin must be containerd's and CRI's for
// real and survive the next k3s start. Screenshots go to /tmp/needs-lab-shots/.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { SEED_ARCHIVE, SEED_REPORT_IMAGE, SEED_SAMPLE_IMAGE, seedWorkloads, writeSeedArchive } from '../lab/seed.ts';
import { criPinned } from '../lab/cri.ts';
import { emulateK3sStart, labelsOf, listImages } from '../lab/k3s.ts';
import { workloadList } from '../lab/workloads.ts';
import { expect, openFromOverview, test, type Page, screenshotTo } from './fixtures';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const GROUP = 'site-a';
// The seeded lab's images (lab/cli.ts --seed): the Deployment's, brought by an archive; the
// CronJob's, on no node.
const SAMPLE = SEED_SAMPLE_IMAGE;
const REPORT = SEED_REPORT_IMAGE;
const shotsDir = '/tmp/needs-lab-shots';

test.use({ viewport: { width: 1440, height: 900 } });

const suite = labSuite({
  nodes: ['n1', 'n2'],
  name: 'needs',
  // One group: n2 (an agent) asks n1 (a server of its group) what the site needs.
  group: GROUP,
  async prepare({ lab }) {
    const n1 = lab.node('n1');
    const n2 = lab.node('n2');
    // The seed archive on each node, imported and pinned by a k3s start (lab/cli.ts --seed).
    for (const node of lab.nodes) {
      await writeSeedArchive(node.hostImagesDir);
      const started = await emulateK3sStart(node);
      expect(started.failed).toEqual([]);
      expect(await labelsOf(node, SAMPLE)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    }

    // n1 is the server: kubectl lists both lab nodes, the Deployment running on n1 (its container's
    // imageID is n1's real digest) and the CronJob between runs. n2 is an agent (no kubeconfig).
    const version = await n1.containerdVersion();
    const digests = Object.fromEntries((await listImages(n1)).map((i) => [i.name, i.digest]));
    const workloads = workloadList(seedWorkloads([n1.name, n2.name], K3S_RELEASE, `containerd://${version}`, digests));
    await n1.installDistroBinary('k3s', K3S_RELEASE, { workloads });
    await n2.installDistroBinary('k3s', K3S_RELEASE);

    // The seed's loss on n1: the archive is gone, k3s restarts and clears its pin.
    await rm(path.join(n1.hostImagesDir, SEED_ARCHIVE));
    const restarted = await emulateK3sStart(n1);
    expect(restarted.cleared).toContain(SAMPLE);
    expect(restarted.imported).toEqual([]);
    const lost = await labelsOf(n1, SAMPLE);
    expect(lost[K3S]).toBeUndefined();
    expect(lost[CRI]).toBeUndefined();
    expect(await criPinned(n1, SAMPLE, false)).toBe(false);
  },
});

const shot = (page: Page, name: string): Promise<void> => screenshotTo(shotsDir, page, name);

const fleetRow = (page: Page, n: string) => page.getByTestId(`fleet-row-${n}`);
const row = (page: Page, text: string) => page.getByTestId('image-row').filter({ hasText: text });

test('the site’s needs on real nodes: the seed’s loss and a missing CronJob image at risk, made durable from the banner, kept across a k3s start', async ({ holdfast }) => {
  test.setTimeout(150_000);
  const { page, errors } = await suite.open(holdfast);
  const n1 = suite.node('n1');
  const pid = await n1.containerdPid();
  expect(pid).not.toBeNull();

  // Fleet overview: n1 has the lost sample image and the missing CronJob image at risk; n2 (whose
  // sample image is still pinned by its archive, and not needed there) lacks the CronJob's image.
  await expect(page.getByTestId('fleet-overview')).toBeVisible({ timeout: 20_000 });
  const needed1 = fleetRow(page, 'n1').getByTestId('fleet-needed');
  const needed2 = fleetRow(page, 'n2').getByTestId('fleet-needed');
  await expect(needed1).toHaveText('2', { timeout: 30_000 });
  await expect(needed2).toHaveText('1', { timeout: 30_000 });
  await expect(needed1).toHaveAttribute('title', /^2 needed images at risk: /);
  await expect(needed1).toHaveAttribute('title', new RegExp(`${REPORT.replace(/\./g, '\\.')} \\(missing\\)`));
  await expect(needed1).toHaveAttribute('title', /holdfast-sample:1\.0/);
  await expect(needed1).toHaveAttribute('title', /Site needs from: kubectl on n1$/);
  await expect(needed2).toHaveAttribute('title', new RegExp(`^1 needed image at risk: ${REPORT.replace(/\./g, '\\.')} \\(missing\\)`));
  await expect(needed2).not.toHaveAttribute('title', /holdfast-sample/);
  // n2's needs come from its server, n1.
  await expect(needed2).toHaveAttribute('title', /Site needs from: kubectl on n1$/);
  for (const n of ['n1', 'n2']) await expect(fleetRow(page, n).getByTestId('fleet-no-needs-source')).toHaveCount(0);
  const fleetBanner = page.getByTestId('fleet-needed-banner');
  await expect(fleetBanner).toContainText('3 needed images at risk on 2 nodes: a pod that needs one may not start');
  await expect(fleetBanner.getByTestId('fleet-needed-nodes')).toContainText('n1 (2), n2 (1).');
  await expect(fleetBanner.getByTestId('fleet-needed-nodes')).toContainText('makes every needed image durable in one step');
  await shot(page, 'fleet-before.png');

  // n1's Images tab: the banner names both, missing first.
  await openFromOverview(page, 'n1', page.getByTestId('images-table'));
  const banner = page.getByTestId('needs-banner');
  await expect(banner.getByTestId('needs-headline')).toHaveText('2 needed images at risk', { timeout: 20_000 });
  await expect(banner.getByTestId('needs-source')).toHaveText('Site needs from: kubectl on n1');
  const items = banner.getByTestId('needs-item');
  await expect(items).toHaveCount(2);
  await expect(items.nth(0)).toHaveAttribute('data-ref', REPORT);
  await expect(items.nth(0).getByTestId('need-badge')).toHaveText('missing');
  await expect(items.nth(0)).toContainText('holdfast-report:1.0');
  await expect(items.nth(0)).toContainText('CronJob default/nightly-report (CronJob between runs)');
  await expect(items.nth(0).getByTestId('needs-held-by')).toHaveText('No copy in the images dir: import it');
  await expect(items.nth(1)).toHaveAttribute('data-ref', SAMPLE);
  await expect(items.nth(1).getByTestId('need-badge')).toHaveText('at risk');
  await expect(items.nth(1)).toContainText('holdfast-sample:1.0');
  await expect(items.nth(1)).toContainText('Deployment default/sample (running)');
  await expect(banner.getByTestId('make-needed-durable')).toHaveText('Make every needed image durable');
  // The table agrees: the sample image is unpinned and at risk.
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('pin-badge')).toHaveText('Unpinned');
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('need-badge')).toHaveText('at risk');
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('need-badge')).toHaveClass(/need-at-risk/);
  await shot(page, 'images-before.png');

  // "Make every needed image durable": a preview first (nothing written), then apply.
  await banner.getByTestId('make-needed-durable').click();
  const dialog = page.getByRole('dialog', { name: 'Make every needed image durable' });
  await expect(dialog.getByTestId('plan-preview')).toBeVisible({ timeout: 20_000 });
  await expect(dialog).toContainText('Preview for every image the site needs on n1. Nothing changes until you apply.');
  const changes = dialog.getByTestId('plan-change');
  await expect(changes.filter({ hasText: SAMPLE })).toHaveCount(1);
  await expect(changes.filter({ hasText: 'holdfast-report' })).toHaveCount(0);
  await dialog.locator('details.unchanged summary').click();
  await expect(dialog.getByTestId('plan-unchanged').filter({ hasText: 'holdfast-report:1.0' })).toContainText('needed but not on the node; import it first');
  expect((await labelsOf(n1, SAMPLE))[CRI]).toBeUndefined(); // the preview changed nothing
  await shot(page, 'needed-preview.png');
  await dialog.getByTestId('apply-pins').click();
  await expect(dialog.getByTestId('apply-done')).toBeVisible({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Close' }).click();

  // What really happened on n1: a durable CRI pin, no k3s label; kubelet sees it pinned.
  const labels = await labelsOf(n1, SAMPLE);
  expect(labels[CRI]).toBe('pinned');
  expect(labels[K3S]).toBeUndefined();
  expect(await criPinned(n1, SAMPLE, true)).toBe(true);
  expect(await n1.containerdPid()).toBe(pid);
  expect(n1.containerdCrashes).toBe(0);
  await expect(banner.getByTestId('needs-headline')).toHaveText('1 needed image at risk', { timeout: 20_000 });
  await expect(banner.getByTestId('needs-item')).toHaveAttribute('data-ref', REPORT);
  await expect(banner.getByTestId('make-needed-durable')).toHaveCount(0);

  // The proof: k3s starts again on n1 (still no archive): the durable pin stays, and after a
  // Refresh only the missing CronJob image is at risk.
  const again = await emulateK3sStart(n1);
  expect(again.cleared).not.toContain(SAMPLE);
  // Count the node loads, so the Refresh below is known to have asked n1 again.
  const reportsBefore = suite.reports;
  await page.getByTestId('refresh-images').click();
  // (the desktop app runs its own service: the counter only sees the served UI's calls)
  if (holdfast.transport === 'http') await expect.poll(() => suite.reports, { timeout: 20_000 }).toBeGreaterThan(reportsBefore);
  await expect(page.getByTestId('refresh-images')).toHaveText('Refresh', { timeout: 20_000 });
  await expect(banner.getByTestId('needs-headline')).toHaveText('1 needed image at risk');
  await expect(banner.getByTestId('needs-item')).toHaveCount(1);
  await expect(banner.getByTestId('needs-item')).toHaveAttribute('data-ref', REPORT);
  await expect(banner.getByTestId('needs-item').getByTestId('need-badge')).toHaveText('missing');
  await expect(banner.getByTestId('make-needed-durable')).toHaveCount(0);
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('pin-badge')).toHaveText('Durable');
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('fate')).toHaveText('Kept');
  await expect(row(page, 'holdfast-sample:1.0').getByTestId('need-badge')).toHaveText('needed, kept');
  const after = await labelsOf(n1, SAMPLE);
  expect(after[CRI]).toBe('pinned');
  expect(after[K3S]).toBeUndefined();
  expect(await criPinned(n1, SAMPLE, true)).toBe(true);
  expect(await n1.containerdPid()).toBe(pid);
  await shot(page, 'images-after.png');

  // Back on the fleet overview: n1 is down to the missing image, n2 unchanged.
  await page.getByTestId('open-fleet').click();
  await expect(needed1).toHaveText('1', { timeout: 20_000 });
  await expect(needed2).toHaveText('1');
  await expect(fleetBanner).toContainText('2 needed images at risk on 2 nodes');
  // Only missing images are left: pinning cannot help them, and the banner does not offer it.
  await expect(fleetBanner.getByTestId('fleet-needed-nodes')).toContainText('where a copy of a missing one is, to import it');
  await expect(fleetBanner.getByTestId('fleet-needed-nodes')).not.toContainText('durable in one step');
  await shot(page, 'fleet-after.png');
  expect(errors).toEqual([]);
});
