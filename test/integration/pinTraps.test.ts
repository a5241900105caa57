// Issue #37, items 1, 2 and 5, on a real lab node (containerd 2.x by default):
// - the .txt sibling-tag trap: a list naming one tag of a present image makes k3s pin EVERY tag
//   CRI reports for that image id at start, so a durable sibling tag becomes k3s-managed, and the
//   start after the list is gone strips it;
// - containerd 2.3's GC back-references: a reference carrying containerd.io/gc.bref.* or
//   containerd.io/gc.expire is collected by containerd's own GC once its parent is gone, whatever
//   its CRI pin says, so it protects nothing;
// - the health of k3s's import cache (.cache.json) in `holdfast archives`.
// Each prediction is checked against what the emulated k3s start really does to the labels.
import { rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import type { ArchivesReport } from '../../src/shared/archivesReport';
import type { ImageRef } from '../../src/shared/domain/images';
import { NodeSession } from '../../src/core/node/session';
import { applyPinPlan } from '../../src/core/usecases/pin/apply';
import { addLabNode, labNodeDef, runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let n: LabNodeHandle;
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 120_000);
const refsOf = async (): Promise<ImageRef[]> => JSON.parse((await cli(['images', 'g1', '--json'])).stdout) as ImageRef[];

const K3S = 'io.cattle.k3s.pinned';
const CRI = 'io.cri-containerd.pinned';
const pinsOf = async (ref: string) => {
  const l = await labelsOf(n, ref);
  return { k3s: l[K3S] ?? null, cri: l[CRI] ?? null };
};

beforeAll(async () => {
  lab = await startLab({ nodes: ['g1'] });
  home = tempHome();
  n = lab.node('g1');
  await addLabNode(lab, n, home);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

describe('the .txt sibling-tag trap', () => {
  const LISTED = 'docker.io/library/busybox:latest';
  const SIBLING = 'registry.local/mirror/busybox:1.36';

  it('predicts, shows and matches k3s taking a durable sibling tag over, then stripping it once the list is gone', async () => {
    const d = n.hostImagesDir;
    await writeImageArchive(path.join(d, 'bb.tar'), { format: 'docker', images: [{ name: LISTED }] });
    await emulateK3sStart(n);
    // A durable tag of the same image (as a technician or Holdfast makes one), the archive gone,
    // and a pre-pull list naming only the other tag.
    await n.ctr(['images', 'tag', LISTED, SIBLING]);
    await n.ctr(['images', 'label', SIBLING, `${CRI}=pinned`]);
    await rm(path.join(d, 'bb.tar'));
    await writeFile(path.join(d, 'busybox.txt'), 'busybox\n');

    const sib = (await refsOf()).find((r) => r.name === SIBLING)!;
    expect(sib).toMatchObject({ pin: 'durable', afterRestart: 'pinned', archive: 'busybox.txt' });
    expect(sib.listTrap).toEqual({ list: 'busybox.txt', listed: LISTED });
    expect(sib.reason).toContain(`busybox.txt names ${LISTED}, another tag of the same image`);
    expect(sib.reason).toMatch(/once busybox\.txt is gone, the start after that strips it/);

    // holdfast images: one line per trapped tag (the whole reason through a pipe; a short clause on a terminal).
    const table = await cli(['images', 'g1']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('1 durable pin k3s takes over at its next start (a .txt list names another tag of its image):');
    expect(table.stdout).toContain(`  ${SIBLING}: Still pinned, but busybox.txt names ${LISTED}, another tag of the same image`);
    // holdfast archives: the list's line says whose durable pin it takes.
    const archives = await cli(['archives', 'g1']);
    expect(archives.code).toBe(0);
    expect(archives.stdout).toContain(`busybox.txt: takes over the durable pin of ${SIBLING} (same image as ${LISTED})`);
    const explain = await cli(['explain', 'g1', SIBLING]);
    expect(explain.stdout).toContain(`busybox.txt names ${LISTED}, another tag of the same image`);
    // Making the image durable now is undone by the list at the next start: said with the plan.
    const plan = await cli(['pin', 'g1', LISTED, '--dry-run']);
    expect(plan.code).toBe(0);
    expect(plan.stderr).toMatch(new RegExp(`warning: g1: busybox\\.txt in the images dir pins ${LISTED}, .*${SIBLING.replace(/\./g, '\\.')} again`));
    expect(plan.stderr).toContain('k3s-managed again at the next start: remove busybox.txt first');

    // What k3s really does: both tags pinned with both labels…
    await emulateK3sStart(n);
    expect(await pinsOf(SIBLING)).toEqual({ k3s: 'pinned', cri: 'pinned' });
    expect(await pinsOf(LISTED)).toEqual({ k3s: 'pinned', cri: 'pinned' });
    // …and once the list is gone, Holdfast predicts the strip and the next start does it.
    await rm(path.join(d, 'busybox.txt'));
    const after = (await refsOf()).find((r) => r.name === SIBLING)!;
    expect(after).toMatchObject({ pin: 'distro', afterRestart: 'unpinned' });
    await emulateK3sStart(n);
    expect(await pinsOf(SIBLING)).toEqual({ k3s: null, cri: null });
  });
});

/** A blob's bytes that are never read: the write is refused before it starts. */
async function* nothing(): AsyncIterable<Buffer> {}

describe("containerd 2.3's GC back-references", () => {
  const PARENT = 'registry.local/site/parent:1';
  const CHILD = 'registry.local/site/child:1';

  it('a pinned reference carrying gc.bref / gc.expire protects nothing, and Holdfast never writes those labels', async () => {
    const d = n.hostImagesDir;
    await writeImageArchive(path.join(d, 'gc.tar'), { format: 'docker', images: [{ name: PARENT }] });
    await emulateK3sStart(n);
    // As containerd 2.3's transfer-service import leaves a reference made for an index name:
    // a back-reference to its parent and an expiry (written through containerd's Images.Update).
    const expire = new Date(Date.now() + 7 * 24 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await n.ctr(['images', 'tag', PARENT, CHILD]);
    await n.ctr(['images', 'label', CHILD, `${CRI}=pinned`, `containerd.io/gc.bref.image=${PARENT}`, `containerd.io/gc.expire=${expire}`]);

    const child = (await refsOf()).find((r) => r.name === CHILD)!;
    expect(child).toMatchObject({ pin: 'durable', afterRestart: 'unpinned' });
    expect(child.reason).toContain(`containerd's own garbage collector removes ${CHILD} once ${PARENT} is gone`);

    // rm-archive: the parent is k3s-pinned only and the child does not count, so the archive must stay…
    const check = await cli(['rm-archive', 'g1', 'gc.tar', '--dry-run']);
    expect(check.stdout).toContain('gc.tar cannot be removed safely');
    // …and without it, nothing keeps the image after the next k3s start.
    await rm(path.join(d, 'gc.tar'));
    const gone = (await refsOf()).filter((r) => r.name === CHILD || r.name === PARENT);
    for (const r of gone) expect({ ref: r.name, now: r.imagePinnedNow, after: r.imagePinnedAfterRestart }).toEqual({ ref: r.name, now: true, after: false });

    const table = await cli(['images', 'g1']);
    expect(table.stdout).toContain('1 reference containerd may remove whatever its pin says (containerd.io/gc.bref / gc.expire labels):');
    expect(table.stdout).toContain(`  ${CHILD}: Not protected: containerd's own garbage collector removes ${CHILD} once ${PARENT} is gone`);
    const explain = await cli(['explain', 'g1', CHILD]);
    expect(explain.stdout).toContain(`containerd's own garbage collector removes ${CHILD} once ${PARENT} is gone`);

    // Pinning the image: the plan and the labels afterwards carry no GC label Holdfast wrote.
    const before = await labelsOf(n, PARENT);
    expect((await cli(['pin', 'g1', PARENT])).code).toBe(0);
    const parent = await labelsOf(n, PARENT);
    expect(Object.keys(parent).filter((k) => k.startsWith('containerd.io/gc.'))).toEqual(Object.keys(before).filter((k) => k.startsWith('containerd.io/gc.')));
    const labels = await labelsOf(n, CHILD);
    expect(labels['containerd.io/gc.bref.image']).toBe(PARENT);
    expect(labels['containerd.io/gc.expire']).toBe(expire);
  });

  it("every write path refuses gc.bref / gc.cond / gc.expire, and the node is left as it was", async () => {
    // containerd 2.2's back-references, 2.3's conditional references and the expiry: the one guard
    // (shared/protection gcLabelWriteRefusal) sits in the client's image, blob and snapshot writes
    // (direct delivery's path, core/usecases/direct/write) and in the pin plan (labelDelta).
    const d = n.hostImagesDir;
    await writeImageArchive(path.join(d, 'guard.tar'), { format: 'docker', images: [{ name: 'registry.local/site/guard:1' }] });
    await emulateK3sStart(n);
    const s = await NodeSession.open(labNodeDef(lab, n));
    try {
      const img = (await s.containerd.getImage('registry.local/site/guard:1'))!;
      const before = await labelsOf(n, img.name);
      const refused = /refusing to change containerd\.io\/gc\.(bref|cond|expire)\S* on .*Holdfast never writes the labels containerd's own garbage collector acts on/;
      const lease = 'holdfast-test-guard';
      await s.writer!.createLease(lease, { 'containerd.io/gc.expire': new Date(Date.now() + 600_000).toISOString() }); // a lease's expiry is allowed
      // Direct delivery's writes: a new record, an existing record, a blob's labels, a snapshot.
      await expect(s.writer!.createImage({ name: 'registry.local/site/guard:copy', labels: { 'containerd.io/gc.bref.image': img.name }, target: img.target }, lease)).rejects.toThrow(refused);
      await expect(s.writer!.updateImage(img.name, img.target, { 'containerd.io/gc.expire': '2026-12-31T00:00:00Z' }, lease)).rejects.toThrow(refused);
      await expect(s.writer!.updateContentLabels(img.target.digest, { 'containerd.io/gc.bref.content': img.target.digest }, lease)).rejects.toThrow(refused);
      await expect(s.writer!.writeBlob({ ref: 'guard', digest: img.target.digest, size: img.target.size, labels: { 'containerd.io/gc.cond.value-usedat': '1' }, read: nothing }, lease)).rejects.toThrow(refused);
      await expect(s.writer!.prepareSnapshot('overlayfs', 'guard', '', lease, { 'containerd.io/gc.cond.snapshot.overlayfs': 'x' })).rejects.toThrow(refused);
      // The pin plan's write (applyPinPlan → labelDelta → updateImageLabels), and the client under it.
      await expect(s.containerd.updateImageLabels(img.name, { 'containerd.io/gc.cond.snapshot.overlayfs': 'x' })).rejects.toThrow(refused);
      await expect(applyPinPlan(s.containerd, { node: 'g1', action: 'pin', changes: [{ ref: img.name, imageId: null, before, after: { ...before, 'containerd.io/gc.expire': 'soon' } }], unchanged: [] })).rejects.toThrow(refused);
      await s.writer!.deleteLease(lease);
      // Nothing reached containerd.
      expect(await labelsOf(n, img.name)).toEqual(before);
      expect(await n.ctr(['images', 'ls', '-q'])).not.toContain('registry.local/site/guard:copy');
      expect(await n.ctr(['content', 'ls'])).not.toMatch(/containerd\.io\/gc\.(bref|cond)/);
    } finally {
      await s.close();
      await rm(path.join(d, 'guard.tar'));
    }
  });
});

describe("k3s's import cache in holdfast archives", () => {
  it('says when .cache.json is absent, skips files without a re-pin, re-imports a changed one, or has stale entries', async () => {
    const d = n.hostImagesDir;
    await rm(path.join(d, '.cache.json'), { force: true });
    await writeImageArchive(path.join(d, 'c.tar'), { format: 'docker', images: [{ name: 'registry.local/site/cached:1' }] });
    const off = await cli(['archives', 'g1']);
    expect(off.stdout).toContain('no .cache.json: every k3s start re-imports every archive');

    // Written by a release before the re-pin fix: entries without `images`; and one for a vanished file.
    await writeFile(path.join(d, '.cache.json'), '');
    await emulateK3sStart(n, { cacheFix: false });
    const cache = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(path.join(d, '.cache.json'), 'utf8'))) as Record<string, unknown>;
    cache['/var/lib/rancher/k3s/agent/images/gone.tar'] = { size: 10, modTime: '2026-01-01T00:00:00Z', images: ['x.io/gone:1'] };
    await writeFile(path.join(d, '.cache.json'), JSON.stringify(cache));
    const health = await cli(['archives', 'g1']);
    // The release is unknown here and the entries record no images: assumed skipped without a re-pin.
    expect(health.stdout).toMatch(/\.cache\.json: \d+ files? skipped without a re-pin \(pins lost at the next start\), 1 stale/);
    const why = await cli(['archives', 'g1', '--why']);
    expect(why.stdout).toContain('c.tar');
    expect(why.stdout.replace(/\s+/g, ' ')).toContain('unless its release has k3s PR #14266');
    expect(why.stdout).toContain('gone.tar is no longer in the images dir');

    // A file whose size changed and whose mtime is later: re-imported at the next start, said per file.
    await writeImageArchive(path.join(d, 'c.tar'), { format: 'docker', images: [{ name: 'registry.local/site/cached:1', layerBytes: 4096 }] });
    await utimes(path.join(d, 'c.tar'), new Date(), new Date(Date.now() + 3600_000));
    // --json: the node's cache health once, beside its files (not repeated on each)
    const json = JSON.parse((await cli(['archives', 'g1', '--json'])).stdout) as ArchivesReport;
    expect(json.node).toBe('g1');
    expect(json.importCache?.reimported).toContainEqual({ path: 'c.tar', why: 'size' });
    expect(json.archives.find((a) => a.path === 'c.tar')?.cache).toEqual({ skipped: false, why: 'size' });
    for (const a of json.archives) expect(Object.keys(a)).not.toContain('importCache');
  });
});
