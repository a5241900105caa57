// End-to-end over the LAB: a real k3s-like node (containerd + sshd in their own mount
// namespaces), the real service handlers, the loopback server and the built renderer in
// Chromium. Proves the first-contact story a technician lives: add the node through the UI →
// unknown host key → compare the fingerprint → trust → the node's images with their real pin state.
import { expect, test } from './fixtures';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WrittenImage } from '../lab/fixtures.ts';
import { k3sNodeWithApps, labSuite } from './lab-fixture';

const shots = process.env['HOLDFAST_SCREENSHOTS'];

let written: WrittenImage[] = [];
let knownHosts: string;

const suite = labSuite({
  nodes: ['edge1'],
  name: 'images',
  // No node configured: the technician adds it through the UI.
  addNodes: false,
  async prepare({ lab, dir }) {
    written = await k3sNodeWithApps(lab.node('edge1'));
    knownHosts = path.join(dir, 'known_hosts');
    await writeFile(knownHosts, ''); // empty: the node's key is unknown on first contact
  },
});

test('add the node in the UI → unknown host key → trust the lab node’s fingerprint → its two images, pinned by k3s', async ({ holdfast }) => {
  test.setTimeout(90_000);
  // The served UI (HTTP) or the desktop app (preload + IPC) over the same home: the fixture decides.
  const { page, errors } = await suite.open(holdfast);
  const node = suite.node('edge1');

  // Nothing configured yet: the empty state says what to do.
  await expect(page.getByText('Add a node by its SSH address')).toBeVisible();
  await page.getByRole('main').getByRole('button', { name: 'Add node' }).click();
  const form = page.getByRole('dialog', { name: 'Add node' });
  await form.getByLabel(/^Name\b/).fill('edge1');
  await form.getByLabel(/^Host\b/).fill(node.host);
  await form.getByLabel('Port').fill(String(node.port));
  await form.getByLabel('Identity file').fill(suite.lab.clientKey);
  await form.getByLabel('known_hosts file').fill(knownHosts);
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form).toHaveCount(0);

  await expect(page.getByRole('navigation', { name: 'Nodes' }).getByRole('button', { name: /edge1/ })).toBeVisible();
  await expect(page.getByRole('heading', { level: 1, name: 'edge1' })).toBeVisible();

  // First contact: the key is not in the (empty) known_hosts file.
  const panel = page.getByTestId('host-key-unknown');
  await expect(panel).toBeVisible({ timeout: 20_000 });
  await expect(panel.getByTestId('fingerprint')).toHaveText(node.hostKeyFingerprint);
  expect(await readFile(knownHosts, 'utf8')).toBe('');
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-hostkey.png') });

  await panel.getByRole('button', { name: 'Trust this host' }).click();
  await expect(page.getByTestId('node-item-edge1').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected', {
    timeout: 20_000,
  });
  // Trust recorded the key, and only for this node.
  const recorded = await readFile(knownHosts, 'utf8');
  expect(recorded).toContain(`[${node.host}]:${node.port}`);

  const table = page.getByTestId('images-table');
  await expect(table).toBeVisible({ timeout: 20_000 });
  const rows = page.getByTestId('image-row');
  await expect(rows).toHaveCount(2);
  for (const img of written) {
    const row = rows.filter({ hasText: img.name });
    await expect(row).toHaveCount(1);
    // The tag and the name@sha256:<manifest digest> reference k3s adds, grouped as one image.
    await expect(row.getByTestId('image-ref')).toHaveCount(2);
    await expect(row.getByTestId('pin-badge')).toHaveText('k3s pin');
  }
  await expect(page.getByTestId('filter-distro')).toContainText('2');
  // The header names the release the node's k3s answers.
  await expect(page.getByTestId('node-distro').locator('dt')).toHaveText('k3s');
  await expect(page.getByTestId('node-distro').locator('dd')).toHaveText('v1.33.7+k3s1');
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-images.png') });
  expect(errors).toEqual([]);
});
