// The heart of Holdfast, end to end over lab nodes with the k3s start-up emulation:
// prediction of every pin's fate, durable pins, safe archive removal and the audit log —
// and in every scenario, the prediction must equal what the emulated restart really does.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, hostImagesDirOf, labelsOf, listImages, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { startLab } from '../../lab';
import { criPinned } from '../../lab/cri';
import type { ArchivesReport } from '../../src/shared/archivesReport';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import { isImageIdRef } from '../../src/shared/protection';
import { addLabNode, criPinsHonoured, labDistro, runCli, sha256File, tempHome } from './support';

let lab: Lab;
let home: string;

const CRI = 'io.cri-containerd.pinned';
// The nodes' distro ($HOLDFAST_LAB_DISTRO: k3s, or RKE2 in the integration-rke2 project).
const D = labDistro();
const K3S = D.label;
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Gives the node the distro's binary at the release on this k3s release's line (null: release unknown). */
const release = (n: LabNodeHandle, k3sRelease: string | null) => n.installDistroBinary(D.distro, k3sRelease === null ? null : D.release(k3sRelease));

const addNode = (node: LabNodeHandle, extra: string[] = []): Promise<void> => addLabNode(lab, node, home, { extra });

async function cli<T = unknown>(args: string[], expectCode = 0): Promise<T> {
  const r = await runCli(args, { HOLDFAST_HOME: home });
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r) as T;
}

const images = (node: string) => cli<ImageRef[]>(['images', node, '--json']);
const archives = async (node: string) => (await cli<ArchivesReport>(['archives', node, '--json'])).archives;

/**
 * Predicts with Holdfast, restarts k3s in the lab, and checks that every reference Holdfast
 * predicted as pinned/unpinned really is (CRI label present or not) after the restart — and,
 * per image, that CRI (what kubelet's GC reads) reports exactly the images Holdfast said stay
 * pinned as pinned (on lines that CRI-pin at all; 1.6 pins nothing).
 */
async function predictThenRestart(node: LabNodeHandle, opts: Parameters<typeof emulateK3sStart>[1] = {}) {
  const before = await images(node.name);
  await emulateK3sStart(node, opts);
  const after = new Map((await listImages(node)).map((i) => [i.name, i.labels]));
  for (const ref of before) {
    const labels = after.get(ref.name);
    expect(labels, `${ref.name} still exists`).toBeDefined();
    // CRI's own sha256:<id> record carries no label: it shares its image's fate (checked below)
    if (isImageIdRef(ref)) continue;
    const pinned = labels![CRI] === 'pinned';
    expect({ ref: ref.name, pinned }).toEqual({ ref: ref.name, pinned: ref.afterRestart === 'pinned' });
  }
  const honoured = await criPinsHonoured(node);
  for (const id of new Set(before.map((r) => r.imageId).filter((x): x is string => x !== null))) {
    const refs = before.filter((r) => r.imageId === id);
    const want = honoured && refs.some((r) => r.afterRestart === 'pinned');
    for (const r of refs.filter(isImageIdRef)) expect({ ref: r.name, afterRestart: r.afterRestart }).toEqual({ ref: r.name, afterRestart: refs.some((x) => !isImageIdRef(x) && x.afterRestart === 'pinned') ? 'pinned' : 'unpinned' });
    expect({ image: id, criPinned: await criPinned(node, id, want) }).toEqual({ image: id, criPinned: want });
  }
  return before;
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['seed', 'behind', 'cache', 'rke', 'refuse', 'walk', 'list'] });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
});

describe('the seed scenario (k3s issue #11363), end to end', () => {
  it('imports, makes pins durable, removes the archive safely, survives a restart', async () => {
    const n = lab.node('seed');
    const archivePath = path.join(n.hostImagesDir, 'site', 'apps.tar.gz');
    mkdirSync(path.dirname(archivePath), { recursive: true });
    const { images: written } = await writeImageArchive(archivePath, {
      format: 'docker',
      compression: 'gzip',
      images: [{ name: 'docker.io/library/app:1.0' }, { name: 'registry.local/team/worker:2' }],
    });
    await emulateK3sStart(n);
    // A release whose start-up walk reaches subfolders (k3s PR #12237 on); with the release
    // unknown Holdfast could not tell whether site/apps.tar.gz is imported at all.
    await release(n, 'v1.33.2+k3s1');
    await addNode(n);

    // k3s pins, kept only because the archive is there.
    let refs = await images('seed');
    expect(refs).toHaveLength(6); // 2 tags + 2 digest references + CRI's 2 sha256:<id> records
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r).toMatchObject({ pin: 'distro', afterRestart: 'pinned', archive: 'site/apps.tar.gz' });
    }
    for (const r of refs.filter(isImageIdRef)) {
      expect(r).toMatchObject({ pin: 'none', afterRestart: 'pinned' });
      expect(r.reason).toMatch(/^CRI's own record of the image of /);
    }
    let arch = (await archives('seed')).find((a) => a.path === 'site/apps.tar.gz')!;
    expect(arch).toMatchObject({ kind: 'archive', imported: true, safeToRemove: false, images: ['docker.io/library/app:1.0', 'registry.local/team/worker:2'] });
    // (containerd 1.6 has no CRI pinning: there no pin protects the images, only the archive)
    const honoured = n.containerdLine !== '1.6';
    expect(arch.reason).toMatch(honoured ? new RegExp(`pinned by ${D.name} only`) : /no CRI image pinning/);

    // Removing now is refused (exit 3) and says what is missing; the archive stays.
    const refused = await runCli(['rm-archive', 'seed', 'site/apps.tar.gz'], { HOLDFAST_HOME: home });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(honoured ? `docker.io/library/app:1.0 is pinned by ${D.name} only` : 'docker.io/library/app:1.0: this containerd has no CRI image pinning');
    expect(existsSync(archivePath)).toBe(true);

    // Preview, then make the archive's pins durable.
    const preview = await cli<PinPlan>(['pin', 'seed', '--archive', 'site/apps.tar.gz', '--dry-run', '--json']);
    expect(preview.changes.map((c) => c.ref).sort()).toEqual(refs.map((r) => r.name).sort());
    expect((await labelsOf(n, 'docker.io/library/app:1.0'))[K3S]).toBe('pinned'); // dry run changed nothing
    const applied = await cli<PinPlan>(['pin', 'seed', '--archive', 'site/apps.tar.gz', '--json']);
    expect(applied.changes).toHaveLength(6); // every reference of both images, CRI's records too
    for (const r of refs) {
      const labels = await labelsOf(n, r.name);
      expect(labels[CRI]).toBe('pinned');
      expect(labels[K3S]).toBeUndefined();
      expect(labels['io.holdfast.pinned-from']).toBe('site/apps.tar.gz');
    }

    // Durable, but the archive would hand the pins back to k3s: now it is safe to remove — where
    // CRI honours pins at all; on 1.6 the archive is what brings the images back, so only --force.
    refs = await images('seed');
    for (const r of refs.filter((x) => !isImageIdRef(x))) expect(r.reason).toMatch(new RegExp(`${D.name}-managed again`));
    arch = (await archives('seed')).find((a) => a.path === 'site/apps.tar.gz')!;
    expect(arch.safeToRemove).toBe(honoured);
    if (!honoured) {
      expect(arch.reason).toMatch(/no CRI image pinning/);
      expect((await runCli(['rm-archive', 'seed', 'site/apps.tar.gz'], { HOLDFAST_HOME: home })).code).toBe(3);
    }

    const sha = await sha256File(archivePath);
    const removed = await runCli(['rm-archive', 'seed', 'site/apps.tar.gz', ...(honoured ? [] : ['--force'])], { HOLDFAST_HOME: home });
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(existsSync(archivePath)).toBe(false);

    const log = await cli<AuditEntry[]>(['log', 'seed', '--json']);
    expect(log[0]).toMatchObject({ node: 'seed', action: 'rm-archive', archive: { path: 'site/apps.tar.gz', sha256: sha } });
    expect(log[1]).toMatchObject({ node: 'seed', action: 'pin' });
    expect(log[1]!.changes![0]!.before[K3S]).toBe('pinned');

    // The restart: every pin is still there, as predicted.
    const predicted = await predictThenRestart(n);
    for (const r of predicted) expect(r).toMatchObject({ pin: 'durable', afterRestart: 'pinned', archive: null });
    for (const w of written) expect((await labelsOf(n, w.name))[CRI]).toBe('pinned');
  });
});

describe('an archive deleted behind Holdfast\'s back', () => {
  it('is predicted lost, and is really lost at the restart', async () => {
    const n = lab.node('behind');
    const file = path.join(n.hostImagesDir, 'tools.tar.zst');
    await writeImageArchive(file, { format: 'oci', compression: 'zstd', images: [{ name: 'registry.local/tools/probe:1' }] });
    const keep = path.join(n.hostImagesDir, 'keep.tar');
    await writeImageArchive(keep, { format: 'docker', images: [{ name: 'docker.io/library/keep:1' }] });
    await emulateK3sStart(n);
    await addNode(n);
    rmSync(file);
    const refs = await predictThenRestart(n);
    const probe = refs.filter((r) => r.name.startsWith('registry.local/tools/probe'));
    expect(probe).toHaveLength(2);
    for (const r of probe) {
      expect(r.afterRestart).toBe('unpinned');
      expect(r.reason).toMatch(/no archive in the images dir brings it back/);
    }
    for (const r of refs.filter((x) => x.name.startsWith('docker.io/library/keep'))) expect(r.afterRestart).toBe('pinned');
  });
});

describe('the .cache.json trap, on the real format', () => {
  const tagsOf = (refs: ImageRef[], repo: string) => refs.filter((r) => !isImageIdRef(r) && r.name.startsWith(`${repo}:`));
  const digestRefsOf = (refs: ImageRef[], repo: string) => refs.filter((r) => r.name.startsWith(`${repo}@`));

  it('before the fix an unchanged archive loses its pins — touched (same size, newer mtime) included', async () => {
    const n = lab.node('cache');
    writeFileSync(path.join(n.hostImagesDir, '.cache.json'), ''); // an empty file enables the cache
    await writeImageArchive(path.join(n.hostImagesDir, 'cached.tar.bz2'), { format: 'docker', compression: 'bzip2', images: [{ name: 'docker.io/library/cached:1' }] });
    await writeImageArchive(path.join(n.hostImagesDir, 'steady.tar'), { format: 'docker', images: [{ name: 'docker.io/library/steady:1' }] });
    await emulateK3sStart(n); // imports and writes the cache, without names (no fix)
    await addNode(n);
    await release(n, 'v1.32.5+k3s1');
    // same size, newer mtime: k3s before #14284 still skips it (the old prediction said re-imported)
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(n.hostImagesDir, 'cached.tar.bz2'), later, later);

    for (const a of (await archives('cache')).filter((x) => x.kind === 'archive')) expect({ path: a.path, cached: a.cachedByK3s }).toEqual({ path: a.path, cached: true });
    let refs = await images('cache');
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r.reason).toMatch(new RegExp(`${esc(D.release('v1.32.5+k3s1'))} skips \\S+ \\(same size in .cache.json\\) and re-pins nothing it skips`));
    }
    refs = await predictThenRestart(n, { cacheFix: false });
    for (const r of refs) expect(r.afterRestart).toBe('unpinned');
  });

  it('a fixed release re-imports what an entry without names records (the old forecast said lost), then records the names', async () => {
    const n = lab.node('cache');
    await release(n, 'v1.37.0+k3s1');
    const refs = await predictThenRestart(n, { cacheFix: true });
    for (const r of tagsOf(refs, 'docker.io/library/cached')) expect(r).toMatchObject({ afterRestart: 'pinned', archive: 'cached.tar.bz2' });
    for (const r of tagsOf(refs, 'docker.io/library/steady')) {
      expect(r).toMatchObject({ afterRestart: 'pinned', archive: 'steady.tar' });
      expect(r.reason).toMatch(/re-imports steady\.tar at start and pins it again \(its .cache.json entry records no images\)/);
    }
    const cache = JSON.parse(readFileSync(path.join(n.hostImagesDir, '.cache.json'), 'utf8')) as Record<string, { images?: string[] }>;
    expect(cache[D.cacheKey('cached.tar.bz2')]?.images).toEqual(['docker.io/library/cached:1']);
    expect(cache[D.cacheKey('steady.tar')]?.images).toEqual(['docker.io/library/steady:1']);
  });

  it('a whole-second file with names: those names re-pinned, not the digest references; an unknown release trusts the entry', async () => {
    const n = lab.node('cache');
    // Written normally, the files have sub-second mtimes, which a fixed release re-imports at
    // every start; cut to the whole second the entries record, they are skipped.
    for (const f of ['cached.tar.bz2', 'steady.tar']) {
      const whole = Math.floor(statSync(path.join(n.hostImagesDir, f)).mtimeMs / 1000);
      utimesSync(path.join(n.hostImagesDir, f), whole, whole);
    }
    const refs = await predictThenRestart(n, { cacheFix: true });
    for (const r of tagsOf(refs, 'docker.io/library/cached')) {
      expect(r).toMatchObject({ afterRestart: 'pinned', archive: 'cached.tar.bz2' });
      expect(r.reason).toMatch(/re-pins the names its .cache.json entry records/);
    }
    for (const r of digestRefsOf(refs, 'docker.io/library/cached')) {
      expect(r.afterRestart).toBe('unpinned');
      expect(r.reason).toMatch(/re-pins only the names its entry records, not its digest references/);
    }
    // Without the release, an entry with names is evidence of the fix; one without is not.
    const file = path.join(n.hostImagesDir, '.cache.json');
    const cache = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { images?: string[] }>;
    delete cache[D.cacheKey('steady.tar')]!.images;
    writeFileSync(file, JSON.stringify(cache));
    await release(n, null);
    const unknown = await images('cache');
    for (const r of tagsOf(unknown, 'docker.io/library/cached')) expect(r.afterRestart).toBe('pinned');
    for (const r of tagsOf(unknown, 'docker.io/library/steady')) expect(r.reason).toMatch(new RegExp(`cannot tell whether ${D.name} unknown version has the .cache.json fix`));
  });

  it('a cache too large to read counts as skipping everything', async () => {
    const n = lab.node('cache');
    const file = path.join(n.hostImagesDir, '.cache.json');
    writeFileSync(file, Buffer.alloc(16 * 1024 * 1024 + 1, ' '));
    expect(statSync(file).size).toBeGreaterThan(16 * 1024 * 1024);
    await release(n, 'v1.37.0+k3s1');
    for (const a of (await archives('cache')).filter((x) => x.kind === 'archive')) expect(a.cachedByK3s).toBe(true);
    for (const r of tagsOf(await images('cache'), 'docker.io/library/cached')) {
      expect(r.afterRestart).toBe('unpinned');
      expect(r.reason).toMatch(/.cache.json cannot be read/);
    }
  });
});

describe('the start-up walk follows the release (k3s PR #12237)', () => {
  it('old releases read the top level case-insensitively, new ones subfolders case-sensitively; unknown keeps no uncertain pin', async () => {
    const n = lab.node('walk');
    const d = n.hostImagesDir;
    await writeImageArchive(path.join(d, 'UP.TAR'), { format: 'docker', images: [{ name: 'docker.io/library/up:1' }] });
    await writeImageArchive(path.join(d, 'sub', 'deep.tar'), { format: 'docker', images: [{ name: 'docker.io/library/deep:1' }] });
    await emulateK3sStart(n);
    await release(n, 'v1.33.2+k3s1');
    await addNode(n);
    let files = await archives('walk');
    expect(files.find((a) => a.path === 'UP.TAR')).toMatchObject({ kind: 'ignored', reason: expect.stringMatching(/matches extensions case-sensitively since v1\.34\.0, v1\.33\.1/) });
    expect(files.find((a) => a.path === 'sub/deep.tar')?.kind).toBe('archive');

    // an older release: sub/deep.tar is never imported (its pins go), UP.TAR is
    await release(n, 'v1.29.15+k3s1');
    files = await archives('walk');
    expect(files.find((a) => a.path === 'UP.TAR')?.kind).toBe('archive');
    expect(files.find((a) => a.path === 'sub/deep.tar')).toMatchObject({ kind: 'ignored', reason: expect.stringMatching(/reads only the top level/) });
    let refs = await predictThenRestart(n, { walk: 'top-level-case-insensitive' });
    for (const r of refs.filter((x) => !isImageIdRef(x))) expect(r.afterRestart).toBe('unpinned');

    // back on a current release: sub/deep.tar pins again, UP.TAR's images lose theirs
    await release(n, 'v1.33.2+k3s1');
    refs = await predictThenRestart(n);
    for (const r of refs.filter((x) => !isImageIdRef(x))) expect({ ref: r.name, after: r.afterRestart }).toEqual({ ref: r.name, after: r.name.includes('/deep') ? 'pinned' : 'unpinned' });

    await release(n, null);
    for (const r of (await images('walk')).filter((x) => x.name.startsWith('docker.io/library/deep'))) {
      expect(r.afterRestart).toBe('unpinned');
      expect(r.reason).toMatch(/cannot tell whether sub\/deep\.tar is imported at all/);
    }
  });
});

describe('.txt pre-pull lists', () => {
  it('re-pin the present images they name at every start, and nothing when one is absent', async () => {
    const n = lab.node('list');
    const d = n.hostImagesDir;
    await writeImageArchive(path.join(d, 'bb.tar'), { format: 'docker', images: [{ name: 'docker.io/library/busybox:latest' }] });
    await emulateK3sStart(n);
    rmSync(path.join(d, 'bb.tar'));
    writeFileSync(path.join(d, 'busybox.txt'), '# what the site needs\nbusybox\n');
    await release(n, 'v1.33.2+k3s1');
    await addNode(n);
    let refs = await predictThenRestart(n);
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r).toMatchObject({ afterRestart: 'pinned', archive: 'busybox.txt' });
      expect(r.reason).toMatch(/re-reads busybox\.txt at start and pins the images it names again/);
    }

    writeFileSync(path.join(d, 'busybox.txt'), 'busybox\nregistry.local/absent:1\n');
    refs = await predictThenRestart(n);
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r.afterRestart).toBe('unpinned');
      expect(r.reason).toMatch(/also names registry\.local\/absent:1, which is not in containerd/);
    }
  });

  it('with .cache.json on, an unchanged list is skipped too: lost before the fix', async () => {
    const n = lab.node('list');
    const d = n.hostImagesDir;
    writeFileSync(path.join(d, 'busybox.txt'), 'docker.io/library/busybox:latest\n');
    writeFileSync(path.join(d, '.cache.json'), '');
    await emulateK3sStart(n); // reads the list (pins) and records it, without names
    await release(n, 'v1.36.2+k3s1');
    const refs = await predictThenRestart(n, { cacheFix: false });
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r).toMatchObject({ afterRestart: 'unpinned', archive: 'busybox.txt' });
      expect(r.reason).toMatch(/skips busybox\.txt \(same size in .cache.json\) and re-pins nothing it skips/);
    }
  });
});

describe('RKE2', () => {
  it('predicts and pins with the RKE2 label', async () => {
    const n = lab.node('rke');
    await n.installDistroBinary('rke2', 'v1.31.6+rke2r1');
    const dir = hostImagesDirOf(n, 'rke2');
    mkdirSync(dir, { recursive: true });
    await writeImageArchive(path.join(dir, 'rke.tar.lz4'), { format: 'docker', compression: 'lz4', images: [{ name: 'docker.io/rancher/hardened:1' }] });
    await emulateK3sStart(n, { distro: 'rke2' });
    await addNode(n, ['--images-dir', '/var/lib/rancher/rke2/agent/images']);
    let refs = await images('rke');
    for (const r of refs.filter((x) => !isImageIdRef(x))) {
      expect(r.labels['io.cattle.rke2.pinned']).toBe('pinned');
      expect(r).toMatchObject({ pin: 'distro', afterRestart: 'pinned', archive: 'rke.tar.lz4' });
      expect(r.reason).toMatch(/^RKE2 re-imports/);
    }
    await cli(['pin', 'rke', '--all-k3s']);
    const removed = await runCli(['rm-archive', 'rke', 'rke.tar.lz4', ...(n.containerdLine === '1.6' ? ['--force'] : [])], { HOLDFAST_HOME: home });
    expect(removed.code).toBe(0);
    refs = await predictThenRestart(n, { distro: 'rke2' });
    for (const r of refs) {
      expect(r).toMatchObject({ pin: 'durable', afterRestart: 'pinned' });
      expect(r.labels['io.cattle.rke2.pinned']).toBeUndefined();
    }
  });
});

describe("RKE2's own *-image.txt lists", () => {
  it('re-pin its images at every start, and take over a durable tag of the same image: Holdfast says so, naming RKE2', async () => {
    const n = lab.node('rke'); // after 'predicts and pins with the RKE2 label': RKE2 v1.31.6+rke2r1
    const dir = hostImagesDirOf(n, 'rke2');
    const RUNTIME = 'docker.io/rancher/rke2-runtime:v1.31.6-rke2r1';
    const KEPT = 'registry.local/site/rke2-runtime:kept';
    const start = { distro: 'rke2' as const, rke2Images: { runtime: RUNTIME } };
    // An archive at the top level: RKE2 writes no list of its own.
    await writeImageArchive(path.join(dir, 'runtime.tar'), { format: 'docker', images: [{ name: RUNTIME }] });
    await emulateK3sStart(n, start);
    expect(existsSync(path.join(dir, 'runtime-image.txt'))).toBe(false);
    await n.ctr(['images', 'tag', RUNTIME, KEPT]);
    await cli(['pin', 'rke', KEPT]);
    expect((await labelsOf(n, KEPT))['io.cattle.rke2.pinned']).toBeUndefined();
    // Once the top level holds no archive, RKE2 writes runtime-image.txt and pins every tag of the
    // image it names: the durable tag becomes RKE2-managed.
    rmSync(path.join(dir, 'runtime.tar'));
    await emulateK3sStart(n, start);
    expect(readFileSync(path.join(dir, 'runtime-image.txt'), 'utf8')).toBe(`${RUNTIME}\n`);
    expect((await labelsOf(n, KEPT))['io.cattle.rke2.pinned']).toBe('pinned');

    expect((await archives('rke')).find((a) => a.path === 'runtime-image.txt')).toMatchObject({ kind: 'prepull' });
    const runtime = (await images('rke')).find((r) => r.name === RUNTIME)!;
    expect(runtime).toMatchObject({ pin: 'distro', afterRestart: 'pinned', archive: 'runtime-image.txt' });
    // Making it durable again: the plan warns that the list hands it back to RKE2.
    const plan = await cli<PinPlan>(['pin', 'rke', KEPT, '--dry-run', '--json']);
    expect(plan.warnings).toHaveLength(1);
    expect(plan.warnings![0]).toContain('runtime-image.txt in the images dir pins');
    expect(plan.warnings![0]).toContain('again at every RKE2 start (RKE2 pins every tag of an image a .txt list names)');
    await cli(['pin', 'rke', KEPT]);
    const kept = (await images('rke')).find((r) => r.name === KEPT)!;
    expect(kept).toMatchObject({ pin: 'durable', afterRestart: 'pinned', archive: 'runtime-image.txt', listTrap: { list: 'runtime-image.txt', listed: RUNTIME } });
    expect(kept.reason).toContain('RKE2 pins every tag of an image a .txt list names at each start');
    const after = await predictThenRestart(n, start);
    expect(after.find((r) => r.name === KEPT)?.afterRestart).toBe('pinned');
    expect((await labelsOf(n, KEPT))['io.cattle.rke2.pinned']).toBe('pinned');
  });
});

describe('refusals and concurrency', () => {
  it('keeps labels another client writes while Holdfast pins', async () => {
    const n = lab.node('refuse');
    await writeImageArchive(path.join(n.hostImagesDir, 'busy.tar'), {
      format: 'docker',
      images: Array.from({ length: 6 }, (_, i) => ({ name: `docker.io/library/busy-${i}:1` })),
    });
    await emulateK3sStart(n);
    await addNode(n);
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      while (!stop) {
        for (let i = 0; i < 6 && !stop; i++) {
          await n.ctr(['images', 'label', `docker.io/library/busy-${i}:1`, `team.example/owner=crew-${writes}`]);
          writes++;
        }
      }
    })();
    try {
      await cli(['pin', 'refuse', '--archive', 'busy.tar']);
    } finally {
      stop = true;
      await writer;
    }
    expect(writes).toBeGreaterThan(0);
    for (let i = 0; i < 6; i++) {
      const labels = await labelsOf(n, `docker.io/library/busy-${i}:1`);
      expect(labels[CRI]).toBe('pinned');
      expect(labels[K3S]).toBeUndefined();
      expect(labels['team.example/owner']).toMatch(/^crew-\d+$/);
    }
  });

  it('refuses to remove what is not safe, saying exactly what is missing', async () => {
    const n = lab.node('refuse');
    // not imported yet
    await writeImageArchive(path.join(n.hostImagesDir, 'fresh.tgz'), { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/fresh:1' }] });
    let r = await runCli(['rm-archive', 'refuse', 'fresh.tgz'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('docker.io/library/fresh:1 is not in containerd');
    // a pre-pull list and an ignored file are not archives
    writeFileSync(path.join(n.hostImagesDir, 'prepull.txt'), 'docker.io/library/x:1\n');
    r = await runCli(['rm-archive', 'refuse', 'prepull.txt'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('not an image archive');
    // a corrupt archive cannot be read
    writeFileSync(path.join(n.hostImagesDir, 'broken.tar.gz'), Buffer.from('definitely not gzip'));
    const broken = (await archives('refuse')).find((a) => a.path === 'broken.tar.gz')!;
    expect(broken.error).toBeTruthy();
    expect(broken.safeToRemove).toBe(false);
    r = await runCli(['rm-archive', 'refuse', 'broken.tar.gz'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('could not be read');
    // unknown path
    r = await runCli(['rm-archive', 'refuse', 'nope.tar'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no file nope.tar');
    // an incomplete image: durable, but a layer is gone from the content store
    await emulateK3sStart(n);
    await cli(['pin', 'refuse', '--archive', 'fresh.tgz']);
    const fresh = (await images('refuse')).find((i) => i.name === 'docker.io/library/fresh:1')!;
    const manifest = JSON.parse(await n.ctr(['content', 'get', fresh.digest]));
    const layer = manifest.layers[0].digest as string;
    await n.ctr(['content', 'rm', layer]);
    r = await runCli(['rm-archive', 'refuse', 'fresh.tgz'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`missing ${layer} (layer 1/1)`);
    expect(existsSync(path.join(n.hostImagesDir, 'fresh.tgz'))).toBe(true);
    // --force removes anyway and is logged as forced
    r = await runCli(['rm-archive', 'refuse', 'fresh.tgz', '--force'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('FORCED');
    const log = await cli<AuditEntry[]>(['log', 'refuse', '--json']);
    expect(log[0]).toMatchObject({ action: 'rm-archive', forced: true });
    expect(log[0]!.note).toContain('missing');
  });
});
