// The guards in the fleet matrix (#50), over the real service and fake nodes whose
// /var/lib/holdfast/guard-state.json says edge-01's guard ran two minutes ago (re-pinned nginx,
// lacks the nightly report), edge-02's last run failed and edge-03's stopped in March 2025: each
// column head and the Guard table say so in the rule's words. Ticking images and "Save as pin
// set…" downloads (under serve) the ConfigMap manifest, whose pin set the parser guard uses reads.
import { mkdir, readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { expect, test } from './fixtures';
import { parsePinSet } from '../src/shared/pinSet';
import { REPORT_IMAGE } from '../test/doubles/cluster';
import { fakeService } from '../test/doubles/service';

const shotsDir = '/tmp/shots-guardviews';

let fake: Awaited<ReturnType<typeof fakeService>>;
test.afterEach(async () => fake?.dispose());

test('the fleet matrix shows each node guard, and saves the ticked images as a pin set', async ({ holdfast }) => {
  test.setTimeout(60_000);
  fake = await fakeService({ fleet: true, fleetUnreachableMs: 300 });
  const page = await holdfast.open({ handlers: fake.handlers });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.getByTestId('open-matrix').click();
  const matrix = page.getByTestId('fleet-matrix');
  await matrix.getByTestId('inspect-fleet').click();
  await expect(matrix.getByTestId('matrix-subtitle')).toContainText('Report of', { timeout: 10_000 });

  // Under each node's column head: a word or two, the sentence in its title.
  const mark = (node: string) => matrix.getByTestId(`mx-col-${node}`).getByTestId('mx-col-guard');
  await expect(mark('edge-01')).toHaveText('guard running');
  await expect(mark('edge-01')).toHaveAttribute('title', /^guard keeps pin set north, last ran .+ UTC: made 1 reference durable \(1 restored\); could not fix 1 missing image$/);
  await expect(mark('edge-02')).toHaveText('guard failing');
  await expect(mark('edge-03')).toHaveText('guard stopped');
  await expect(mark('edge-04')).toHaveCount(0);

  // The Guard table: state, pin set, last run, and what the run did or could not do.
  const row = (node: string) => matrix.getByTestId(`guard-row-${node}`);
  await expect(row('edge-01').getByTestId('guard-status')).toHaveText('guard running');
  await expect(row('edge-01').getByTestId('guard-pin-set')).toContainText('north');
  await expect(row('edge-01').getByTestId('guard-words')).toContainText('made durable: docker.io/library/nginx:1.27.3 (restored: pin label removed)');
  await expect(row('edge-01').getByTestId('guard-words')).toContainText(`missing: ${REPORT_IMAGE}`);
  await expect(row('edge-02').getByTestId('guard-words')).toContainText('guard failing: its run at');
  await expect(row('edge-02').getByTestId('guard-words')).toContainText('(containerd is not answering on /run/k3s/containerd/containerd.sock (connection refused))');
  await expect(row('edge-03').getByTestId('guard-words')).toHaveText('guard not running since 2025-03-01 06:00 UTC (pin set north, runs every 5 min)');
  await expect(row('edge-04')).toHaveCount(0);
  await mkdir(shotsDir, { recursive: true });
  await matrix.getByTestId('fleet-guards').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shotsDir}/fleet-guards.png`, fullPage: true });

  // Tick two images, save them as the ConfigMap for group "north".
  await expect(matrix.getByTestId('save-pinset')).toBeDisabled();
  const nginx = 'docker.io/library/nginx:1.27.3';
  const coredns = 'docker.io/rancher/mirrored-coredns-coredns:1.12.0';
  for (const name of [nginx, coredns]) await matrix.locator(`[data-testid="mx-row"][data-name="${name}"]`).getByTestId('mx-select').check();
  await expect(matrix.getByTestId('save-pinset')).toHaveText('Save as pin set… (2)');
  await matrix.getByTestId('save-pinset').click();
  const dialog = page.getByTestId('pinset-dialog');
  await expect(dialog.getByTestId('pinset-name')).toHaveValue('site');
  // A name Kubernetes refuses is refused, naming the field and the fix.
  await dialog.getByTestId('pinset-name').fill('North Site');
  await dialog.getByTestId('pinset-save').click();
  await expect(dialog.getByTestId('pinset-error')).toContainText('metadata.name');
  await dialog.getByTestId('pinset-name').fill('north');
  await dialog.getByTestId('pinset-as-configmap').check();
  await page.screenshot({ path: `${shotsDir}/pinset-dialog.png` });
  const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByTestId('pinset-save').click()]);
  expect(download.suggestedFilename()).toBe('holdfast-pinset-north.yaml');
  await expect(dialog.getByTestId('pinset-saved')).toHaveText('Saved: holdfast-pinset-north.yaml');
  const manifest = parseYaml(await readFile((await download.path())!, 'utf8')) as { kind: string; metadata: { name: string; namespace: string }; data: Record<string, string> };
  expect(manifest).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'holdfast-pinset', namespace: 'holdfast' } });
  const set = await parsePinSet(manifest.data['pinset.yaml']!, 'pinset.yaml', 1024 * 1024);
  expect(set.metadata.name).toBe('north');
  expect(set.spec.images.sort()).toEqual([coredns, nginx].sort());
  expect(errors).toEqual([]);
});
