// End-to-end over the LAB for the safe order docs/k3s-facts.md prescribes — verify → make the
// pins durable → remove the archive → verify — driven through the UI against a real node, then
// checked with ctr and a real k3s-start emulation: the pins must survive the next start.
import { expect, test, type Page } from './fixtures';
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { WrittenImage } from '../lab/fixtures.ts';
import { criPinned } from '../lab/cri.ts';
import { emulateK3sStart, labelsOf } from '../lab/k3s.ts';
import { k3sNodeWithApps, labSuite } from './lab-fixture';

const ARCHIVE = 'apps.tar';
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

let written: WrittenImage[] = [];
let archiveSha256 = '';

// The lab's known_hosts already lists the node: this spec is about pins, not first contact.
const suite = labSuite({
  nodes: ['edge1'],
  name: 'pins',
  async prepare({ lab }) {
    const node = lab.node('edge1');
    written = await k3sNodeWithApps(node, ARCHIVE);
    archiveSha256 = createHash('sha256').update(await readFile(path.join(node.hostImagesDir, ARCHIVE))).digest('hex');
  },
});

const rows = (page: Page) => page.getByTestId('image-row');
const archiveRow = (page: Page) => page.locator(`[data-testid="archive-row"][data-path="${ARCHIVE}"]`);

test('make an archive’s pins durable, remove it safely, and the pins survive the next k3s start', async ({ holdfast }) => {
  test.setTimeout(120_000);
  // The served UI (HTTP) or the desktop app (preload + IPC) over the same home: the fixture decides.
  const { page, errors } = await suite.open(holdfast);
  const node = suite.node('edge1');
  // The node runs containerd 2.x (what current k3s ships), which panics on a careless
  // Images.Update: the daemon that answers before "Apply" must be the one answering after.
  const pid = await node.containerdPid();
  expect(pid).not.toBeNull();
  await expect(page.getByTestId('images-table')).toBeVisible({ timeout: 20_000 });
  await expect(rows(page)).toHaveCount(2);
  for (const badge of await rows(page).getByTestId('pin-badge').all()) await expect(badge).toHaveText('k3s pin');

  // Archives tab lists the archive and the images it brings; removing it now is not safe.
  await page.getByRole('tab', { name: /Archives/ }).click();
  await expect(archiveRow(page)).toBeVisible({ timeout: 20_000 });
  await expect(archiveRow(page).getByTestId('archive-kind')).toHaveText('Archive');
  for (const img of written) await expect(archiveRow(page)).toContainText(img.name);
  await expect(archiveRow(page).getByTestId('archive-imported')).toHaveText('Imported');
  await expect(archiveRow(page).getByTestId('safe-to-remove')).toHaveText('Not safe to remove');

  // Make durable: preview first (nothing written yet), then apply.
  await archiveRow(page).getByRole('button', { name: /^Make durable/ }).click();
  const pin = page.getByTestId('pin-dialog');
  await expect(pin.getByTestId('plan-preview')).toBeVisible({ timeout: 20_000 });
  const changes = pin.getByTestId('plan-change');
  expect(await changes.count()).toBeGreaterThanOrEqual(2);
  for (const img of written) await expect(pin).toContainText(img.name);
  for (const img of written) expect((await labelsOf(node, img.name))[K3S]).toBe('pinned'); // preview changed nothing
  await pin.getByRole('button', { name: /^Apply \d+ changes?$/ }).click();
  await expect(pin.getByTestId('apply-done')).toBeVisible({ timeout: 20_000 });
  await pin.getByRole('button', { name: 'Close' }).click();

  for (const img of written) {
    const labels = await labelsOf(node, img.name);
    expect(labels[CRI]).toBe('pinned');
    expect(labels[K3S]).toBeUndefined();
    // and kubelet sees it pinned
    expect(await criPinned(node, img.configDigest, true)).toBe(true);
  }
  expect(await node.containerdPid()).toBe(pid);
  expect(node.containerdCrashes).toBe(0);
  await page.getByRole('tab', { name: /Images/ }).click();
  for (const img of written) {
    await expect(rows(page).filter({ hasText: img.name }).getByTestId('pin-badge')).toHaveText('Durable');
  }

  // Remove safely: the check allows it now; apply; the archive is gone.
  await page.getByRole('tab', { name: /Archives/ }).click();
  await expect(archiveRow(page).getByTestId('safe-to-remove')).toHaveText('Safe to remove', { timeout: 20_000 });
  await archiveRow(page).getByRole('button', { name: /^Remove safely/ }).click();
  const rm_ = page.getByTestId('remove-dialog');
  await expect(rm_.getByTestId('removal-allowed')).toBeVisible({ timeout: 20_000 });
  await expect(rm_.getByTestId('removal-image')).toHaveCount(written.length);
  await rm_.getByRole('button', { name: 'Remove archive' }).click();
  await expect(rm_.getByTestId('remove-done')).toBeVisible({ timeout: 20_000 });
  await expect(rm_.getByTestId('removed-sha256')).toContainText(archiveSha256);
  await rm_.getByRole('button', { name: 'Close' }).click();
  await expect(archiveRow(page)).toHaveCount(0);
  await expect(access(path.join(node.hostImagesDir, ARCHIVE))).rejects.toThrow();

  // The log records the removal with the archive's real sha256 (and the pin change before it).
  await page.getByRole('tab', { name: 'Log' }).click();
  const first = page.getByTestId('log-entry').first();
  await expect(first).toContainText('Removed archive', { timeout: 20_000 });
  await expect(first.getByTestId('log-sha256')).toContainText(archiveSha256);
  await expect(first.getByTestId('log-forced')).toHaveCount(0);
  await expect(page.getByTestId('log-entry').nth(1)).toContainText('Made durable');

  // The proof: k3s starts again; the durable pins stay.
  await emulateK3sStart(node);
  await page.getByRole('tab', { name: /Images/ }).click();
  await page.getByRole('button', { name: 'Refresh' }).click();
  for (const img of written) {
    const row = rows(page).filter({ hasText: img.name });
    await expect(row.getByTestId('pin-badge')).toHaveText('Durable');
    await expect(row.getByTestId('fate')).toHaveText('Kept');
    expect((await labelsOf(node, img.name))[CRI]).toBe('pinned');
    expect(await criPinned(node, img.configDigest, true)).toBe(true);
  }
  expect(await node.containerdPid()).toBe(pid);
  expect(errors).toEqual([]);
});
