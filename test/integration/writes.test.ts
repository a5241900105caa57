// Every kind of write Holdfast makes to a node — pin, unpin, pin --all-k3s, import --pin, the
// app's "apply" (the same service handler Electron main and `holdfast serve` call), archive
// removal — on the containerd line this project runs (2.x by default; `npm test` also runs this
// file on 1.7 and Debian's 1.6): the daemon must never crash (same pid, no unexpected exit), and
// what kubelet sees through CRI must match what Holdfast says, before and after k3s's next start.
//
// containerd 1.7.x and 2.x panic on an Images.Update without the image's target; 1.6 tolerates
// it, which is why this file runs on every line.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  criImages,
  criPinned,
  emulateK3sStart,
  labelsOf,
  startK3sWatcher,
  startLab,
  writeImageArchive,
  type K3sWatcher,
  type Lab,
  type LabNodeHandle,
  type WrittenImage,
} from '../../lab';
import { createHandlers, type Service } from '../../src/core/service';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import { criPinning, type CriPinning } from '../../src/shared/versions';
import { runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

let lab: Lab;
let node: LabNodeHandle;
let home: string;
let pid: number | null;
let mode: CriPinning;
let version = '';
let service: Service;
let watcher: K3sWatcher | undefined;
let images: WrittenImage[] = [];
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-writes-'));
const figures = { writes: 0, criChecks: 0, criPinned: 0 };

async function cli<T = string>(args: string[], expectCode = 0): Promise<T> {
  const r = await runCli(args, { HOLDFAST_HOME: home }, 120_000);
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

const refsNow = () => cli<ImageRef[]>(['images', 'w1', '--json']);

/** The daemon that answered before the write is the one answering after it. */
async function expectDaemonAlive(what: string): Promise<void> {
  figures.writes++;
  expect(await node.containerdPid(), `containerd pid after ${what}`).toBe(pid);
  expect(node.containerdCrashes, `containerd crashes after ${what}`).toBe(0);
  await node.ctr(['version']); // and it still answers
}

/**
 * Kubelet's view equals Holdfast's: an image is pinned for CRI exactly when Holdfast shows a pin
 * on one of its references — on lines that CRI-pin at all (1.6 never does).
 */
async function expectCriAgrees(refs: ImageRef[]): Promise<void> {
  for (const img of await criImages(node)) {
    const mine = refs.filter((r) => r.imageId === img.id);
    expect(mine.length, `Holdfast lists image ${img.id}`).toBeGreaterThan(0);
    const holdfastPinned = mine.some((r) => r.pin !== 'none');
    const want = mode === 'none' ? false : holdfastPinned;
    // CRI updates its cache from containerd's image events: poll one reference until it agrees
    expect({ image: img.id, pinned: await criPinned(node, img.id, want) }).toEqual({ image: img.id, pinned: want });
    figures.criChecks++;
    if (want) figures.criPinned++;
  }
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['w1'] });
  node = lab.node('w1');
  await node.installDistroBinary('k3s', 'v1.33.4+k3s1');
  const written = await writeImageArchive(path.join(node.hostImagesDir, 'apps.tar.gz'), {
    format: 'docker',
    compression: 'gzip',
    images: [{ name: 'docker.io/library/app-a:1.0' }, { name: 'docker.io/library/app-b:1.0' }, { name: 'registry.local/site/c:3' }],
  });
  images = written.images;
  await emulateK3sStart(node);
  home = tempHome();
  const add = await runCli(
    ['node', 'add', 'w1', '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts],
    { HOLDFAST_HOME: home },
  );
  expect(add.code).toBe(0);
  service = createHandlers({ home });
  version = (await node.ctr(['version'])).match(/Server:[\s\S]*?Version:\s+(\S+)/)?.[1] ?? '';
  mode = criPinning(version);
  pid = await node.containerdPid();
  expect(pid).not.toBeNull();
});

afterAll(async () => {
  // One line for the closing note / CI log.
  console.log(
    `writes on containerd ${version}: ${figures.writes} writes, daemon restarts ${node?.containerdCrashes ?? '?'}, ` +
      `${figures.criChecks} CRI image checks agreed (${figures.criPinned} pinned)`,
  );
  await watcher?.stop();
  await service?.dispose();
  await lab?.stop();
});

describe(`writes on containerd ${process.env.HOLDFAST_LAB_CONTAINERD ?? '2'} never crash the daemon, and CRI agrees`, () => {
  it('knows which line it runs', () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(mode).toBe({ '1.6': 'none', '1.7': 'any', '2': 'any' }[node.containerdLine]);
  });

  it('pin REF: durable on every reference of the image, CRI agrees, daemon alive', async () => {
    const a = images[0]!;
    await cli(['pin', 'w1', a.name]);
    await expectDaemonAlive('pin REF');
    const refs = await refsNow();
    const ofA = refs.filter((r) => r.imageId === a.configDigest);
    expect(ofA.length).toBe(3); // tag, digest ref, CRI's id record
    for (const r of ofA) expect({ ref: r.name, pin: r.pin, afterRestart: r.afterRestart }).toEqual({ ref: r.name, pin: 'durable', afterRestart: 'pinned' });
    await expectCriAgrees(refs);
  });

  it('unpin REF: the durable pin is released, CRI agrees, daemon alive', async () => {
    const a = images[0]!;
    await cli(['unpin', 'w1', a.name]);
    await expectDaemonAlive('unpin');
    const refs = await refsNow();
    for (const r of refs.filter((x) => x.imageId === a.configDigest)) expect(r.pin).toBe('none');
    expect(await criPinned(node, a.configDigest, false)).toBe(false);
    await expectCriAgrees(refs);
  });

  it('the app\'s apply (service pins.plan + pins.apply) for an archive, daemon alive', async () => {
    const plan = (await service['pins.plan']({ node: 'w1', action: 'pin', target: { archive: 'apps.tar.gz' } })) as PinPlan;
    expect(plan.changes.length).toBeGreaterThan(0);
    await service['pins.apply']({ node: 'w1', action: 'pin', target: { archive: 'apps.tar.gz' } });
    await expectDaemonAlive('pins.apply');
    const refs = await refsNow();
    for (const img of images) {
      for (const r of refs.filter((x) => x.imageId === img.configDigest)) expect({ ref: r.name, pin: r.pin }).toEqual({ ref: r.name, pin: 'durable' });
    }
    await expectCriAgrees(refs);
  });

  it('pin --all-k3s after k3s re-pinned, daemon alive', async () => {
    await emulateK3sStart(node); // the archive is still there: k3s makes the pins its own again
    expect((await labelsOf(node, images[1]!.name))[K3S]).toBe('pinned');
    await cli(['pin', 'w1', '--all-k3s']);
    await expectDaemonAlive('pin --all-k3s');
    const refs = await refsNow();
    expect(refs.filter((r) => r.pin === 'distro')).toEqual([]);
    await expectCriAgrees(refs);
  });

  it('rm-archive, then k3s starts: every pin Holdfast called durable is still pinned for kubelet', async () => {
    // Without CRI pinning (1.6) nothing protects the images but the archive: removal needs --force.
    if (mode === 'none') expect(await cli(['rm-archive', 'w1', 'apps.tar.gz'], 3)).toBeDefined();
    await cli(['rm-archive', 'w1', 'apps.tar.gz', ...(mode === 'none' ? ['--force'] : [])]);
    await expectDaemonAlive('rm-archive');
    expect(readdirSync(node.hostImagesDir).filter((f) => f.endsWith('.tar.gz'))).toEqual([]);
    const before = await refsNow();
    for (const r of before) expect({ ref: r.name, afterRestart: r.afterRestart }).toEqual({ ref: r.name, afterRestart: 'pinned' });
    // the name@sha256 references k3s added (its embedded registry needs them) are all still there
    const digestRefs = before.filter((r) => r.name.includes('@sha256:')).map((r) => r.name);
    expect(digestRefs.length).toBe(images.length);
    await emulateK3sStart(node);
    const names = new Set((await refsNow()).map((r) => r.name));
    for (const d of digestRefs) expect(names.has(d), d).toBe(true);
    for (const img of images) expect((await labelsOf(node, img.name))[CRI]).toBe('pinned');
    await expectCriAgrees(await refsNow());
    for (const img of await criImages(node)) expect(img.pinned).toBe(mode !== 'none');
  });

  it('a k3s pin Holdfast says will be lost is unpinned for kubelet after the restart', async () => {
    // k3s imports d, then its archive is deleted behind Holdfast's back
    const file = path.join(node.hostImagesDir, 'd.tar');
    const { images: [d] } = await writeImageArchive(file, { format: 'oci', images: [{ name: 'registry.local/site/d:1' }] });
    await emulateK3sStart(node);
    rmSync(file);
    const refs = await refsNow();
    const ofD = refs.filter((r) => r.imageId === d!.configDigest);
    expect(ofD.some((r) => r.pin === 'distro' && r.afterRestart === 'unpinned')).toBe(true);
    for (const r of ofD) expect(r.afterRestart).toBe('unpinned');
    await expectCriAgrees(refs); // pinned for kubelet now (k3s pin), on lines that CRI-pin
    await emulateK3sStart(node);
    expect(await criPinned(node, d!.configDigest, false)).toBe(false);
    await expectDaemonAlive('the emulated restart');
  });

  it('import --pin with k3s watching: imported, durable, CRI agrees, daemon alive', async () => {
    watcher = startK3sWatcher(node);
    const file = path.join(work, 'e.tar.zst');
    const { images: [e] } = await writeImageArchive(file, {
      format: 'oci',
      compression: 'zstd',
      images: [{ name: 'registry.local/site/e:2', platforms: ['linux/amd64', 'linux/arm64'] }],
    });
    // On 1.6 (no CRI pinning) the archive is what protects the images: it stays (see rm-archive above).
    const out = await cli(['import', 'w1', file, '--pin', ...(mode === 'none' ? [] : ['--remove-archive'])]);
    // (on 1.6 the archive stays: the line may end with what the next start makes of its pins)
    expect(out).toMatch(new RegExp(`^w1: ok — uploaded and imported, \\d+ references pinned ${mode === 'none' ? '(durably )?' : 'durably '}and verified \\(1 image, \\d+ references\\)${mode === 'none' ? '(\\. .+)?' : ', archive removed'}$`, 'm'));
    await expectDaemonAlive('import --pin');
    const refs = await refsNow();
    const ofE = refs.filter((r) => r.imageId === e!.configDigest);
    expect(ofE.length).toBeGreaterThan(0);
    for (const r of ofE) expect({ ref: r.name, pin: r.pin }).toEqual({ ref: r.name, pin: 'durable' });
    await expectCriAgrees(refs);
    await watcher.stop();
    watcher = undefined;
  });
});
