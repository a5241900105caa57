// Issue #16, "two answers to one question": the state an import race left — the tag durable,
// the name@sha256 reference k3s added after its labels still k3s-pinned — once made the CLI say
// "1 reference loses its pin" while the app said "Kept" and rm-archive judged the archive safe.
// Every view now asks the one protection model (shared/protection), and the answer is checked
// against what CRI — kubelet's view — really reports after k3s's next start, on each containerd line.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, repositoryOf, startLab, writeImageArchive, type Lab, type LabNodeHandle, type WrittenImage } from '../../lab';
import { buildMatrix } from '../../src/renderer/fleetMatrix';
import { criModeOf, groupImages } from '../../src/renderer/model/images';
import type { ImageRef } from '../../src/shared/domain/images';
import type { FleetReport } from '../../src/shared/fleet';
import { runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let n: LabNodeHandle;
let app: WrittenImage;
let digestRef: string;
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 120_000);

beforeAll(async () => {
  lab = await startLab({ nodes: ['p1'] });
  home = tempHome();
  n = lab.node('p1');
  const written = await writeImageArchive(path.join(n.hostImagesDir, 'bundle.tar.gz'), {
    format: 'oci',
    compression: 'gzip',
    images: [{ name: 'registry.local/site/app:3' }],
  });
  app = written.images[0]!;
  await emulateK3sStart(n);
  const r = await cli(['node', 'add', 'p1', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);
  expect(r.code).toBe(0);
  // The raced state: Holdfast pins before k3s has added the digest reference, which k3s then
  // creates (after its labels) carrying its own pins.
  digestRef = `${repositoryOf(app.name)}@${app.digest}`;
  await n.ctr(['images', 'rm', digestRef]);
  expect((await cli(['pin', 'p1', app.name])).code).toBe(0);
  await n.ctr(['images', 'tag', app.name, digestRef]);
  await n.ctr(['images', 'label', digestRef, 'io.cattle.k3s.pinned=pinned', 'io.cri-containerd.pinned=pinned']);
  expect((await labelsOf(n, digestRef))['io.cattle.k3s.pinned']).toBe('pinned');
});

afterAll(async () => {
  await lab?.stop();
});

describe('one answer per image, the one kubelet will see', () => {
  it('rm-archive, images, inspect, the app and CRI agree', async () => {
    const honoured = n.containerdLine !== '1.6'; // the lab's 1.7 is 1.7.24: any reference counts

    // rm-archive decides with the model: safe where CRI pins at all, else the archive is the protection.
    const check = await cli(['rm-archive', 'p1', 'bundle.tar.gz', '--dry-run']);
    expect(check.stdout).toContain(honoured ? 'bundle.tar.gz can be removed safely' : 'no CRI image pinning');
    expect((await cli(['rm-archive', 'p1', 'bundle.tar.gz', ...(honoured ? [] : ['--force'])])).code).toBe(0);

    // holdfast images: the digest reference loses its own pin, the image does not.
    const table = await cli(['images', 'p1']);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain('LOSES PIN');
    expect(table.stdout).not.toMatch(/will lose/);
    const row = table.stdout.split('\n').find((l) => l.startsWith(digestRef))!;
    expect(row).toMatch(honoured ? /unpinned \(image kept\)/ : /\bunpinned\b/);
    const refs = JSON.parse((await cli(['images', 'p1', '--json'])).stdout) as ImageRef[];
    const ofApp = refs.filter((r) => r.imageId === app.configDigest);
    expect(ofApp.find((r) => r.name === digestRef)).toMatchObject({ pin: 'distro', afterRestart: 'unpinned' }); // the detail underneath
    for (const r of ofApp) expect({ ref: r.name, now: r.imagePinnedNow, after: r.imagePinnedAfterRestart }).toEqual({ ref: r.name, now: honoured, after: honoured });

    // holdfast inspect: no image loses its pin, the node is not at risk for it.
    const report = JSON.parse((await cli(['inspect', 'p1', '--json'])).stdout) as FleetReport;
    expect(report.summary.losingPins).toBe(0);
    expect(report.summary.atRisk.filter((r) => r.losingPins > 0)).toEqual([]);
    const text = await cli(['inspect', 'p1']);
    expect(text.stdout).toContain('· 0 images lose their pin at the next k3s start ·');
    expect(text.stdout).not.toMatch(/[1-9]\d* images? loses? (its|their) pin/);

    // The app: the images table and the fleet matrix, from the same JSON the app receives.
    const node = report.nodes[0]!;
    const [group] = groupImages(ofApp, criModeOf(node.versions));
    expect(group!.fate).toBe(honoured ? 'kept' : 'none');
    const matrix = buildMatrix(['p1'], { p1: node });
    expect(matrix.columns[0]!.losingPins).toBe(0);
    expect(matrix.rows.find((x) => x.name === app.name)!.cells[0]!.atRisk).toBe(false);

    // The truth: k3s starts, strips the digest reference's pins, and CRI still reports the image pinned.
    await emulateK3sStart(n);
    expect((await labelsOf(n, digestRef))['io.cri-containerd.pinned']).toBeUndefined();
    expect((await labelsOf(n, app.name))['io.cri-containerd.pinned']).toBe('pinned');
    expect(await criPinned(n, app.configDigest, honoured)).toBe(honoured);
  });
});
