// A technician's first hour with the app, over the real service and fake nodes (issue #33): the
// import wizard says why an archive is refused and will not go on without one it can import, and
// ticks every node that can take the import; long references keep their registry and their tag;
// the Disk tab counts a k3s pin the next start strips as the Images tab does, in one percentage
// format; the fleet overview names the real cause of a failed connection, as the node page does.
// Screenshots go to /tmp/ui-shots/.
import { expect, openFromOverview, test, type Page, screenshotTo } from './fixtures';
import { bundle } from '../test/doubles/bundles';
import { fakeService, type Scenario } from '../test/doubles/service';

const shotsDir = '/tmp/ui-shots';

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => {
  await fake?.dispose();
  fake = undefined;
});

async function open(holdfast: { open(o: { handlers: NonNullable<typeof fake>['handlers'] }): Promise<Page> }, scenario: Scenario = {}) {
  fake = await fakeService(scenario);
  const page = await holdfast.open({ handlers: fake.handlers });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

const shot = (page: Page, name: string): Promise<void> => screenshotTo(shotsDir, page, name);

const chosen = (page: Page, file: string) => page.locator(`[data-testid=chosen-archive][data-path="${bundle(file)}"]`);

test('import wizard: a refused archive says why in one clause (all of it on request), Next waits for one it can import, every reachable node is ticked', async ({ holdfast }) => {
  test.setTimeout(60_000);
  // Four nodes; edge-04 is behind a site link that is down.
  const { page, errors } = await open(holdfast, { fleet: true });
  await expect(page.getByTestId('fleet-row-edge-04').getByTestId('fleet-status')).toHaveText('Timed out');
  await expect(page.getByTestId('fleet-row-edge-03').getByTestId('fleet-status')).toHaveText('Connected');

  await page.getByTestId('open-import').click();
  const wizard = page.getByTestId('import-wizard');
  const next = wizard.getByRole('button', { name: /Next: review contents/ });
  await expect(next).toBeDisabled();
  await expect(wizard.getByTestId('next-blocked')).toHaveText('Add an archive to go on.');

  const field = wizard.getByLabel('Archive path');
  for (const f of ['broken.tar.gz', 'notes.tar.xz']) {
    await field.fill(bundle(f));
    await field.press('Enter');
  }
  // The reason on the archive's own line: one short clause, without the file name it repeats.
  const broken = chosen(page, 'broken.tar.gz');
  await expect(broken.getByTestId('chosen-reason').locator('summary')).toHaveText('Refused · truncated: the gzip stream ends before the end of the archive');
  const notes = chosen(page, 'notes.tar.xz');
  await expect(notes.getByTestId('chosen-reason').locator('summary')).toHaveText('Refused · does not end in a suffix k3s/RKE2 imports');
  // The long form: on hover (the whole message and what to do) ...
  await expect(notes.getByTestId('chosen-reason').locator('summary')).toHaveAttribute('title', /notes\.tar\.xz does not end in a suffix k3s\/RKE2 imports \(\.tar .*case-sensitive\) Recompress it/);
  // ... and opened from the keyboard.
  await expect(broken.getByTestId('chosen-reason-long')).toBeHidden();
  await broken.getByTestId('chosen-reason').locator('summary').focus();
  await page.keyboard.press('Enter');
  await expect(broken.getByTestId('chosen-reason-long')).toBeVisible();
  await expect(broken.getByTestId('chosen-reason-long')).toContainText('broken.tar.gz was refused: truncated: the gzip stream ends before the end of the archive');
  await expect(broken.getByTestId('chosen-reason-long')).toContainText('The file ends early: copy it again');

  // Nothing it could import: Next stays off, and says why.
  await expect(next).toBeDisabled();
  await expect(wizard.getByTestId('next-blocked')).toHaveText('None of these archives can be imported: remove them, or add another.');
  await expect(next).toHaveAccessibleDescription('None of these archives can be imported: remove them, or add another.');
  await shot(page, 'wizard-1-refused.png');

  await field.fill(bundle('telemetry-2.5.tar.gz'));
  await field.press('Enter');
  await expect(chosen(page, 'telemetry-2.5.tar.gz')).toContainText('docker · gzip');
  await expect(next).toBeEnabled();
  await expect(wizard.getByTestId('next-blocked')).toHaveCount(0);
  await expect(wizard.getByTestId('choose-status')).toHaveText('3 chosen, 1 can be imported');
  await shot(page, 'wizard-1-one-ok.png');

  await next.click();
  await expect(wizard.getByTestId('review-summary')).toHaveText('1 to import, 2 excluded');
  await wizard.getByRole('button', { name: /Next: choose nodes/ }).click();
  // Every node that can take the import is ticked; edge-04, whose connection failed, is not.
  const box = (n: string) => wizard.getByTestId(`pick-node-${n}`).getByRole('checkbox');
  for (const n of ['edge-01', 'edge-02', 'edge-03']) await expect(box(n)).toBeChecked();
  await expect(box('edge-04')).not.toBeChecked();
  await expect(wizard.getByTestId('pick-node-edge-04')).toContainText('Timed out');
  await expect(wizard.getByTestId('nodes-left-out')).toHaveText('Not ticked: edge-04 (its connection failed). Tick it to try anyway.');
  await expect(wizard.getByRole('button', { name: 'Import 1 archive to 3 nodes' })).toBeEnabled();
  await shot(page, 'wizard-3-nodes.png');

  // A choice made here is the user's: kept when going back and forth.
  await box('edge-02').uncheck();
  await wizard.getByRole('button', { name: 'Back', exact: true }).click();
  await wizard.getByRole('button', { name: /Next: choose nodes/ }).click();
  await expect(box('edge-02')).not.toBeChecked();
  await expect(box('edge-01')).toBeChecked();
  await expect(wizard.getByRole('button', { name: 'Import 1 archive to 2 nodes' })).toBeEnabled();
  expect(errors).toEqual([]);
});

/**
 * Each tag reference in the images table, as drawn: whether its path, name and tag are cut, and
 * how many characters of the path show (a monospace font: the path's full width over its length).
 */
async function tagRefs(page: Page) {
  return page.locator('[data-testid=image-ref].ref-tag').evaluateAll((lis) =>
    lis.map((li) => {
      const get = (c: string) => li.querySelector<HTMLElement>(`.ref-${c}`);
      const [path, base, suffix] = [get('path'), get('base'), get('suffix')];
      const cut = (e: HTMLElement | null) => (e ? e.scrollWidth > e.clientWidth + 0.5 : false);
      const ch = path && path.textContent ? path.scrollWidth / path.textContent.length : 0;
      return {
        name: li.getAttribute('title'),
        pathCut: cut(path),
        pathChars: path ? Math.round(path.clientWidth / ch) : 0,
        pathDirection: path ? getComputedStyle(path).direction : null,
        pathScrolled: path ? path.scrollLeft : 0,
        baseCut: cut(base),
        suffixCut: cut(suffix),
        order: [path, base, suffix].filter(Boolean).every((e, i, a) => i === 0 || a[i - 1]!.getBoundingClientRect().right <= e!.getBoundingClientRect().left + 0.5),
      };
    }),
  );
}

test('a long reference keeps the start of its registry and its tag; the middle gives way, the whole of it on hover', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast);
  await page.setViewportSize({ width: 1500, height: 860 });
  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));
  const coredns = 'docker.io/rancher/mirrored-coredns-coredns:1.12.0';
  const ref = page.locator('[data-testid=image-ref].ref-tag').filter({ hasText: 'mirrored-coredns-coredns' });
  await expect(ref).toHaveAttribute('title', coredns);
  await ref.scrollIntoViewIfNeeded();

  // At 1500 px the reference is a little wider than its cell: the path is cut at its end, left to
  // right, so the registry's start shows; the name and the tag show whole, in that order.
  let refs = await tagRefs(page);
  expect(refs.find((r) => r.name === coredns)).toMatchObject({ pathCut: true, pathDirection: 'ltr', pathScrolled: 0, baseCut: false, suffixCut: false, order: true });
  expect(refs.find((r) => r.name === coredns)!.pathChars).toBeGreaterThan(10);
  await ref.hover();
  await shot(page, 'refs-1500.png');

  // Narrower, the path gives way down to its first characters ("doc…") before the name is cut at all, and
  // the tag never is.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect.poll(async () => (await tagRefs(page)).find((r) => r.name === coredns)?.pathChars).toBeLessThan(8);
  refs = await tagRefs(page);
  for (const r of refs) {
    expect(r, r.name ?? '').toMatchObject({ suffixCut: false, order: true, pathScrolled: 0 });
    if (r.baseCut) expect(r.pathChars, `${r.name}: its name is cut while its path shows ${r.pathChars} characters`).toBeLessThanOrEqual(4);
    if (r.pathCut) expect(r.pathChars, `${r.name}: its registry's start is gone`).toBeGreaterThanOrEqual(4);
  }
  await shot(page, 'refs-1280.png');
  expect(errors).toEqual([]);
});

test('Disk tab: a k3s pin the next start strips is not counted as protection, as on the Images tab; one percentage format', async ({ holdfast }) => {
  const { page, errors } = await open(holdfast, { disk: true });
  // The fleet's near-GC marker in the same format.
  await expect(page.getByTestId('fleet-row-edge-01').getByTestId('fleet-near-gc')).toHaveText('disk 82 % · GC at 85 %');
  await openFromOverview(page, 'edge-01', page.getByTestId('images-table'));

  // The Images tab: klipper-helm and local-path-provisioner lose their pin at the next k3s start.
  const losing = ['docker.io/rancher/klipper-helm:v0.9.3-build20241008', 'docker.io/rancher/local-path-provisioner:v0.0.30'];
  for (const name of losing) {
    await expect(page.getByTestId('image-row').filter({ has: page.locator(`[title="${name}"]`) })).toHaveAttribute('data-fate', 'lose');
  }
  await page.getByTestId('tab-disk').click();
  await expect(page.getByTestId('disk-chart')).toBeVisible();

  // The Disk tab says the same of them: a k3s pin, lost at the next start.
  for (const name of losing) {
    const row = page.locator(`[data-testid=store-row][data-ref="${name}"]`);
    await expect(row.getByTestId('store-state')).toHaveAttribute('data-state', 'distro');
    await expect(row.getByTestId('store-state')).toHaveAttribute('data-fate', 'lose');
    await expect(row.getByTestId('fate')).toHaveText('Will lose pin');
  }
  // The pause image's k3s pin comes back from its archive at every start: kept, no warning.
  const pause = page.locator('[data-testid=store-row][data-ref="docker.io/rancher/mirrored-pause:3.6"]');
  await expect(pause.getByTestId('store-state')).toHaveAttribute('data-state', 'in-use');
  // The summary counts the losing ones apart from the pinned ones.
  const summary = page.getByTestId('disk-summary');
  await expect(summary).toContainText('2 lose their pin at the next k3s start');
  // node-exporter's durable pin is the one pin kept (the others are in use).
  await expect(summary).toContainText(' · 1 pinned · 2 lose their pin at the next k3s start · ');

  // Percentages: one decimal at most, no trailing ".0", the same in the chart, the thresholds,
  // the file system table and the banner.
  await expect(page.getByTestId('disk-used-text')).toHaveText('82 %');
  await expect(page.getByTestId('gc-high')).toHaveText('85 %');
  await expect(page.getByTestId('gc-low')).toHaveText('80 %');
  await expect(page.getByTestId('gc-thresholds')).toContainText('(95 % used)');
  await expect(page.getByTestId('fs-row').locator('td').last()).toHaveText('82 %');
  await expect(page.getByTestId('disk-near-gc')).toContainText("within 3 points of kubelet's GC threshold (85 %)");
  await expect(page.locator('.disk-legend')).toContainText('Eviction at 95 %');
  const text = await page.getByTestId('tabpanel-disk').innerText();
  expect(text).not.toMatch(/\d\.0 %/);
  expect(text).not.toMatch(/\d%/);
  await shot(page, 'disk-k3s-pin-lost.png');
  await page.getByTestId('store-table').scrollIntoViewIfNeeded();
  await page.locator(`[data-testid=store-row][data-ref="${losing[0]}"]`).scrollIntoViewIfNeeded();
  await shot(page, 'disk-store-table.png');
  expect(errors).toEqual([]);
});

test('fleet overview: a failed connection shows its real cause, the one the node page gives', async ({ holdfast }) => {
  test.setTimeout(60_000);
  // edge-01 logs in with a password; the wrong one is given.
  const { page } = await open(holdfast, { edge1Auth: 'password', fleet: true });
  const dialog = page.getByTestId('credentials-dialog');
  await dialog.getByTestId('credentials-input-0').fill('not-the-password');
  await dialog.getByTestId('credentials-submit').click();
  await expect(dialog).toHaveCount(0);

  const row1 = page.getByTestId('fleet-row-edge-01');
  await expect(row1.getByTestId('fleet-status')).toHaveText('Authentication failed');
  await expect(row1.getByTestId('fleet-cause')).toHaveText('root@10.20.0.11 refused the password.');
  await expect(row1.getByTestId('fleet-cause')).toHaveAttribute('title', /refused the password\.\nConnect again and type the password of this user on the node\.\nError code AUTH_FAILED/);
  const row4 = page.getByTestId('fleet-row-edge-04');
  await expect(row4.getByTestId('fleet-cause')).toHaveText('10.30.0.14:22 did not answer within 30 s.');
  await expect(page.getByTestId('fleet-row-edge-03').getByTestId('fleet-cause')).toHaveCount(0);
  await shot(page, 'fleet-real-cause.png');

  // The node page: the same cause.
  await page.getByTestId('node-item-edge-01').click();
  await expect(page.getByTestId('connection-error').locator('.error-message')).toHaveText('root@10.20.0.11 refused the password.');
  await page.getByTestId('node-item-edge-04').click();
  await expect(page.getByTestId('connection-error').locator('.error-message')).toHaveText('10.30.0.14:22 did not answer within 30 s.');
});
