// The disk picture, the GC forecast and prune over lab nodes whose containerd keeps its content
// on a 16 MiB tmpfs (so the image file system has a known size and the forecast a real stop
// point) and whose images dir is a 4 MiB tmpfs. The image store: four versions of one app on a
// shared 400 KiB base layer (the newest in use by a CRI container record), an unused tool, a
// tool in use only by a record made outside CRI, a durably pinned and a k3s-pinned image, and an
// image an archive in the images dir brings. Every number is checked against containerd itself
// (ctr content ls, CRI's ListImages) and every removal against what is left on the node.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainerRecord } from '../../lab/containers';
import { criImages } from '../../lab/cri';
import { importArchive, labelsOf, listImages } from '../../lab/k3s';
import { writeLayeredArchive, type LayeredImage } from '../../lab/layered';
import { startLab, type Lab } from '../../lab/lab';
import { K3S_IMAGES_DIR, type LabNodeHandle } from '../../lab/node';
import type { DiskPicture } from '../../src/shared/diskPicture';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { PrunePlan, PruneResult } from '../../src/shared/prunePlan';
import { formatBytes } from '../../src/shared/format';
import { createHandlers } from '../../src/core/service';
import { HoldfastError } from '../../src/core/errors';
import { runCli, tempHome } from './support';

const KiB = 1024;
const MiB = 1024 * KiB;
const APP = 'registry.lab/acme/app';
const BASE = { seed: 'app-base', bytes: 400 * KiB };

let lab: Lab;
let home: string;
/** Per node: every image written (name → its blobs with exact sizes). */
const written = new Map<string, Map<string, LayeredImage>>();

const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 120_000);

/** Digests in the node's content store now (containerd's own listing). */
async function contentDigests(n: LabNodeHandle): Promise<Set<string>> {
  return new Set((await n.ctr(['content', 'ls', '-q'])).split('\n').map((l: string) => l.trim()).filter(Boolean));
}

/** Bytes of the blobs we wrote that are gone from the content store between two listings. */
function goneBytes(node: string, before: Set<string>, after: Set<string>): number {
  const sizes = new Map<string, number>();
  for (const img of written.get(node)!.values()) for (const b of img.blobs) sizes.set(b.digest, b.size);
  let n = 0;
  for (const d of before) if (!after.has(d)) n += sizes.get(d) ?? Number.NaN;
  return n;
}

/** Removes the k3s and/or CRI pin labels from every reference of an image (a k3s restart after its archive went). */
async function unpin(n: LabNodeHandle, refs: string[], keepCri = false) {
  for (const r of refs) await n.ctr(['images', 'label', r, 'io.cattle.k3s.pinned=', ...(keepCri ? [] : ['io.cri-containerd.pinned='])]);
}

/**
 * Imports an archive as k3s does (names, digest references, pins), waits until CRI has seen the
 * image (its id record exists and every reference carries CRI's label: CRI writes those a moment
 * later, which would change when the records last changed), then sets the pin state.
 */
async function importImage(n: LabNodeHandle, file: string, img: LayeredImage, pin: 'none' | 'durable' | 'k3s') {
  const names = await importArchive(n, file);
  for (let i = 0; ; i++) {
    const seen = (await criImages(n)).some((c) => c.id === img.config.digest);
    const labelled = await Promise.all(names.map(async (x) => (await labelsOf(n, x))['io.cri-containerd.image'] === 'managed'));
    if (seen && labelled.every(Boolean)) break;
    if (i > 200) throw new Error(`CRI did not pick up ${img.name} (see ${n.root}/containerd.log)`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // every reference of the image: the tag, k3s's name@sha256 reference and CRI's id record
  const refs = (await listImages(n)).filter((i) => i.digest === img.manifest.digest).map((i) => i.name);
  if (pin !== 'k3s') await unpin(n, refs, pin === 'durable');
}

async function setUpNode(n: LabNodeHandle) {
  // containerd's whole root (content, snapshots, metadata) on a 16 MiB tmpfs of its own.
  await n.stopContainerd();
  await n.execInNode(['mount', '-t', 'tmpfs', '-o', 'size=16m,mode=0711', 'tmpfs', path.join(n.root, 'containerd', 'root')]);
  await n.startContainerd();
  await n.limitImagesDir(4 * MiB);
  const stage = path.join(n.root, 'stage');
  await mkdir(stage, { recursive: true });
  const mine = new Map<string, LayeredImage>();
  written.set(n.name, mine);
  const app = async (tag: string, own: number) => {
    const file = path.join(stage, `app-${tag}.tar`);
    const [img] = await writeLayeredArchive(file, [{ name: `${APP}:${tag}`, layers: [BASE, { seed: `app-${tag}`, bytes: own }], created: `2025-${String(Number(tag.split('.')[1]) + 1).padStart(2, '0')}-01T00:00:00Z` }]);
    mine.set(img!.name, img!);
    await importImage(n, file, img!, 'none');
  };
  const tool = async (name: string, bytes: number, pin: 'none' | 'durable' | 'k3s', intoImagesDir = false) => {
    const file = path.join(stage, `${name.split('/').pop()!.replace(':', '-')}.tar`);
    const w = await writeLayeredArchive(file, [{ name, layers: [{ seed: name, bytes }] }]);
    mine.set(name, w[0]!);
    await importImage(n, file, w[0]!, pin);
    if (intoImagesDir) await n.execInNode(['cp', file, `${K3S_IMAGES_DIR}/${path.basename(file)}`]);
  };
  // The order the records last change in is the order kubelet's GC is forecast to take them.
  await app('1.0', 100 * KiB);
  await app('1.2', 140 * KiB);
  await tool('registry.lab/tools/old:0.1', 300 * KiB, 'none');
  await app('1.1', 120 * KiB);
  await tool('registry.lab/tools/debug:1.0', 80 * KiB, 'none');
  await app('1.3', 160 * KiB);
  await tool('registry.lab/tools/pinned:1.0', 200 * KiB, 'durable');
  await tool('registry.lab/tools/k3spinned:1.0', 50 * KiB, 'k3s', true);
  await tool('registry.lab/tools/brought:1.0', 60 * KiB, 'none', true);
  await createContainerRecord(n, { id: 'app-7d9f', image: `${APP}:1.3`, labels: { 'io.cri-containerd.kind': 'container' } });
  // made with ctr or nerdctl: kubelet does not see it, prune still spares its image
  await createContainerRecord(n, { id: 'debug-shell', image: 'registry.lab/tools/debug:1.0' });
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['gc1', 'gc2'] });
  await Promise.all(lab.nodes.map(setUpNode));
  home = tempHome();
  // What the site needs (the operator's list): the version its Deployment runs. Every other image
  // is known to be unneeded, so prune and kubelet may take them; without a source of needs,
  // Holdfast would count every image that came from an air-gap archive as needed (shared/needs).
  mkdirSync(path.join(home, 'needed-images'), { recursive: true });
  for (const n of lab.nodes) writeFileSync(path.join(home, 'needed-images', `${n.name}.txt`), `# what the site runs\n${APP}:1.3\n`);
  for (const n of lab.nodes) {
    const add = await cli(['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
  }
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

async function picture(node: string): Promise<DiskPicture> {
  const r = await cli(['disk', node, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as DiskPicture;
}

const refsOf = (p: DiskPicture, name: string) => p.images!.find((i) => i.refs.includes(name))!;

describe('holdfast disk', () => {
  let p: DiskPicture;
  beforeAll(async () => {
    p = await picture('gc1');
  });

  it('measures the images dir and containerd’s content and snapshots on the file systems they are on', () => {
    const images = p.fileSystems.find((f) => f.roles.includes('images-dir'))!;
    const store = p.fileSystems.find((f) => f.roles.includes('content'))!;
    expect(images.totalBytes).toBe(4 * MiB);
    expect(store.totalBytes).toBe(16 * MiB);
    expect(store.roles).toEqual(['content', 'snapshots']);
    expect(p.imagefs).toEqual(store);
    expect(p.policy).toMatchObject({ highPercent: 85, lowPercent: 80, evictionHard: { imagefs: { percent: 5 }, nodefs: { percent: 5 } } });
  });

  it('sizes every image as CRI reports it to kubelet, and by what deleting it alone frees', async () => {
    const cri = await criImages(lab.node('gc1'));
    expect(p.images!.map((i) => i.imageId).sort()).toEqual(cri.map((c) => c.id).sort());
    for (const c of cri) {
      const mine = p.images!.find((i) => i.imageId === c.id)!;
      expect({ id: c.id, size: mine.criSize, pinned: mine.pinnedForKubelet }).toEqual({ id: c.id, size: c.size, pinned: c.pinned });
    }
    for (const w of written.get('gc1')!.values()) {
      const img = refsOf(p, w.name);
      // the shared base layer belongs to no single version
      const own = w.blobs.filter((b) => !(w.name.startsWith(APP) && b.digest === w.layers[0]!.digest));
      expect({ name: w.name, contentBytes: img.contentBytes }).toEqual({ name: w.name, contentBytes: w.blobs.reduce((s, b) => s + b.size, 0) });
      expect({ name: w.name, exclusive: img.exclusiveBytes }).toEqual({ name: w.name, exclusive: own.reduce((s, b) => s + b.size, 0) });
    }
  });

  it('says per image: in use, pinned durably, pinned by k3s, or unprotected', () => {
    const state = Object.fromEntries([...written.get('gc1')!.keys()].map((n) => [n, refsOf(p, n).state]));
    expect(state).toEqual({
      [`${APP}:1.0`]: 'unprotected',
      [`${APP}:1.1`]: 'unprotected',
      [`${APP}:1.2`]: 'unprotected',
      [`${APP}:1.3`]: 'in-use',
      'registry.lab/tools/old:0.1': 'unprotected',
      'registry.lab/tools/debug:1.0': 'in-use',
      'registry.lab/tools/pinned:1.0': 'durable',
      'registry.lab/tools/k3spinned:1.0': 'distro',
      'registry.lab/tools/brought:1.0': 'unprotected',
    });
    expect(refsOf(p, `${APP}:1.3`).usedBy).toEqual([{ id: 'app-7d9f', image: `${APP}:1.3`, kubelet: true }]);
    expect(refsOf(p, 'registry.lab/tools/debug:1.0').usedBy).toEqual([{ id: 'debug-shell', image: 'registry.lab/tools/debug:1.0', kubelet: false }]);
    // every reference of an image, CRI's id record included
    expect(refsOf(p, `${APP}:1.0`).refs).toHaveLength(3);
  });

  it('forecasts kubelet’s order and stop point, flags the images the site needs, and says the order is approximate', () => {
    const f = p.forecast!;
    const names = f.steps.map((s) => s.refs[0]);
    expect(names).toEqual([`${APP}:1.0`, `${APP}:1.2`, 'registry.lab/tools/old:0.1', `${APP}:1.1`, 'registry.lab/tools/debug:1.0', 'registry.lab/tools/brought:1.0']);
    // 5 % of 16 MiB to free; app 1.0 and 1.2 are each ~0.5 MiB as kubelet counts them
    expect(f.bytesToFree).toBe(Math.floor((16 * MiB * 20) / 100) - Math.ceil((16 * MiB * 15) / 100));
    expect(f.steps.filter((s) => s.deleted).map((s) => s.refs[0])).toEqual([`${APP}:1.0`, `${APP}:1.2`]);
    const needed = Object.fromEntries(f.steps.map((s) => [s.refs[0], s.needed.map((x) => x.kind)]));
    expect(needed).toEqual({
      [`${APP}:1.0`]: [],
      [`${APP}:1.2`]: ['rollback'],
      'registry.lab/tools/old:0.1': [],
      [`${APP}:1.1`]: [],
      'registry.lab/tools/debug:1.0': ['outside-cri'],
      'registry.lab/tools/brought:1.0': ['archive'],
    });
    expect(f.neededDeleted).toBe(1);
    expect(f.orderNote).toMatch(/approximates/);
  });

  it('prints the same as text', async () => {
    const r = await cli(['disk', 'gc1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/kubelet's image GC: starts at 85 % used \(kubelet's default\), frees down to 80 %/);
    expect(r.stdout).toMatch(/1\. registry\.lab\/acme\/app:1\.0 {2}frees/);
    expect(r.stdout).toMatch(/2\. registry\.lab\/acme\/app:1\.2 {2}frees .* NEEDED/);
    expect(r.stdout).toContain('WARNING: 1 needed image is among them');
  });

  it('frees exactly what it forecast when kubelet’s deletions really happen, step by step', async () => {
    const n = lab.node('gc1');
    const before = p.imagefs!.freeBytes;
    let total = 0;
    for (const step of p.forecast!.steps.filter((s) => s.deleted)) {
      const was = await contentDigests(n);
      // what CRI's RemoveImage does: every reference of the image, the last one synchronously
      for (const [i, ref] of step.refs.entries()) await n.ctr(['images', 'rm', ...(i === step.refs.length - 1 ? ['--sync'] : []), ref]);
      const freed = goneBytes('gc1', was, await contentDigests(n));
      expect({ image: step.refs[0], freed }).toEqual({ image: step.refs[0], freed: step.frees });
      total += freed;
    }
    expect(total).toBe(p.forecast!.realFreed);
    // and statvfs of the content store agrees (tmpfs rounds each file up to a 4 KiB page)
    const after = (await picture('gc1')).imagefs!.freeBytes;
    expect(after - before).toBeGreaterThanOrEqual(total);
    expect(after - before).toBeLessThan(total + 64 * KiB);
  });
});

describe('holdfast prune', () => {
  let plan: PrunePlan;
  let dryText: string;

  it('--dry-run lists what it would remove and why it keeps everything else, changing nothing', async () => {
    const before = await lab.node('gc2').ctr(['images', 'ls', '-q']);
    const r = await cli(['prune', 'gc2', '--dry-run', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    plan = (JSON.parse(r.stdout) as { node: string; ok: true; plan: PrunePlan }[])[0]!.plan;
    expect(plan.remove.map((x) => x.refs[0])).toEqual([`${APP}:1.0`, 'registry.lab/tools/old:0.1', `${APP}:1.1`]);
    const kept = Object.fromEntries(plan.kept.map((k) => [k.refs[0], k.reason]));
    expect(kept).toEqual({
      [`${APP}:1.3`]: 'in-use',
      'registry.lab/tools/debug:1.0': 'in-use',
      'registry.lab/tools/pinned:1.0': 'pinned',
      'registry.lab/tools/k3spinned:1.0': 'pinned',
      'registry.lab/tools/brought:1.0': 'archive',
      [`${APP}:1.2`]: 'rollback',
    });
    const text = await cli(['prune', 'gc2', '--dry-run']);
    dryText = text.stdout;
    expect(dryText).toContain('gc2: would remove 3 of 9 images');
    expect(dryText).toMatch(/keep registry\.lab\/tools\/pinned:1\.0: Pinned durably; prune never unpins\. .*holdfast unpin gc2 registry\.lab\/tools\/pinned:1\.0/);
    expect(await lab.node('gc2').ctr(['images', 'ls', '-q'])).toBe(before);
  });

  it('removes nothing while the audit log could not record it: a link to /dev/full in its place (#51)', async () => {
    const n = lab.node('gc2');
    const before = await n.ctr(['images', 'ls', '-q']);
    const log = path.join(home, 'audit.jsonl');
    const aside = `${log}.aside`;
    if (existsSync(log)) renameSync(log, aside);
    symlinkSync('/dev/full', log);
    try {
      const r = await cli(['prune', 'gc2']);
      // A fleet command: one line per node, exit 1 when any node failed.
      expect(r.code, r.stderr).toBe(1);
      // (prune reads the log for the pins Holdfast made before it plans: that read fails first)
      expect(r.stdout).toContain(`gc2: FAILED — cannot read the audit log ${log}: it is not a regular file`);
    } finally {
      rmSync(log, { force: true });
      if (existsSync(aside)) renameSync(aside, log);
    }
    expect(await n.ctr(['images', 'ls', '-q'])).toBe(before);
  });

  it('removes exactly what the dry run listed — every reference of each — and nothing else', async () => {
    const n = lab.node('gc2');
    const refsBefore = (await n.ctr(['images', 'ls', '-q'])).trim().split('\n').sort();
    const blobsBefore = await contentDigests(n);
    const r = await cli(['prune', 'gc2']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const would = [...dryText.matchAll(/^ {2}would remove (\S+)/gm)].map((m) => m[1]);
    const removed = [...r.stdout.matchAll(/^ {2}removed (\S+)/gm)].map((m) => m[1]);
    expect(removed).toHaveLength(3);
    expect(removed).toEqual(would);
    const gone = plan.remove.flatMap((x) => x.refs);
    const left = (await n.ctr(['images', 'ls', '-q'])).trim().split('\n').sort();
    expect(left).toEqual(refsBefore.filter((x) => !gone.includes(x)));
    // kept images keep every reference, the name@sha256 ones k3s's registry serves included
    for (const k of plan.kept) for (const ref of k.refs) expect(left).toContain(ref);
    // what kubelet sees: the removed image ids are gone, the kept ones and their pins unchanged
    const cri = await criImages(n);
    expect(cri.map((c) => c.id).sort()).toEqual(plan.kept.map((k) => k.key).sort());
    expect(cri.find((c) => c.repoTags.includes('registry.lab/tools/pinned:1.0'))?.pinned).toBe(true);
    // freed: measured on the node, as planned
    const measured = goneBytes('gc2', blobsBefore, await contentDigests(n));
    expect(measured).toBe(plan.freedBytes);
    expect(r.stdout).toContain(`gc2: removed 3 images`);
  });

  it('logs every removal (references, digests, bytes) as a prune entry', async () => {
    const r = await cli(['log', 'gc2', '--json']);
    const entry = (JSON.parse(r.stdout) as AuditEntry[]).find((e) => e.action === 'prune')!;
    expect(entry.pruned!.images.map((i) => i.refs)).toEqual(plan.remove.map((x) => x.refs));
    expect(entry.pruned!.images.map((i) => i.digests)).toEqual(plan.remove.map((x) => x.digests));
    expect(entry.pruned!.freedBytes).toBe(plan.freedBytes);
    // The text says what was removed, not "prune 0 references" (a prune changes no label).
    const text = (await cli(['log', 'gc2'])).stdout;
    expect(text).toContain(`prune: ${plan.remove.length} images removed, ${formatBytes(plan.freedBytes)} freed (kept the ${plan.keepVersions} newest versions`);
    for (const r of plan.remove) expect(text).toContain(r.refs[0]);
    expect(text).not.toContain('prune 0 references');
  });

  it('a second run finds nothing to remove; fewer kept versions would take the rollback image', async () => {
    const again = JSON.parse((await cli(['prune', 'gc2', '--json'])).stdout) as { result: PruneResult }[];
    expect(again[0]!.result.removed).toEqual([]);
    // Said once, as the one line of that node: not also "removed 0 images, 0 B freed".
    expect((await cli(['prune', 'gc2'])).stdout.trim()).toBe('gc2: nothing to remove');
    const one = JSON.parse((await cli(['prune', 'gc2', '--dry-run', '--json', '--keep-versions', '1'])).stdout) as { plan: PrunePlan }[];
    expect(one[0]!.plan.remove.map((x) => x.refs[0])).toEqual([`${APP}:1.2`]);
  });

  it('runs over several nodes with one line each, and fails when one node fails', async () => {
    const add = await cli(['node', 'add', 'gone', '--host', '127.0.0.1', '--port', '9', '--no-check']);
    expect(add.code).toBe(0);
    const r = await cli(['prune', 'gc2', 'gone', '--dry-run']);
    expect(r.code).toBe(1);
    const summary = r.stdout.trim().split('\n').slice(-2);
    expect(summary[0]).toMatch(/^gc2: would remove 0 of 6 images/);
    expect(summary[1]).toMatch(/^gone: FAILED — /);
    expect(r.stderr).toContain('prune failed on gone');
  });
});

describe('the app’s channels (the service main and holdfast serve run)', () => {
  it('disk.picture without images measures only file systems and thresholds', async () => {
    const svc = createHandlers({ home });
    try {
      const p = await svc['disk.picture']({ node: 'gc1', images: false });
      expect(p.images).toBeNull();
      expect(p.forecast).toBeNull();
      expect(p.imagefs?.totalBytes).toBe(16 * MiB);
    } finally {
      await svc.dispose();
    }
  });

  it('prune.apply needs the node’s name typed, removes only previewed images a fresh plan allows, and says why it leaves the others', async () => {
    const svc = createHandlers({ home });
    try {
      // gc1 after the forecast test: app 1.0 and 1.2 are gone, so 1.1 is now a rollback version
      const plan = await svc['prune.plan']({ node: 'gc1' });
      expect(plan.remove.map((r) => r.refs[0])).toEqual(['registry.lab/tools/old:0.1']);
      const rollback = plan.kept.find((k) => k.refs[0] === `${APP}:1.1`)!;
      expect(rollback.reason).toBe('rollback');
      const images = [plan.remove[0]!.key, rollback.key];
      await expect(svc['prune.apply']({ node: 'gc1', images, confirm: 'gc2' })).rejects.toSatisfy((e) => e instanceof HoldfastError && e.code === 'REFUSED');
      expect(await lab.node('gc1').ctr(['images', 'ls', '-q'])).toContain('registry.lab/tools/old:0.1');
      const res = await svc['prune.apply']({ node: 'gc1', images, confirm: 'gc1' });
      expect(res.removed.map((r) => r.refs[0])).toEqual(['registry.lab/tools/old:0.1']);
      expect(res.refused).toEqual([{ key: rollback.key, refs: rollback.refs, text: rollback.text }]);
      const left = await lab.node('gc1').ctr(['images', 'ls', '-q']);
      expect(left).not.toContain('registry.lab/tools/old');
      for (const ref of rollback.refs) expect(left).toContain(ref);
      expect(res.audit?.action).toBe('prune');
      expect(res.audit?.note).toContain('left registry.lab/acme/app:1.1');
    } finally {
      await svc.dispose();
    }
  });
});

describe("the node's own GC thresholds", () => {
  let fake: ChildProcess | undefined;
  let madeEtcRancher = false;
  afterAll(async () => {
    if (fake?.pid) process.kill(-fake.pid, 'SIGKILL');
    if (madeEtcRancher) await rmdir('/etc/rancher').catch(() => undefined);
  });

  it('come from k3s’s config file and the running k3s server’s command line, and nothing else leaves the node', async () => {
    const n = lab.node('gc1');
    // A config file only this node sees (a tmpfs over /etc/rancher in its mount namespace).
    if (!existsSync('/etc/rancher')) {
      await mkdir('/etc/rancher');
      madeEtcRancher = true;
    }
    await n.execInNode(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', '/etc/rancher']);
    await n.execInNode([
      'sh',
      '-c',
      'mkdir -p /etc/rancher/k3s && printf "%s\\n" "$@" > /etc/rancher/k3s/config.yaml',
      'sh',
      'token: lab-s3cret-join-token',
      'kubelet-arg:',
      '  - "image-gc-low-threshold=70"',
      '  - eviction-hard=imagefs.available<10%,nodefs.available<5%',
    ]);
    // A process that looks like `k3s server --kubelet-arg=…` in /proc: a shell named k3s-server
    // (its comm), started as /usr/local/bin/k3s with a script file named "server".
    const dir = path.join(lab.dir, 'fake-k3s');
    await mkdir(dir, { recursive: true });
    await copyFile('/bin/sh', path.join(dir, 'k3s-server'));
    await writeFile(path.join(dir, 'server'), 'sleep 600\n');
    fake = spawn(path.join(dir, 'k3s-server'), ['server', '--token=lab-s3cret-join-token', '--kubelet-arg=image-gc-high-threshold=90'], {
      argv0: '/usr/local/bin/k3s',
      cwd: dir,
      detached: true,
      stdio: 'ignore',
    });
    const r = await cli(['disk', 'gc1', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('lab-s3cret');
    const p = JSON.parse(r.stdout) as DiskPicture;
    expect(p.policy).toMatchObject({
      highPercent: 90,
      lowPercent: 70,
      evictionHard: { imagefs: { percent: 10 }, nodefs: { percent: 5 } },
      sources: { high: 'the k3s server command line', low: '/etc/rancher/k3s/config.yaml', evictionHard: '/etc/rancher/k3s/config.yaml' },
    });
    // the forecast follows them: 20 % of the file system to free from 90 %
    expect(p.forecast!.bytesToFree).toBe(Math.floor((16 * MiB * 30) / 100) - Math.ceil((16 * MiB * 10) / 100));
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });
});
