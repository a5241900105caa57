// End-to-end over the LAB for signatures in the import wizard (#48): images signed at test time
// by real cosign 3 (lab/signing.ts), copied by oras into an OCI layout and tarred. The wizard takes
// the public key, checks every image on this machine before Next, imports, and the node's Images
// tab then says who signed each image. An unsigned image keeps Next closed until it is allowed.
import { expect, test, type Page } from './fixtures';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { labelsOf, startK3sWatcher } from '../lab/k3s.ts';
import { labImageName, layoutSubset, makeSigningFixtures, tarLayout, type SigningFixtures } from '../lab/signing.ts';
import { readPublicKey } from '../src/core/signatures/keys';
import { SIGNATURE_LABELS } from '../src/shared/domain/labels';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const shots = process.env['HOLDFAST_SCREENSHOTS'];
let fx: SigningFixtures;
let fp = '';
let signed = '';
let mixed = '';

const suite = labSuite({
  nodes: ['edge1'],
  name: 'signatures',
  async prepare({ lab, dir, onStop }) {
    const node = lab.node('edge1');
    await node.installDistroBinary('k3s', K3S_RELEASE);
    const watcher = startK3sWatcher(node);
    onStop(() => watcher.stop());
    fx = await makeSigningFixtures(path.join(dir, 'signing'));
    fp = (await readPublicKey(fx.keys.a.pub)).fingerprint;
    // Signed by key a as an OCI 1.1 referrer bundle (cosign 3's default); and the same with an unsigned image.
    const names = (repos: string[]) => Object.fromEntries(repos.map((r) => [r, labImageName(r)]));
    signed = await tarLayout(layoutSubset(fx, names(['bundle']), path.join(dir, 'site-signed')));
    mixed = await tarLayout(layoutSubset(fx, names(['bundle', 'unsigned']), path.join(dir, 'site-mixed')));
  },
});

const wizard = (page: Page) => page.getByTestId('import-wizard');
const verdict = (page: Page, repo: string) => wizard(page).locator(`[data-testid="sig-image"][data-image="${labImageName(repo)}"]`);

/** The wizard at its review step for `file`, with key a added and the signatures checked. */
async function checked(page: Page, file: string): Promise<void> {
  await page.getByRole('button', { name: 'Import archives' }).click();
  await wizard(page).getByLabel('Archive path').fill(file);
  await wizard(page).getByLabel('Archive path').press('Enter');
  await expect(wizard(page).getByTestId('chosen-archive')).toContainText('oci', { timeout: 20_000 });
  await wizard(page).getByRole('button', { name: /Next: review contents/ }).click();
  await expect(wizard(page).getByTestId('review-archive')).toHaveAttribute('data-state', 'ok');
  const key = wizard(page).getByLabel('Public key file');
  await key.fill(fx.keys.a.pub);
  await key.press('Enter');
  await expect(wizard(page).getByTestId('sig-file')).toHaveAttribute('data-path', fx.keys.a.pub);
  // A key given and not checked yet: Next waits.
  await expect(wizard(page).getByRole('button', { name: /Next: choose nodes/ })).toBeDisabled();
  await wizard(page).getByRole('button', { name: 'Check signatures' }).click();
  await expect(wizard(page).getByTestId('sig-archive')).toBeVisible({ timeout: 60_000 });
}

test('add the key, see each verdict before Next, import: the Images tab says who signed it', async ({ holdfast }) => {
  test.setTimeout(180_000);
  const { page, errors } = await suite.open(holdfast);
  const node = suite.node('edge1');
  await expect(page.getByTestId('node-item-edge1').getByTestId('status-dot')).toHaveAttribute('data-state', 'connected', { timeout: 20_000 });

  await checked(page, signed);
  const row = verdict(page, 'bundle');
  await expect(row).toHaveAttribute('data-verified', 'true');
  await expect(row.getByTestId('sig-verdict')).toHaveText(new RegExp(`^signed by key ${fp.slice(0, 8)}…, verified \\d{4}-\\d\\d-\\d\\d$`));
  await expect(wizard(page).getByTestId('sig-archive')).toContainText('1 image verified');
  // Checked on this machine: nothing reached the node.
  await expect(access(path.join(node.hostImagesDir, path.basename(signed)))).rejects.toThrow();
  if (shots) await wizard(page).getByTestId('signatures').screenshot({ path: path.join(shots, 'lab-signatures-wizard.png') });

  await wizard(page).getByRole('button', { name: /Next: choose nodes/ }).click();
  await expect(wizard(page).getByTestId('pick-node-edge1').getByRole('checkbox')).toBeChecked({ timeout: 20_000 });
  // The archive stays: removing one that carries signature referrers is refused today (their
  // unnamed manifests are never images in containerd), which is the removal check's to learn.
  await wizard(page).getByRole('checkbox', { name: /Remove the archive/ }).uncheck();
  await wizard(page).getByRole('button', { name: 'Import 1 archive to 1 node' }).click();
  await expect(wizard(page)).toHaveAttribute('data-step', 'summary', { timeout: 120_000 });
  await expect(wizard(page).locator('[data-testid="summary-node"][data-node="edge1"]')).toHaveAttribute('data-state', 'succeeded');

  // On the node: the verdict recorded on the image itself.
  const labels = await labelsOf(node, labImageName('bundle'));
  expect(labels[SIGNATURE_LABELS.verified]).toBe('true');
  expect(labels[SIGNATURE_LABELS.by]).toBe(fp);

  // The Images tab: the short form in the cell (a column above 1500 px), the sentence on hover
  // and in the row's details.
  await page.setViewportSize({ width: 1600, height: 860 });
  await wizard(page).getByRole('button', { name: "Open edge1's images" }).click();
  const image = page.getByTestId('image-row').filter({ hasText: labImageName('bundle') });
  const cell = image.getByTestId('signature-cell');
  await expect(cell).toHaveText(`key ${fp.slice(0, 8)} (bundle)`, { timeout: 20_000 });
  await expect(cell).toHaveAttribute('title', new RegExp(`^signed by key ${fp.slice(0, 8)}…, verified `));
  await image.getByTestId('expand-row').click();
  await expect(page.getByTestId('image-signature')).toHaveText(new RegExp(`^signed by key ${fp.slice(0, 8)}…, verified `));
  await page.getByTestId('filter-unverified').click();
  await expect(page.getByTestId('image-row').filter({ hasText: labImageName('bundle') })).toHaveCount(0);
  await page.getByTestId('filter-unverified').click();
  if (shots) await page.screenshot({ path: path.join(shots, 'lab-signatures-images.png') });
  expect(errors).toEqual([]);
});

test('an unsigned image keeps Next closed until "Import unsigned images too" is ticked', async ({ holdfast }) => {
  test.setTimeout(120_000);
  const { page, errors } = await suite.open(holdfast);
  await checked(page, mixed);
  await expect(verdict(page, 'bundle')).toHaveAttribute('data-verified', 'true');
  const unsigned = verdict(page, 'unsigned');
  await expect(unsigned).toHaveAttribute('data-verified', 'false');
  await expect(unsigned.getByTestId('sig-verdict')).toHaveText(/^not verified: no signature \(\d{4}-\d\d-\d\d\)$/);
  const next = wizard(page).getByRole('button', { name: /Next: choose nodes/ });
  await expect(next).toBeDisabled();
  await expect(wizard(page).getByTestId('next-blocked')).toContainText('1 image is refused: the import would be refused too.');
  if (shots) await wizard(page).getByTestId('signatures').screenshot({ path: path.join(shots, 'lab-signatures-refused.png') });
  await wizard(page).getByRole('checkbox', { name: 'Import unsigned images too, marked not verified' }).check();
  await expect(next).toBeEnabled();
  expect(errors).toEqual([]);
});
