// Credentials asked in the UI and the fleet matrix, over the real service and fake nodes: a node configured with
// password authentication asks for it in a dialog (wrong → AUTH_FAILED, right → connected, the
// secret nowhere afterwards); the fleet matrix fills in as nodes answer, shows the unreachable
// node's column greyed with its error, marks pins at risk and drift, filters, opens a node from
// its column header, and exports the report as a downloaded file.
import { mkdir, readFile } from 'node:fs/promises';
import { expect, test, type Page } from './fixtures';
import type { Handlers } from '../src/shared/handlers';
import { FAKE_PASSWORD } from '../test/doubles/catalog';
import { fakeService, type Scenario } from '../test/doubles/service';

const shotsDir = '/tmp/shots6';

let fake: Awaited<ReturnType<typeof fakeService>>;
test.afterEach(async () => fake?.dispose());

async function open(holdfast: { open(o: { handlers: Handlers }): Promise<Page> }, opts: Scenario = {}) {
  fake = await fakeService(opts);
  const page = await holdfast.open({ handlers: fake.handlers });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

test('password asked in a dialog: a wrong one fails with AUTH_FAILED, the right one connects, and the secret is gone afterwards', async ({ holdfast }) => {
  // Three connections (two attempts, then the fleet run's own) and a fleet run of four nodes.
  test.setTimeout(60_000);
  const bodies: string[] = [];
  const { page, errors } = await open(holdfast, { edge1Auth: 'password', fleet: true });
  page.on('response', (r) => {
    if (r.url().includes('/api/')) void r.text().then((t) => bodies.push(t), () => undefined);
  });
  // Connecting at start asks edge-01's password (via the event, or the pending list when the
  // event came before the page listened).
  const dialog = page.getByTestId('credentials-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('heading')).toHaveText('Password for root@10.20.0.11');
  const input = dialog.getByTestId('credentials-input-0');
  await expect(input).toHaveAttribute('type', 'password');
  await expect(input).toHaveAttribute('autocomplete', 'off');
  await expect(input).toBeFocused();
  await mkdir(shotsDir, { recursive: true });
  await input.fill('not-the-password');
  await page.screenshot({ path: `${shotsDir}/credentials-dialog.png`, caret: 'hide' });
  await dialog.getByTestId('credentials-submit').click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('node-item-edge-01').getByTestId('node-item-problem')).toHaveText('Authentication failed');

  // Connect again: asked again, with an empty input.
  await page.getByTestId('node-item-edge-01').click();
  await page.getByRole('button', { name: /^(Connect|Retry|Reconnect)/ }).first().click();
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('credentials-input-0')).toHaveValue('');
  await dialog.getByTestId('credentials-input-0').fill(FAKE_PASSWORD);
  await dialog.getByTestId('credentials-input-0').press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('node-item-edge-01').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected');
  await expect(page.getByTestId('images-table')).toBeVisible();

  // The password is nowhere: not in the DOM, not in any input, not in any later API answer,
  // and the fake recorded only that an answer came.
  const html = await page.content();
  expect(html).not.toContain(FAKE_PASSWORD);
  expect(html).not.toContain('not-the-password');
  const values = await page.locator('input').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
  expect(values.join('\n')).not.toContain(FAKE_PASSWORD);
  // Reload the views (more API answers) and check every answer body.
  await page.getByTestId('open-matrix').click();
  await page.getByTestId('inspect-fleet').click();
  // The fleet run opens its own connection to edge-01: the password is asked once more.
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('credentials-input-0')).toHaveValue('');
  await dialog.getByTestId('credentials-input-0').fill(FAKE_PASSWORD);
  await dialog.getByTestId('credentials-input-0').press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('matrix-subtitle')).toContainText('Report of', { timeout: 10_000 });
  await expect.poll(() => bodies.length).toBeGreaterThan(3);
  for (const b of bodies) {
    expect(b).not.toContain(FAKE_PASSWORD);
    expect(b).not.toContain('not-the-password');
  }
  expect(JSON.stringify(fake.calls)).not.toContain(FAKE_PASSWORD);
  expect(fake.calls.filter((c) => c.channel === 'credentials.answer')).toHaveLength(3);
  expect(errors).toEqual([]);
});

test('cancel sends no secret and leaves the node failed; keyboard-interactive shows the instructions and every prompt', async ({ holdfast }) => {
  const { page } = await open(holdfast, { edge1Auth: 'keyboard-interactive' });
  const dialog = page.getByTestId('credentials-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('credentials-instructions')).toHaveText('Site policy: password and the code from your token.');
  await expect(dialog.getByTestId('credentials-input-0')).toHaveAttribute('type', 'password');
  await expect(dialog.getByTestId('credentials-input-1')).toHaveAttribute('type', 'text');
  await expect(dialog.getByLabel('Verification code')).toBeVisible();
  await dialog.getByTestId('credentials-input-0').fill('secret-typed-then-cancelled');
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('node-item-edge-01').getByTestId('node-item-problem')).toHaveText('Authentication failed');
  expect(await page.content()).not.toContain('secret-typed-then-cancelled');
});

test('node form: group, sudo, jump host and authentication are saved; the sidebar groups nodes by site', async ({ holdfast }) => {
  const { page } = await open(holdfast, { fleet: true });
  await expect(page.getByTestId('node-group-north')).toContainText('edge-01');
  await expect(page.getByTestId('node-group-south')).toContainText('edge-04');
  await page.getByRole('button', { name: 'Add node' }).first().click();
  const form = page.getByTestId('node-form');
  await form.getByLabel(/^Name\b/).fill('edge-05');
  await form.getByLabel(/^Host\b/).fill('10.30.0.15');
  await form.getByLabel(/^Group\b/).fill('south');
  await form.getByLabel('Authentication').selectOption('password');
  await expect(form).toContainText('Asked in a dialog at each connection; never stored.');
  await form.getByText('Advanced').click();
  await form.getByLabel('Jump host').selectOption('edge-03');
  await form.getByLabel('Use sudo').check();
  await form.getByRole('button', { name: 'Add node' }).click();
  await expect(form).toHaveCount(0);
  const add = fake.calls.find((c) => c.channel === 'nodes.add');
  expect(add?.args).toEqual({ node: { name: 'edge-05', host: '10.30.0.15', group: 'south', jump: 'edge-03', sudo: true, auth: 'password' } });
  await expect(page.getByTestId('node-group-south')).toContainText('edge-05');
  // Adding a password node connects it: the dialog asks; cancel it.
  await expect(page.getByTestId('credentials-dialog')).toBeVisible();
  await page.getByTestId('credentials-cancel').click();
  await expect(page.getByTestId('credentials-dialog')).toHaveCount(0);
});

test('fleet matrix: partial results as nodes answer, unreachable column, pins at risk, drift filter, column header opens the node, HTML export downloads', async ({ holdfast }) => {
  // The unreachable node takes 8 s to time out, so the partial state is there to see (also on a
  // loaded machine: the other nodes run the real inventory).
  test.setTimeout(60_000);
  const { page, errors } = await open(holdfast, { fleet: true, fleetUnreachableMs: 8000 });
  await page.getByTestId('open-matrix').click();
  const matrix = page.getByTestId('fleet-matrix');
  await expect(matrix.getByTestId('matrix-empty')).toBeVisible();
  await matrix.getByTestId('inspect-fleet').click();
  // Progress while scanning, with partial results already in the matrix.
  await expect(matrix.getByTestId('matrix-progress')).toContainText(/[0-3] of 4 nodes answered/);
  await expect(matrix.getByTestId('mx-col-edge-01')).toHaveAttribute('data-status', 'ok');
  await expect(matrix.getByTestId('mx-col-edge-04')).toHaveAttribute('data-status', 'pending');
  await expect(matrix.getByTestId('mx-row').first()).toBeVisible();
  // Done: the full report.
  await expect(matrix.getByTestId('matrix-progress')).toHaveCount(0, { timeout: 10_000 });
  await expect(matrix.getByTestId('matrix-subtitle')).toContainText('Report of');
  // Unreachable: greyed column with the error, and its message and hint below.
  const col4 = matrix.getByTestId('mx-col-edge-04');
  await expect(col4).toHaveAttribute('data-status', 'unreachable');
  await expect(col4.getByTestId('mx-col-error')).toHaveText('Unreachable');
  await expect(matrix.getByTestId('matrix-unreachable')).toContainText('edge-04 was not inspected: 10.30.0.14:22 did not answer within 30 s.');
  await expect(matrix.getByTestId('matrix-unreachable')).toContainText('check the VPN or radio link');
  await expect(matrix.locator('[data-testid="mx-cell"][data-node="edge-04"]').first()).toHaveAttribute('data-pin', 'unknown');
  // Pins at risk: edge-01's coredns tag loses its pin at the next start.
  const coredns = matrix.locator('[data-testid="mx-row"][data-name="docker.io/rancher/mirrored-coredns-coredns:1.12.0"]');
  await expect(coredns.locator('[data-node="edge-01"]')).toHaveAttribute('data-at-risk', 'true');
  await expect(coredns.locator('[data-node="edge-01"]').getByTestId('mx-at-risk')).toBeVisible();
  // …and it is missing on edge-03: drift. Digest references are folded into their tag.
  await expect(coredns.locator('[data-node="edge-03"]')).toHaveAttribute('data-pin', 'missing');
  await expect(coredns).toHaveAttribute('data-drift', 'true');
  await expect(matrix.locator('[data-testid="mx-row"][data-name*="@sha256:"]')).toHaveCount(0);
  const nginx = matrix.locator('[data-testid="mx-row"][data-name="docker.io/library/nginx:1.27.3"]');
  await expect(nginx.locator('[data-node="edge-01"]')).toHaveAttribute('data-pin', 'durable');
  await expect(nginx.locator('[data-node="edge-03"]')).toHaveAttribute('data-pin', 'none');
  await expect(nginx).toHaveAttribute('data-drift', 'true');
  // Summary bar.
  // edge-01/02 lose pins, edge-03 is low on disk, edge-04 did not answer.
  await expect(matrix.getByTestId('sum-nodes-at-risk')).toContainText('4');
  await expect(matrix.getByTestId('sum-low-disk')).toContainText('1');
  await expect(matrix.getByTestId('sum-unreachable')).toContainText('1');
  await mkdir(shotsDir, { recursive: true });
  await page.screenshot({ path: `${shotsDir}/fleet-matrix.png` });

  // Drift filter: only rows where the nodes disagree.
  const total = await matrix.getByTestId('mx-row').count();
  await matrix.getByTestId('mx-filter-drift').click();
  const driftRows = matrix.getByTestId('mx-row');
  await expect(driftRows.first()).toBeVisible();
  expect(await driftRows.count()).toBeLessThan(total);
  for (const d of await driftRows.evaluateAll((els) => els.map((e) => e.getAttribute('data-drift')))) expect(d).toBe('true');
  await page.screenshot({ path: `${shotsDir}/fleet-matrix-drift.png` });
  // At-risk filter, search, group filter, unreachable filter.
  await matrix.getByTestId('mx-filter-atRisk').click();
  await expect(coredns).toBeVisible();
  await expect(nginx).toHaveCount(0);
  await matrix.getByTestId('mx-filter-all').click();
  // Two telemetry-agent versions: 2.4.1 on edge-01/02, 2.5.0 only on edge-03.
  await matrix.getByTestId('matrix-search').fill('telemetry');
  await expect(matrix.getByTestId('mx-row')).toHaveCount(2);
  await matrix.getByTestId('matrix-search').fill('coredns');
  await expect(matrix.getByTestId('mx-row')).toHaveCount(1);
  await matrix.getByTestId('matrix-search').fill('');
  await matrix.getByTestId('mx-filter-unreachable').click();
  await expect(matrix.getByTestId('mx-col-edge-04')).toBeVisible();
  await expect(matrix.getByTestId('mx-col-edge-01')).toHaveCount(0);
  await matrix.getByTestId('mx-filter-all').click();

  // Export: the HTML report downloads as a file.
  const [download] = await Promise.all([page.waitForEvent('download'), matrix.getByTestId('export-html').click()]);
  expect(download.suggestedFilename()).toMatch(/^holdfast-fleet-.*\.html$/);
  const content = await readFile((await download.path())!, 'utf8');
  expect(content.toLowerCase().startsWith('<!doctype html')).toBe(true);
  const [csv] = await Promise.all([page.waitForEvent('download'), matrix.getByTestId('export-csv').click()]);
  expect(csv.suggestedFilename()).toMatch(/\.csv$/);

  // Column header → that node's detail; back to the matrix keeps the report.
  await matrix.getByTestId('mx-col-edge-03').getByTestId('mx-col-open').click();
  await expect(page.getByRole('heading', { level: 1, name: 'edge-03' })).toBeVisible();
  await page.getByTestId('open-matrix').click();
  await expect(page.getByTestId('mx-col-edge-04')).toHaveAttribute('data-status', 'unreachable');
  expect(errors).toEqual([]);
});

test('fleet matrix: the last report loads on entering the view; a group limits the run', async ({ holdfast }) => {
  const { page } = await open(holdfast, { fleet: true });
  // A run finished before the window looked (e.g. started by another window).
  await fake.handlers['fleet.start']({});
  await expect.poll(() => fake.handlers['fleet.last']({}).then((r) => r !== null), { timeout: 10_000 }).toBe(true);
  await page.getByTestId('open-matrix').click();
  const matrix = page.getByTestId('fleet-matrix');
  await expect(matrix.getByTestId('matrix-subtitle')).toContainText('Report of');
  await expect(matrix.getByTestId('mx-col-edge-04')).toHaveAttribute('data-status', 'unreachable');
  await matrix.getByTestId('matrix-group').selectOption('north');
  await matrix.getByTestId('inspect-fleet').click();
  await expect(matrix.getByTestId('matrix-subtitle')).toContainText('in north', { timeout: 10_000 });
  await expect(matrix.getByTestId('mx-col-edge-04')).toHaveCount(0);
  await expect(matrix.getByTestId('mx-col-edge-01')).toBeVisible();
  expect(fake.calls.filter((c) => c.channel === 'fleet.start').at(-1)?.args).toEqual({ group: 'north' });
});
