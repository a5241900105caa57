// End-to-end over the LAB for issue #37 items 3 and 4 in the app: k3s's embedded registry (spegel)
// and registries.yaml mirrors. er1 is a k3s server whose own /etc/rancher/k3s turns the embedded
// registry on and mirrors docker.io (an endpoint and a rewrite); er2 an agent of the same group
// that follows it. er1 imported two archives as k3s does (digest reference + distribution.source
// label); TOOL's digest reference is then deleted. The served UI must show, on er1's Images tab,
// a Peers column — APP "peers can pull it", TOOL "no digest reference" with the long form in its
// details — and the node's embedded-registry line; in the fleet matrix, each node's mirrors,
// endpoint and rewrite, and that er1 serves APP to er2, which lacks it; back on er1, its own
// mirrors from that inspection. Screenshots go to /tmp/peers-lab-shots/.
import { emulateK3sStart, listImages } from '../lab/k3s.ts';
import { writeImageArchive } from '../lab/fixtures.ts';
import { workloadList } from '../lab/workloads.ts';
import path from 'node:path';
import { etcRancher } from '../test/integration/support.ts';
import { expect, openFromOverview, screenshotTo, test, type Page } from './fixtures';
import { K3S_RELEASE, labSuite } from './lab-fixture';

const APP = 'docker.io/library/app:1.0';
const TOOL = 'docker.io/library/tool:2.0';
const GROUP = 'site-a';
const MIRRORS = 'mirrors:\n  docker.io:\n    endpoint:\n      - "https://mirror.lan:5000"\n    rewrite:\n      "^library/(.*)": "site/$1"\nconfigs:\n  docker.io:\n    auth:\n      password: S3cret-pass\n';
let toolDigestRef = '';
/** Where the spec leaves its screenshots (to look at, not compared). */
const shotsDir = '/tmp/peers-lab-shots';
const shot = (page: Page, name: string): Promise<void> => screenshotTo(shotsDir, page, name);

test.use({ viewport: { width: 1440, height: 900 } });

const suite = labSuite({
  nodes: ['er1', 'er2'],
  name: 'peers',
  group: GROUP,
  async prepare({ lab }) {
    const er1 = lab.node('er1');
    const er2 = lab.node('er2');
    await etcRancher(er1, { 'k3s/config.yaml': 'embedded-registry: true\n', 'k3s/registries.yaml': MIRRORS });
    // er2 joins er1 and sets nothing itself: it follows its server's embedded-registry setting.
    await etcRancher(er2, { 'k3s/config.yaml': 'server: https://er1.lan:6443\n', 'k3s/registries.yaml': MIRRORS });
    // The site runs APP on both nodes; er2 has no image yet.
    await er1.installDistroBinary('k3s', K3S_RELEASE, {
      workloads: workloadList({ nodes: [{ name: 'er1', role: 'server' }, { name: 'er2', role: 'agent' }], daemonSets: [{ name: 'app', image: APP }] }),
    });
    await er2.installDistroBinary('k3s', K3S_RELEASE);
    await writeImageArchive(path.join(er1.hostImagesDir, 'app.tar'), { format: 'docker', images: [{ name: APP }] });
    await writeImageArchive(path.join(er1.hostImagesDir, 'tool.tar'), { format: 'docker', images: [{ name: TOOL }] });
    const started = await emulateK3sStart(er1);
    expect(started.failed).toEqual([]);
    // TOOL loses its digest reference (as after a `ctr images rm` by hand): the embedded registry
    // no longer advertises it.
    const tool = (await listImages(er1)).find((i) => i.name === TOOL)!;
    toolDigestRef = `docker.io/library/tool@${tool.digest}`;
    await er1.ctr(['images', 'rm', toolDigestRef]);
    expect((await listImages(er1)).map((i) => i.name)).not.toContain(toolDigestRef);
  },
});

const row = (page: Page, text: string) => page.getByTestId('image-row').filter({ hasText: text });

test('the embedded registry and registry mirrors on real nodes: the Peers column, its reasons, the node’s mirrors and who serves a needed image', async ({ holdfast }) => {
  test.setTimeout(150_000);
  const { page, errors } = await suite.open(holdfast);

  await expect(page.getByTestId('fleet-overview')).toBeVisible({ timeout: 20_000 });
  await openFromOverview(page, 'er1', page.getByTestId('images-table'));

  // The node's state in one line: on, mirroring docker.io, set in its config.yaml.
  const summary = page.getByTestId('embedded-registry-summary');
  await expect(summary).toContainText('embedded registry: on, mirroring docker.io', { timeout: 20_000 });
  await expect(summary).toContainText('set in /etc/rancher/k3s/config.yaml');

  // The Peers column: APP servable, TOOL not, with its short clause and the long form on hover.
  await expect(page.getByRole('columnheader', { name: 'Peers' })).toBeVisible();
  const app = row(page, APP).getByTestId('peers-cell');
  await expect(app).toHaveText('peers can pull it');
  await expect(app).toHaveAttribute('title', new RegExp(`^Peers can pull ${APP.replace(/\./g, '\\.')} from this node`));
  const tool = row(page, TOOL).getByTestId('peers-cell');
  await expect(tool).toHaveText('no digest reference');
  await expect(tool).toHaveAttribute('title', `${toolDigestRef} is missing: the embedded registry advertises an image only with its digest reference, so peers cannot pull ${TOOL} from this node. Import its archive again (k3s adds the reference at import), or recreate it: ctr -n k8s.io images tag ${TOOL} ${toolDigestRef}.`);

  // The long form in the row's details.
  await row(page, TOOL).getByTestId('expand-row').click();
  const details = page.getByTestId('image-details');
  await expect(details.getByTestId('peers-reason')).toContainText('Peers: no digest reference.');
  await expect(details.getByTestId('peers-reason')).toContainText(`${toolDigestRef} is missing: the embedded registry advertises an image only with its digest reference`);

  // The fleet matrix: each node's registries.yaml, and who can serve the needed APP.
  await page.getByTestId('open-matrix').click();
  await page.getByTestId('inspect-fleet').click();
  await expect(page.getByTestId('matrix-subtitle')).toContainText('Report of', { timeout: 60_000 });
  const mirrors = page.getByTestId('registry-mirrors');
  const er1 = mirrors.getByTestId('registries-er1');
  await expect(er1).toContainText('/etc/rancher/k3s/registries.yaml');
  await expect(er1).toContainText('1 mirror, configs: 1 (credentials stay on the node)');
  await expect(er1.getByTestId('registry-mirror')).toHaveText('docker.io → https://mirror.lan:5000rewrite ^library/(.*) → site/$1');
  await expect(mirrors.getByTestId('registries-er2')).toContainText('docker.io → https://mirror.lan:5000');
  // er2 lacks APP, which the site needs: its mirror would be asked for it under the rewritten name.
  await expect(mirrors.getByTestId('registries-er2')).toContainText(`${APP}: mirror.lan:5000 as site/app:1.0`);

  const peers = page.getByTestId('fleet-peers');
  await expect(peers.getByTestId('peers-node-er1')).toHaveText('er1: embedded registry: on, mirroring docker.io');
  await expect(peers.getByTestId('peers-node-er2')).toHaveText('er2: embedded registry: as its servers set it (an agent), mirroring docker.io');
  await expect(peers.getByTestId('peer-source').filter({ hasText: APP })).toContainText('served by er1; missing on er2');
  await shot(page, 'fleet-registries.png');

  // Back on er1: its own registries.yaml, from that inspection, folded under the embedded-registry line.
  await page.getByTestId('node-item-er1').click();
  const own = page.getByTestId('node-registries');
  await expect(own).toContainText('Registry mirrors: /etc/rancher/k3s/registries.yaml 1 mirror, configs: 1 (credentials stay on the node)');
  await own.locator('summary').click();
  await expect(own.getByTestId('registry-mirror')).toHaveText('docker.io → https://mirror.lan:5000rewrite ^library/(.*) → site/$1');
  await shot(page, 'images-peers.png');
  // The registry password never reached the page.
  expect(await page.content()).not.toContain('S3cret');
  expect(errors).toEqual([]);
});
