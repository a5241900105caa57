// The Disk tab over the real service and fake nodes (test/doubles/data.ts: edge-01 at 82 % with older
// versions of its telemetry agent): the image file system against kubelet's thresholds, the GC forecast with
// the images the site needs flagged, the image store by image, the fleet overview's near-GC
// marker, and Prune from plan through typed confirmation to the result and the node's log.
import { expect, openFromOverview, test, type Page } from './fixtures';
import { fakeService } from '../test/doubles/service';

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => fake?.dispose());

const TELEMETRY = 'registry.site.lan/acme/telemetry-agent';

async function openDisk(page: Page) {
  await openFromOverview(page, 'edge-01', page.getByTestId('tab-disk'));
  await page.getByTestId('tab-disk').click();
  await expect(page.getByTestId('disk-chart')).toBeVisible();
}

test('the fleet overview marks a node close to kubelet’s image GC threshold', async ({ holdfast }) => {
  fake = await fakeService({ disk: true });
  const page = await holdfast.open({ handlers: fake.handlers });
  const row = page.getByTestId('fleet-row-edge-01');
  await expect(row.getByTestId('fleet-near-gc')).toHaveText('disk 82 % · GC at 85 %');
  await expect(page.getByTestId('fleet-row-edge-02').getByTestId('fleet-near-gc')).toHaveCount(0);
  await expect(page.getByTestId('fleet-near-gc-note')).toContainText('1 node is within 5 points');
  // the overview asked only for file systems and thresholds, not for the whole image store
  expect(fake!.calls.filter((c) => c.channel === 'disk.picture').map((c) => c.args)).toContainEqual({ node: 'edge-01', images: false });
});

test('Disk tab: usage against the thresholds, what GC would delete first with the needed images flagged, the store by image', async ({ holdfast }) => {
  fake = await fakeService({ disk: true });
  const page = await holdfast.open({ handlers: fake.handlers });
  await openDisk(page);

  await expect(page.getByTestId('disk-near-gc')).toContainText("within 3 points of kubelet's GC threshold (85 %)");
  // One percentage format (shared/format formatPercent): no trailing ".0".
  await expect(page.getByTestId('disk-used-text')).toHaveText('82 %');
  // the bar's marks sit at the thresholds (viewBox 0..1000 = 0..100 %), the forecast band below the high mark
  await expect(page.getByTestId('disk-mark-high')).toHaveAttribute('x1', '850');
  await expect(page.getByTestId('disk-mark-low')).toHaveAttribute('x1', '800');
  await expect(page.getByTestId('disk-mark-evict')).toHaveAttribute('x1', '950');
  await expect(page.getByTestId('disk-forecast-band')).toBeVisible();
  await expect(page.getByTestId('gc-high')).toHaveText('85 %');
  await expect(page.getByTestId('gc-low')).toHaveText('80 %');
  await expect(page.getByTestId('gc-thresholds')).toContainText("kubelet's default");

  const f = page.getByTestId('gc-forecast');
  const deleted = f.getByTestId('forecast-list').getByTestId('forecast-step');
  await expect(deleted).toHaveCount(4);
  await expect(deleted.nth(0)).toHaveAttribute('data-ref', 'docker.io/library/busybox:1.36');
  await expect(deleted.nth(1)).toHaveAttribute('data-ref', `${TELEMETRY}:2.2.0`);
  await expect(deleted.nth(2)).toHaveAttribute('data-ref', 'docker.io/library/redis:7.2');
  await expect(deleted.nth(3)).toHaveAttribute('data-ref', `${TELEMETRY}:2.4.0`);
  await expect(deleted.nth(3).getByTestId('needed-why')).toHaveAttribute('data-kind', 'rollback');
  await expect(deleted.nth(0).getByTestId('needed-why')).toHaveAttribute('data-kind', 'archive');
  await expect(f.getByTestId('forecast-needed-banner')).toContainText(`kubelet would delete 2 images this site needs: docker.io/library/busybox:1.36, ${TELEMETRY}:2.4.0`);
  await expect(f.getByTestId('forecast-summary')).toContainText('the disk really gets');
  await expect(f.getByTestId('forecast-order-note')).toContainText('approximates');
  // the tab says there is something to look at
  await expect(page.getByTestId('tab-disk')).toContainText('2');

  const store = page.getByTestId('store-row');
  await expect(store).toHaveCount(12);
  await expect(page.locator('[data-testid=store-row][data-ref="docker.io/library/nginx:1.27.3"]')).toHaveAttribute('data-state', 'in-use');
  await expect(page.locator(`[data-testid=store-row][data-ref="${TELEMETRY}:2.3.2"]`)).toHaveAttribute('data-state', 'unprotected');
  await expect(page.getByTestId('fs-row')).toHaveCount(1);
  await expect(page.getByTestId('fs-row')).toContainText('images dir, content store, snapshots');
});

test('Prune: plan, typed confirmation, apply, result; the disk, images and log refresh', async ({ holdfast }) => {
  fake = await fakeService({ disk: true });
  const page = await holdfast.open({ handlers: fake.handlers });
  await openDisk(page);
  await page.getByTestId('open-prune').click();
  const dialog = page.getByTestId('prune-dialog');
  const items = dialog.getByTestId('prune-preview').getByTestId('prune-item');
  await expect(items).toHaveCount(3);
  await expect(dialog.getByTestId('prune-summary')).toContainText('3 of 12 images will be removed from edge-01');
  await dialog.getByTestId('prune-kept').locator('summary').click();
  await expect(dialog.locator('[data-testid=prune-kept-item][data-reason=rollback]')).toContainText(`${TELEMETRY}:2.4.0`);
  await expect(dialog.locator('[data-testid=prune-kept-item][data-reason=archive]')).toContainText('busybox');

  // one kept version: the rollback image would go too (nothing applied)
  await dialog.getByTestId('prune-keep-versions').fill('1');
  await expect(items).toHaveCount(4);
  expect(fake!.calls.filter((c) => c.channel === 'prune.plan').at(-1)?.args).toEqual({ node: 'edge-01', keepVersions: 1 });
  await dialog.getByTestId('prune-keep-versions').fill('2');
  await expect(items).toHaveCount(3);

  const apply = dialog.getByTestId('apply-prune');
  await expect(apply).toBeDisabled();
  await dialog.getByTestId('prune-confirm').fill('edge-02');
  await expect(apply).toBeDisabled();
  await dialog.getByTestId('prune-confirm').fill('edge-01');
  await expect(apply).toBeEnabled();
  expect(fake!.calls.filter((c) => c.channel === 'prune.apply')).toHaveLength(0);
  await apply.click();

  await expect(dialog.getByTestId('prune-done')).toContainText('Removed 3 images');
  const applied = fake!.calls.find((c) => c.channel === 'prune.apply')!.args as { images: string[]; confirm: string; keepVersions: number };
  expect(applied.confirm).toBe('edge-01');
  expect(applied.keepVersions).toBe(2);
  expect(applied.images).toHaveLength(3);
  await dialog.getByRole('button', { name: 'Close' }).click();

  await expect(page.getByTestId('store-row')).toHaveCount(9);
  await expect(page.getByTestId('disk-summary')).toContainText('9 images');
  await page.getByTestId('tab-log').click();
  const entry = page.locator('[data-testid=log-entry][data-action=prune]');
  await expect(entry).toContainText('Pruned images');
  await expect(entry).toContainText('3 images removed');
  await expect(entry.getByTestId('log-pruned-image')).toHaveCount(3);
});
