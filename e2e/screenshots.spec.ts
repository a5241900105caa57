// The README's screenshots, generated from the suite (the real service over fake nodes: the same
// fleet every time) at 1280×800 into docs/screenshots/. Each shot is also a check: the view it shows
// must be there. Regenerate with `npx playwright test e2e/screenshots.spec.ts`.
import path from 'node:path';
import { expect, test, type Page, screenshotTo } from './fixtures';
import { bundle } from '../test/doubles/bundles';
import { fakeService } from '../test/doubles/service';

const out = path.resolve(import.meta.dirname, '..', 'docs', 'screenshots');

test.use({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });

let service: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => {
  await service?.dispose();
  service = undefined;
});

const shot = (page: Page, name: string): Promise<void> => screenshotTo(out, page, name);

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
  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  await wizard.getByLabel('Archive path').fill(bundle('telemetry-2.5.tar.gz'));
  await wizard.getByLabel('Archive path').press('Enter');
  await wizard.getByLabel('Archive path').fill(bundle('k3s-airgap-images-arm64.tar.zst'));
  await wizard.getByLabel('Archive path').press('Enter');
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  await expect(wizard.getByTestId('review-archive').filter({ hasText: 'telemetry-2.5.tar.gz' })).toHaveAttribute('data-state', 'ok');
  await expect(wizard.getByTestId('review-archive').filter({ hasText: 'k3s-airgap' })).toHaveAttribute('data-state', 'ok');
  await shot(page, 'import-wizard.png');
});

test('README screenshot: import wizard, straight into containerd (issue #35)', async ({ holdfast }) => {
  service = await fakeService();
  const page = await holdfast.open({ handlers: service.handlers });
  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  await wizard.getByLabel('Archive path').fill(bundle('telemetry-2.5.tar.gz'));
  await wizard.getByLabel('Archive path').press('Enter');
  await wizard.getByRole('button', { name: /Next: review contents/ }).click();
  await expect(wizard.getByTestId('review-archive')).toHaveAttribute('data-state', 'ok');
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
