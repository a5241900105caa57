// The README's screenshots, generated from the suite (the real service over fake nodes: the same
// fleet every time) at 1280×800 into docs/screenshots/. Each shot is also a check: the view it shows
// must be there. Regenerate with `npx playwright test e2e/screenshots.spec.ts`.
import path from 'node:path';
import { expect, test, type Page, screenshotTo } from './fixtures';
import { bundle } from '../test/doubles/bundles';
import { fakeService } from '../test/doubles/service';
import { DISTRIBUTION_SOURCE_PREFIX, peerServing, registryOf, type EmbeddedRegistryConfig } from '../src/shared/embeddedRegistry';

const out = path.resolve(import.meta.dirname, '..', 'docs', 'screenshots');

test.use({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });

let service: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => {
  await service?.dispose();
  service = undefined;
});

const shot = (page: Page, name: string): Promise<void> => screenshotTo(out, page, name);

/** The import wizard opened over the fake fleet, these bundles entered and their review reached. */
async function wizardWith(page: Page, bundles: string[]) {
  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  for (const b of bundles) {
    await wizard.getByLabel('Archive path').fill(bundle(b));
    await wizard.getByLabel('Archive path').press('Enter');
  }
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  for (const b of bundles) await expect(wizard.getByTestId('review-archive').filter({ hasText: b })).toHaveAttribute('data-state', 'ok');
  return wizard;
}

test('README screenshots: fleet overview, images at risk, pin preview, archives', async ({ holdfast }) => {
  test.setTimeout(60_000);
  service = await fakeService();
  const page = await holdfast.open({ handlers: service.handlers });

  await expect(page.getByTestId('fleet-row-edge-01').getByTestId('fleet-atRisk')).toHaveText('3');
  await shot(page, 'fleet-overview.png');

  await page.getByTestId('fleet-row-edge-01').click();
  await expect(page.getByTestId('at-risk-banner')).toBeVisible();
  await expect(page.getByTestId('image-row')).toHaveCount(8);
  await shot(page, 'images-at-risk.png');

  await page.getByTestId('banner-make-durable').click();
  const pin = page.getByTestId('pin-dialog');
  await expect(pin.getByTestId('plan-preview')).toBeVisible();
  await shot(page, 'pin-preview.png');
  await page.keyboard.press('Escape');
  await expect(pin).toHaveCount(0);

  await page.getByTestId('tab-archives').click();
  await expect(page.getByTestId('archive-row').first()).toBeVisible();
  await shot(page, 'archives.png');
});

test('README screenshot: import wizard', async ({ holdfast }) => {
  service = await fakeService();
  const page = await holdfast.open({ handlers: service.handlers });
  await wizardWith(page, ['telemetry-2.5.tar.gz', 'k3s-airgap-images-arm64.tar.zst']);
  await shot(page, 'import-wizard.png');
});

test('README screenshot: import wizard, straight into containerd (issue #35)', async ({ holdfast }) => {
  service = await fakeService();
  const page = await holdfast.open({ handlers: service.handlers });
  const wizard = await wizardWith(page, ['telemetry-2.5.tar.gz']);
  await wizard.getByRole('button', { name: /Next: choose nodes/ }).click();
  await wizard.getByRole('radio', { name: /Straight into containerd/ }).check();
  await expect(wizard.getByTestId('pin-implied')).toBeVisible();
  await expect(wizard.getByTestId('import-plan')).toContainText('send only the missing ones');
  await shot(page, 'import-direct.png');
});

test('README screenshot: fleet matrix', async ({ holdfast }) => {
  service = await fakeService({ fleet: true });
  const page = await holdfast.open({ handlers: service.handlers });
  await page.getByTestId('open-matrix').click();
  await page.getByTestId('inspect-fleet').click();
  await expect(page.getByTestId('matrix-subtitle')).toContainText('Report of', { timeout: 10_000 });
  await expect(page.getByTestId('mx-col-edge-04')).toHaveAttribute('data-status', 'unreachable');
  await shot(page, 'fleet-matrix.png');
});

test('README screenshots: the Disk tab (GC forecast with needed images) and the prune preview', async ({ holdfast }) => {
  service = await fakeService({ disk: true });
  const page = await holdfast.open({ handlers: service.handlers });
  await expect(page.getByTestId('fleet-row-edge-01').getByTestId('fleet-near-gc')).toBeVisible();
  await page.getByTestId('fleet-row-edge-01').click();
  await page.getByTestId('tab-disk').click();
  await expect(page.getByTestId('forecast-needed-banner')).toBeVisible();
  await expect(page.getByTestId('store-row')).toHaveCount(12);
  await shot(page, 'disk.png');

  await page.getByTestId('open-prune').click();
  const dialog = page.getByTestId('prune-dialog');
  await expect(dialog.getByTestId('prune-item')).toHaveCount(3);
  await dialog.getByTestId('prune-confirm').fill('edge-01');
  await shot(page, 'prune-preview.png');
});

test('README screenshot: the images view with the Peers column (k3s embedded registry)', async ({ holdfast }) => {
  service = await fakeService();
  // The fake nodes read no config: edge-01 answers as a server with embedded-registry: true that
  // mirrors docker.io, its content labelled as k3s labels it at import. Each reference's verdict
  // is the shared rule's (a tag without its digest reference is not advertised).
  const cfg: EmbeddedRegistryConfig = { enabled: 'on', from: '/etc/rancher/k3s/config.yaml', mirrors: ['docker.io'], notes: [] };
  const report = service.handlers['images.report'];
  service.handlers['images.report'] = async (args) => {
    const r = await report(args);
    if (args.node !== 'edge-01') return r;
    // The fake names its digest references after the catalog's digests, not its content's: named
    // here after their real target, as containerd names them.
    const images = r.images.map((i) => (i.name.includes('@sha256:') ? { ...i, name: `${i.name.slice(0, i.name.indexOf('@'))}@${i.digest}` } : i));
    const labels = new Map(images.map((i) => [i.digest, { [`${DISTRIBUTION_SOURCE_PREFIX}${registryOf(i.name) ?? ''}`]: 'library' }]));
    const serving = peerServing(images, cfg, labels);
    return { ...r, embeddedRegistry: cfg, images: images.map((i) => (serving.has(i.name) ? { ...i, peers: serving.get(i.name) } : i)) };
  };
  const page = await holdfast.open({ handlers: service.handlers });
  await page.getByTestId('fleet-row-edge-01').click();
  await expect(page.getByTestId('embedded-registry-summary')).toContainText('embedded registry: on, mirroring docker.io');
  await expect(page.getByRole('columnheader', { name: 'Peers' })).toBeVisible();
  await expect(page.getByTestId('peers-cell').filter({ hasText: 'peers can pull it' }).first()).toBeVisible();
  await shot(page, 'images-peers.png');
});
