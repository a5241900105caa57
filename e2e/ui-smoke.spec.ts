// UI smoke test: the built renderer served by startServer with in-test fake handlers.
import { expect, test, type Page } from '@playwright/test';
import path from 'node:path';
import { startServer, type RunningServer } from '../src/server/http';
import { fakeHandlers, FINGERPRINT, OLD_FINGERPRINT, type FakeOptions } from './fake-handlers';

const rendererDir = path.resolve(import.meta.dirname, '..', 'out', 'renderer');
const shots = process.env['HOLDFAST_SCREENSHOTS'];

let server: RunningServer;
let fake: ReturnType<typeof fakeHandlers>;

async function serve(opts: FakeOptions = {}) {
  fake = fakeHandlers(opts);
  server = await startServer({ handlers: fake.handlers, rendererDir });
}

test.afterEach(async () => {
  await server?.close();
});

async function openApp(page: Page) {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await expect(page.getByTestId('images-table')).toBeVisible();
  return errors;
}

const rows = (page: Page) => page.getByTestId('image-row');

test('lists nodes and groups references by image id, with pin badges', async ({ page }) => {
  await serve();
  const errors = await openApp(page);

  // The token moved from the address bar into sessionStorage.
  expect(new URL(page.url()).searchParams.has('token')).toBe(false);

  const sidebar = page.getByRole('navigation', { name: 'Nodes' });
  await expect(sidebar.getByRole('button', { name: /edge-01/ })).toBeVisible();
  await expect(sidebar.getByRole('button', { name: /edge-02/ })).toBeVisible();
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  await expect(page.getByTestId('node-item-edge-02').getByTestId('status-dot')).toHaveAttribute('data-state', 'error');

  await expect(page.getByRole('heading', { level: 1, name: 'edge-01' })).toBeVisible();
  await expect(page.getByTestId('node-versions')).toContainText('v2.0.4-k3s2');
  await expect(page.getByTestId('node-versions')).toContainText('v1.31.6+k3s1');

  // 8 references, 6 image ids → 6 rows.
  await expect(rows(page)).toHaveCount(6);
  const nginx = rows(page).filter({ hasText: 'nginx:1.27.3' });
  await expect(nginx).toHaveCount(1);
  await expect(nginx.getByTestId('image-ref')).toHaveCount(2);
  await expect(nginx).toContainText('docker.io/library/nginx@sha256:a1a1a1a1a1a1');
  await expect(nginx.getByTestId('pin-badge')).toHaveText('Durable');
  await expect(nginx).toContainText('4e4e4e4e4e4e'); // short image id
  await expect(nginx).toContainText('69.1 MiB');

  await expect(rows(page).filter({ hasText: 'mirrored-pause:3.6' }).getByTestId('pin-badge')).toHaveText('k3s pin');
  await expect(rows(page).filter({ hasText: 'telemetry-agent' }).getByTestId('pin-badge')).toHaveText('Unpinned');

  // Counts on the filter buttons.
  await expect(page.getByTestId('filter-all')).toContainText('6');
  await expect(page.getByTestId('filter-durable')).toContainText('2');
  await expect(page.getByTestId('filter-k3s')).toContainText('2');
  await expect(page.getByTestId('filter-none')).toContainText('2');

  if (shots) {
    await page.screenshot({ path: path.join(shots, 'holdfast-images.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(shots, 'holdfast-images-dark.png') });
  }
  expect(errors).toEqual([]);
});

test('search and pin filter narrow the table; sorting works', async ({ page }) => {
  await serve();
  await openApp(page);
  const search = page.getByRole('searchbox', { name: 'Search images' });

  await search.fill('telemetry');
  await expect(rows(page)).toHaveCount(1);
  await search.fill('Acme Field'); // label value
  await expect(rows(page)).toHaveCount(1);
  await search.fill('sha256:6f6f6f'); // image id
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page)).toContainText('mirrored-pause:3.6');
  await search.fill('c3c3c3c3'); // target digest
  await expect(rows(page)).toContainText('coredns');
  await search.fill('nothing-like-this');
  await expect(page.getByTestId('images-no-match')).toContainText('No images match');
  await page.getByRole('button', { name: 'Clear search and filter' }).click();
  await expect(rows(page)).toHaveCount(6);

  await page.getByRole('button', { name: /^k3s/ }).click();
  await expect(page.getByTestId('filter-k3s')).toHaveAttribute('aria-pressed', 'true');
  await expect(rows(page)).toHaveCount(2);
  for (const badge of await page.getByTestId('pin-badge').all()) await expect(badge).toHaveText('k3s pin');
  await search.fill('coredns');
  await expect(rows(page)).toHaveCount(1);
  await search.fill('');
  await page.getByRole('button', { name: /^Durable/ }).click();
  await expect(rows(page)).toHaveCount(2);
  await page.getByRole('button', { name: /^Unpinned/ }).click();
  await expect(rows(page)).toHaveCount(2);
  await page.getByRole('button', { name: /^All/ }).click();

  // Sort by size, largest first, then ascending.
  await page.getByRole('button', { name: /^Size/ }).click();
  await expect(rows(page).first()).toContainText('telemetry-agent');
  await page.getByRole('button', { name: /^Size/ }).click();
  await expect(rows(page).first()).toContainText('mirrored-pause');
  await expect(page.getByRole('columnheader', { name: /Size/ })).toHaveAttribute('aria-sort', 'ascending');

  // Refresh lists again.
  const before = fake.calls.filter((c) => c.channel === 'images.list').length;
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.getByRole('button', { name: 'Refresh' })).toBeEnabled();
  expect(fake.calls.filter((c) => c.channel === 'images.list').length).toBe(before + 1);
});

test('unknown host key: shows the fingerprint, Trust records it and reconnects', async ({ page }) => {
  await serve();
  await openApp(page);
  await page.getByRole('button', { name: /edge-02/ }).click();

  const panel = page.getByTestId('host-key-unknown');
  await expect(panel).toBeVisible();
  await expect(panel.getByRole('heading', { name: 'Unknown host key' })).toBeVisible();
  await expect(panel.getByTestId('fingerprint')).toHaveText(FINGERPRINT);
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-hostkey.png') });

  // Cancel leaves the node unconnected and trusts nothing.
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('not-connected')).toBeVisible();
  expect(fake.calls.some((c) => c.channel === 'nodes.trustHostKey')).toBe(false);

  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  await page.getByRole('button', { name: 'Trust this host' }).click();
  await expect(page.getByTestId('images-table')).toBeVisible();
  await expect(rows(page)).toHaveCount(1);
  await expect(page.getByTestId('node-item-edge-02').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  expect(fake.calls.filter((c) => c.channel === 'nodes.trustHostKey')).toEqual([
    { channel: 'nodes.trustHostKey', args: { name: 'edge-02', fingerprint: FINGERPRINT } },
  ]);
});

test('changed host key is a blocking error with both fingerprints and no trust button', async ({ page }) => {
  await serve({ edge2HostKey: 'changed' });
  await openApp(page);
  await page.getByRole('button', { name: /edge-02/ }).click();
  const panel = page.getByTestId('host-key-changed');
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId('expected-fingerprint')).toHaveText(OLD_FINGERPRINT);
  await expect(panel.getByTestId('fingerprint')).toHaveText(FINGERPRINT);
  await expect(panel).toContainText('ssh-keygen -R');
  await expect(page.getByRole('button', { name: 'Trust this host' })).toHaveCount(0);
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-hostkey-changed.png') });
});

test('add, edit and remove a node', async ({ page }) => {
  await serve();
  await openApp(page);

  await page.getByRole('button', { name: 'Add node' }).first().click();
  const form = page.getByRole('dialog', { name: 'Add node' });
  await expect(form).toBeVisible();
  // Client-side validation before anything is sent.
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form.getByLabel(/^Name\b/)).toHaveAttribute('aria-invalid', 'true');
  expect(fake.calls.some((c) => c.channel === 'nodes.add')).toBe(false);

  await form.getByLabel(/^Name\b/).fill('edge-01');
  await form.getByLabel(/^Host\b/).fill('10.20.0.99');
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form.getByRole('alert')).toContainText('already exists'); // server-side CONFLICT

  await form.getByLabel(/^Name\b/).fill('edge-03');
  await form.getByLabel('Port').fill('2200');
  await form.getByLabel('Identity file').fill('/home/tech/.ssh/id_ed25519');
  await form.getByText('Advanced').click();
  await form.getByLabel('Namespace').fill('k8s.io');
  if (shots) await page.screenshot({ path: path.join(shots, 'holdfast-add-node.png') });
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form).toBeHidden();
  expect(fake.calls.filter((c) => c.channel === 'nodes.add').at(-1)?.args).toEqual({
    node: { name: 'edge-03', host: '10.20.0.99', port: 2200, identity: '/home/tech/.ssh/id_ed25519', namespace: 'k8s.io' },
  });
  // The fake cannot reach edge-03: other errors show message, hint and Retry.
  const err = page.getByTestId('connection-error');
  await expect(err).toContainText('Cannot reach 10.20.0.99:2200.');
  await expect(err).toContainText('Check the address');
  await expect(err.getByRole('button', { name: 'Retry' })).toBeVisible();
  await expect(page.getByTestId('node-item-edge-03').getByTestId('status-dot')).toHaveAttribute('data-state', 'error');

  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit node edge-03' });
  await expect(edit.getByLabel(/^Host\b/)).toHaveValue('10.20.0.99');
  await edit.getByLabel(/^Host\b/).fill('10.20.0.13');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByTestId('node-item-edge-03')).toContainText('10.20.0.13');

  await page.getByRole('button', { name: 'Remove' }).click();
  const confirm = page.getByRole('dialog', { name: 'Remove edge-03?' });
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('node-item-edge-03')).toBeVisible();
  await page.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog', { name: 'Remove edge-03?' }).getByRole('button', { name: 'Remove node' }).click();
  await expect(page.getByTestId('node-item-edge-03')).toHaveCount(0);
  expect(fake.calls.filter((c) => c.channel === 'nodes.remove')).toEqual([
    { channel: 'nodes.remove', args: { name: 'edge-03' } },
  ]);
});

test('keyboard: the filter and sort controls are reachable and operable', async ({ page }) => {
  await serve();
  await openApp(page);
  await page.getByRole('searchbox', { name: 'Search images' }).focus();
  await page.keyboard.press('Tab'); // "All"
  await page.keyboard.press('Tab'); // "Durable"
  await expect(page.getByTestId('filter-durable')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(rows(page)).toHaveCount(2);
});
