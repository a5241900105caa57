// "Will a pod at this site fail?" in the app, over the real service and fake nodes whose clusters
// answer kubectl (test/doubles/cluster.ts): each image's site-need verdict in the images table and
// its details, the banner over the table (where the needs come from, the needed images at risk
// with where a missing one's copy is, and "Make every needed image durable" from preview to
// apply), the node banner on the other tabs, a node without a source of needs, the fleet
// overview's counts and banner, and the fleet matrix's flagged cells and rows of missing images.
// Screenshots at 1440×900 go to /tmp/needs-shots/.
import type { Handlers } from '../src/shared/handlers';
import { expect, openFromOverview, test, type Page, screenshotTo } from './fixtures';
import { REPORT_IMAGE } from '../test/doubles/cluster';
import { fakeService, type Scenario } from '../test/doubles/service';

const shotsDir = '/tmp/needs-shots';

test.use({ viewport: { width: 1440, height: 900 } });

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => {
  await fake?.dispose();
  fake = undefined;
});

async function open(holdfast: { open(o: { handlers: Handlers }): Promise<Page> }, scenario: Scenario = {}) {
  fake = await fakeService(scenario);
  const page = await holdfast.open({ handlers: fake.handlers });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await expect(page.getByTestId('fleet-overview')).toBeVisible();
  return { page, errors };
}

const shot = (page: Page, name: string): Promise<void> => screenshotTo(shotsDir, page, name);

const TELEMETRY = 'registry.site.lan/acme/telemetry-agent:2.4.1';
const COREDNS = 'docker.io/rancher/mirrored-coredns-coredns:1.12.0';
const LOCAL_PATH = 'docker.io/rancher/local-path-provisioner:v0.0.30';
const row = (page: Page, text: string) => page.getByTestId('image-row').filter({ hasText: text });

test('images panel: a site-need verdict per image, who needs it and why, and the needed images at risk with where a missing one is', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast, { reportArchive: true });
  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));

  const banner = page.getByTestId('needs-banner');
  await expect(banner.getByTestId('needs-headline')).toHaveText('4 needed images at risk');
  await expect(banner.getByTestId('needs-source')).toHaveText("Site needs from: kubectl on edge-01, containerd's CRI config");
  const items = banner.getByTestId('needs-item');
  await expect(items).toHaveCount(4);
  // Missing first, then not pinned, then losing their pin at the next k3s start.
  await expect(items.nth(0)).toHaveAttribute('data-ref', REPORT_IMAGE);
  await expect(items.nth(0).getByTestId('need-badge')).toHaveText('missing');
  await expect(items.nth(0)).toContainText('CronJob acme/nightly-report (CronJob between runs)');
  await expect(items.nth(0).getByTestId('needs-held-by')).toHaveText('A copy: jobs/nightly-report-1.0.tar in the images dir');
  await expect(items.nth(1)).toHaveAttribute('data-ref', TELEMETRY);
  await expect(items.nth(1).getByTestId('need-badge')).toHaveText('at risk');
  await expect(items.nth(1)).toContainText('Deployment acme/telemetry-agent (running)');
  await expect(items.nth(2)).toHaveAttribute('data-ref', LOCAL_PATH);
  await expect(items.nth(3)).toHaveAttribute('data-ref', COREDNS);
  await expect(items.nth(3).getByTestId('need-badge')).toHaveText('at risk at restart');
  await expect(banner.getByTestId('make-needed-durable')).toHaveText('Make every needed image durable');

  // The Site need column: each image's verdict, the at-risk ones as danger.
  await expect(page.getByRole('columnheader', { name: 'Site need' })).toBeVisible();
  const verdict = (text: string) => row(page, text).getByTestId('need-badge');
  await expect(verdict('nginx:1.27.3')).toHaveText('needed, kept');
  await expect(verdict('mirrored-pause:3.6')).toHaveText('needed, kept');
  await expect(verdict('coredns')).toHaveText('at risk at restart');
  await expect(verdict('coredns')).toHaveClass(/need-at-risk/);
  await expect(verdict('telemetry-agent')).toHaveText('at risk');
  await expect(verdict('klipper-helm')).toHaveText('reclaimable');
  await expect(verdict('klipper-helm')).not.toHaveClass(/need-at-risk/);
  await expect(verdict('node-exporter')).toHaveText('needed, kept');
  await shot(page, 'images-panel.png');

  // The row's details: the verdict, why, and every workload that needs it.
  await row(page, 'coredns').getByRole('button', { name: /Details of/ }).click();
  const details = page.getByTestId('need-details');
  await expect(details.getByTestId('need-because')).toHaveText(
    'needed by Deployment kube-system/coredns (running) and 2 more; loses its pin at the next k3s start',
  );
  const workloads = details.getByTestId('need-workload');
  await expect(workloads).toHaveCount(3);
  await expect(workloads.first()).toHaveText('Deployment kube-system/coredns (running)');
  await expect(details).toContainText(/ReplicaSet kube-system\/coredns-\w+ \(running\)/);
  await expect(details).toContainText(/Pod kube-system\/coredns-\w+-\w+ \(running\)/);
  await details.scrollIntoViewIfNeeded();
  await shot(page, 'images-details.png');

  // On the node's other tabs, the node banner says the same.
  await page.getByTestId('tab-archives').click();
  const nodeBanner = page.getByTestId('node-needs-banner');
  await expect(nodeBanner).toContainText('4 needed images at risk on edge-01: a pod that needs one may not start');
  await expect(nodeBanner.getByTestId('node-needs-list')).toHaveText(`${REPORT_IMAGE} (missing), ${TELEMETRY} (at risk), ${LOCAL_PATH} (at risk at restart) and 1 more`);
  await nodeBanner.getByTestId('node-needs-show').click();
  await expect(page.getByTestId('tab-images')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('node-needs-banner')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('"Make every needed image durable" previews the plan for { needed: true }, applies it, and leaves only the missing image at risk', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast, { reportArchive: true });
  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));
  await page.getByTestId('make-needed-durable').click();

  const dialog = page.getByRole('dialog', { name: 'Make every needed image durable' });
  await expect(dialog.getByTestId('plan-preview')).toBeVisible();
  await expect(dialog).toContainText('Preview for every image the site needs on edge-01. Nothing changes until you apply.');
  const changes = dialog.getByTestId('plan-change');
  for (const ref of [COREDNS, LOCAL_PATH, TELEMETRY]) await expect(changes.filter({ hasText: ref })).toHaveCount(1);
  // What is not pinned stays as it is, and the missing image says where its copy is.
  await expect(changes.filter({ hasText: 'klipper-helm' })).toHaveCount(0);
  await dialog.locator('details.unchanged summary').click();
  await expect(dialog.getByTestId('plan-unchanged').filter({ hasText: 'report:1.0' })).toContainText(
    'needed but not on the node: jobs/nightly-report-1.0.tar in the images dir holds it; import it first',
  );
  const plan = fake!.calls.filter((c) => c.channel === 'pins.plan');
  expect(plan.at(-1)?.args).toEqual({ node: 'edge-01', action: 'pin', target: { needed: true } });
  expect(fake!.calls.filter((c) => c.channel === 'pins.apply')).toHaveLength(0);
  await shot(page, 'needed-preview.png');

  await dialog.getByTestId('apply-pins').click();
  await expect(dialog.getByTestId('apply-done')).toBeVisible();
  expect(fake!.calls.filter((c) => c.channel === 'pins.apply').map((c) => c.args)).toEqual([{ node: 'edge-01', action: 'pin', target: { needed: true } }]);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Refreshed from the node: only the missing image is still at risk, and pinning cannot help it.
  const banner = page.getByTestId('needs-banner');
  await expect(banner.getByTestId('needs-headline')).toHaveText('1 needed image at risk');
  await expect(banner.getByTestId('needs-item')).toHaveAttribute('data-ref', REPORT_IMAGE);
  await expect(banner.getByTestId('make-needed-durable')).toHaveCount(0);
  await expect(row(page, 'coredns').getByTestId('need-badge')).toHaveText('needed, kept');
  await expect(row(page, 'telemetry-agent').getByTestId('need-badge')).toHaveText('needed, kept');
  expect(fake!.node('edge-01').containerd.records.get(COREDNS)!.labels['io.cattle.k3s.pinned']).toBeUndefined();
  expect(errors).toEqual([]);
});

test('fleet overview: needed images at risk per node, the fleet banner and summary line; a node without a source of needs says so', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast, { fleet: true, fleetUnreachableMs: 300 });
  const fleetRow = (node: string) => page.getByTestId(`fleet-row-${node}`);
  await expect(fleetRow('edge-01').getByTestId('fleet-needed')).toHaveText('4');
  await expect(fleetRow('edge-02').getByTestId('fleet-needed')).toHaveText('2');
  await expect(fleetRow('edge-03').getByTestId('fleet-needed')).toHaveText('4');
  await expect(fleetRow('edge-04').getByTestId('fleet-needed')).toHaveCount(0);
  await expect(fleetRow('edge-03').getByTestId('fleet-no-needs-source')).toHaveText('no source of site needs');
  await expect(fleetRow('edge-03').getByTestId('fleet-no-needs-source')).toHaveAttribute('title', /sudo -n refused kubectl/);
  await expect(fleetRow('edge-01').getByTestId('fleet-no-needs-source')).toHaveCount(0);
  await expect(fleetRow('edge-01').getByTestId('fleet-needed')).toHaveAttribute('title', new RegExp(`^4 needed images at risk: ${REPORT_IMAGE.replace(/\./g, '\\.')} \\(missing\\)`));
  const banner = page.getByTestId('fleet-needed-banner');
  await expect(banner).toContainText('10 needed images at risk on 3 nodes: a pod that needs one may not start');
  await expect(banner.getByTestId('fleet-needed-nodes')).toContainText('edge-01 (4), edge-02 (2), edge-03 (4).');
  await expect(banner.getByTestId('fleet-needed-nodes')).toContainText(
    '1 node has no source of site needs (marked under Connection): there, images from air-gap archives count as needed.',
  );
  await expect(page.getByTestId('fleet-summary')).toHaveText('4 nodes · 3 connected · 1 not connected · 10 needed images at risk');
  await expect(page.getByTestId('fleet-needs-ok')).toHaveCount(0);
  await shot(page, 'fleet-overview.png');

  // The node without a source: its images panel says why, and what counts as needed instead.
  await openFromOverview(page, 'edge-03', page.getByTestId('images-table'));
  await expect(page.getByTestId('needs-banner').getByTestId('needs-source')).toHaveText(
    'No source of site needs (sudo -n refused kubectl (sudo: a password is required)): images from air-gap archives count as needed',
  );
  await expect(page.getByTestId('needs-note')).toHaveCount(0);
  await expect(row(page, 'nginx:1.27.3').getByTestId('need-badge')).toHaveText('at risk');
  await expect(row(page, 'nginx:1.27.3').getByTestId('need-badge')).toHaveAttribute('title', /shows it came from an air-gap archive; not pinned: kubelet may delete it/);
  await shot(page, 'images-no-source.png');
  expect(errors).toEqual([]);
});

test('fleet matrix: a needed image at risk is flagged in its cell, a missing one is a row where the node lacks it, with where a copy is', async ({ holdfast }) => {
  test.setTimeout(60_000);
  const { page, errors } = await open(holdfast, { fleet: true, fleetUnreachableMs: 300 });
  await page.getByTestId('open-matrix').click();
  const matrix = page.getByTestId('fleet-matrix');
  await matrix.getByTestId('inspect-fleet').click();
  await expect(matrix.getByTestId('matrix-subtitle')).toContainText('Report of', { timeout: 15_000 });

  await expect(matrix.getByTestId('sum-needed')).toContainText('10');
  await expect(matrix.getByTestId('sum-needed')).toContainText('needed images at risk');
  await expect(matrix.getByTestId('mx-col-edge-01').getByTestId('mx-col-needed')).toHaveText('4 needed at risk');
  await expect(matrix.getByTestId('mx-col-edge-02').getByTestId('mx-col-needed')).toHaveText('2 needed at risk');

  const mxRow = (name: string) => matrix.locator(`[data-testid="mx-row"][data-name="${name}"]`);
  // edge-01 needs the report's image and lacks it; edge-02 has it (durable); edge-03 neither needs nor has it.
  const report = mxRow(REPORT_IMAGE);
  const cell = (r: ReturnType<typeof mxRow>, node: string) => r.locator(`[data-node="${node}"]`);
  await expect(cell(report, 'edge-01')).toHaveAttribute('data-pin', 'missing');
  await expect(cell(report, 'edge-01')).toHaveAttribute('data-need', 'missing');
  await expect(cell(report, 'edge-01').getByTestId('mx-need')).toBeVisible();
  await expect(cell(report, 'edge-01')).toHaveAttribute('title', /Site need: missing — needed by CronJob acme\/nightly-report \(CronJob between runs\); not on this node[\s\S]*A copy: node edge-02/);
  await expect(cell(report, 'edge-02')).toHaveAttribute('data-pin', 'durable');
  await expect(cell(report, 'edge-02').getByTestId('mx-need')).toHaveCount(0);
  await expect(cell(report, 'edge-03')).toHaveAttribute('data-pin', 'missing');
  await expect(cell(report, 'edge-03').getByTestId('mx-need')).toHaveCount(0);
  // Needed images on the node but at risk: flagged where they are at risk only.
  await expect(cell(mxRow(COREDNS), 'edge-01')).toHaveAttribute('data-need', 'losing');
  await expect(cell(mxRow(COREDNS), 'edge-02')).toHaveAttribute('data-need', 'losing');
  await expect(cell(mxRow('docker.io/library/nginx:1.27.3'), 'edge-03')).toHaveAttribute('data-need', 'unprotected');
  await expect(cell(mxRow('docker.io/library/nginx:1.27.3'), 'edge-01').getByTestId('mx-need')).toHaveCount(0);
  await expect(cell(mxRow(TELEMETRY), 'edge-01')).toHaveAttribute('data-need', 'unprotected');
  await expect(cell(mxRow(TELEMETRY), 'edge-02').getByTestId('mx-need')).toHaveCount(0);
  await shot(page, 'fleet-matrix.png');

  // The filter keeps the rows where a node needs the image and has it at risk.
  await matrix.getByTestId('mx-filter-needed').click();
  const names = await matrix.getByTestId('mx-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
  expect(names).toEqual(
    [
      'docker.io/library/nginx:1.27.3',
      'docker.io/rancher/klipper-helm:v0.9.3-build20241008',
      LOCAL_PATH,
      COREDNS,
      'docker.io/rancher/mirrored-pause:3.6',
      TELEMETRY,
      REPORT_IMAGE,
    ].sort(),
  );
  expect(errors).toEqual([]);
});

test('a node whose needed images are all on it and kept says where its needs come from, without a banner', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast);
  await page.getByTestId('node-item-edge-02').click();
  await page.getByRole('button', { name: 'Trust this host' }).click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  await expect(page.getByTestId('needs-ok')).toHaveText("Site needs from: kubectl on edge-02 · every needed image is on edge-02 and stays kept.");
  await expect(page.getByTestId('needs-banner')).toHaveCount(0);
  await expect(page.getByTestId('image-row').getByTestId('need-badge')).toHaveText('needed, kept');
  await expect(page.getByTestId('image-row').getByTestId('need-badge')).toHaveAttribute('title', /^needed by Pod default\/redis-0 \(running\) and 1 more; kept$/);
  // Nothing at risk: no count on the Images tab, no node banner on the others.
  await expect(page.getByTestId('tab-images').locator('.tab-count')).toHaveCount(0);
  await page.getByTestId('tab-archives').click();
  await expect(page.getByTestId('node-needs-banner')).toHaveCount(0);
  expect(errors).toEqual([]);
});
