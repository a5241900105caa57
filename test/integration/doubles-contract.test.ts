// The UI tests' fake node (test/doubles/node.ts) against a real one: the same cases, written once,
// run against a NodeSession opened over SSH on a lab node (real containerd, real sshd) and
// against a FakeSession, both seeded by k3s importing the same archive. Where the fake answers
// what containerd, SFTP or the node would not, the UI specs test a node that does not exist; a
// failure here means the double is wrong (fix it), not that the case should bend.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, writeImageArchive, type WriteImageArchiveOptions, type WrittenImage } from '../../lab/fixtures';
import { emulateK3sStart, repositoryOf } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import { completeNode } from '../../src/core/config/nodes';
import type { ContainerdClient, GrpcContainerdClient, ContainerdImage } from '../../src/core/containerd/client';
import { NodeSession, type SessionSftp } from '../../src/core/node/session';
import { diskOf } from '../../src/core/usecases/fleet/disk';
import { FakeNode } from '../doubles/node';
import { labNodeDef } from './support';

const ARCHIVE = 'contract.tar';
const K3S_VERSION = 'v1.33.7+k3s1';
const APP = 'docker.io/library/contract-app:1.0';
const MULTI = 'registry.local/tools/contract-multi:2.0';
const SEED: WriteImageArchiveOptions = {
  format: 'oci',
  images: [{ name: APP }, { name: MULTI, platforms: ['linux/amd64', 'linux/arm64'] }],
};

const MANAGED = { 'io.cri-containerd.image': 'managed' };
const PINS = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };

/** What a session's containerd is asked in these cases: core's seam, plus a record made by hand. */
type ContractSession = NodeSession & { readonly containerd: ContainerdClient & Pick<GrpcContainerdClient, 'createImage'> };

interface Side {
  session: ContractSession;
  /** The images the archive brought, as the fixture wrote them (digests of the real blobs). */
  images: WrittenImage[];
  /** The archive's bytes, as k3s found it in the images dir. */
  archive: Buffer;
  stop(): Promise<void>;
}

/** A lab node: the archive in its images dir, k3s's start imports and pins it, a session over SSH. */
async function labSide(): Promise<Side> {
  const lab: Lab = await startLab({ nodes: ['contract'] });
  try {
    const n = lab.node('contract');
    await n.installDistroBinary('k3s', K3S_VERSION);
    const file = path.join(n.hostImagesDir, ARCHIVE);
    const { images } = await writeImageArchive(file, SEED);
    // An empty .cache.json turns k3s's import cache on (lab/k3s.ts readCache), as current k3s has it.
    await writeFile(path.join(n.hostImagesDir, '.cache.json'), '');
    const report = await emulateK3sStart(n);
    expect(report.failed).toEqual([]);
    const session = await NodeSession.open(labNodeDef(lab, n));
    return { session, images, archive: await readFile(file), stop: () => session.close().finally(() => lab.stop()) };
  } catch (e) {
    await lab.stop();
    throw e;
  }
}

/** A fake node: the same archive in its images dir, its k3s imports it as lab/k3s.ts does. */
async function fakeSide(): Promise<Side> {
  const { tar, images } = await buildImageArchive(SEED);
  const def = completeNode({ name: 'contract', host: '127.0.0.1' });
  const node = new FakeNode({
    def,
    info: { containerdVersion: 'v2.1.4', containerdRevision: '75cb2b7193e4e490e9fbdc236c0e811ccaba3376', distro: 'k3s', distroVersion: K3S_VERSION },
    images: [],
    files: [{ path: ARCHIVE, mtime: '2026-12-01T00:00:00Z', bytes: tar }],
    disk: { totalBytes: 40 * 2 ** 30, freeBytes: 25 * 2 ** 30 },
    latencyMs: 0,
  });
  await node.k3sImport(ARCHIVE);
  const session = await node.open(def, {});
  return { session, images, archive: tar, stop: () => session.close() };
}

const written = (side: Side, name: string): WrittenImage => side.images.find((i) => i.name === name)!;
/** The image id CRI gives an image: its linux/amd64 config digest (the lab and the fake run amd64). */
const imageIdOf = (w: WrittenImage): string => w.platforms.find((p) => p.platform === 'linux/amd64')!.configDigest;
const byName = (records: ContainerdImage[]) => new Map(records.map((r) => [r.name, r]));
const readAll = async (s: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
};
const statvfs = (sftp: SessionSftp, dir: string) =>
  new Promise<Record<string, unknown>>((resolve, reject) => sftp.ext_openssh_statvfs(dir, (err, st) => (err ? reject(err) : resolve(st as Record<string, unknown>))));

/** The cases, once: each side must give the same answers. */
function contract(name: string, open: () => Promise<Side>): void {
  describe(name, () => {
    let side: Side;
    let s: ContractSession;
    beforeAll(async () => {
      side = await open();
      s = side.session;
    });
    afterAll(async () => {
      await side?.stop();
    });

    it('lists the imported images: tags and digest references, their targets and labels as k3s left them', async () => {
      // (CRI records image ids as it handles containerd's events: by now, or shortly.)
      await expect.poll(async () => (await s.containerd.listImages()).length).toBe(6);
      const records = byName(await s.containerd.listImages());
      for (const name of [APP, MULTI]) {
        const w = written(side, name);
        const digestRef = `${repositoryOf(name)}@${w.digest}`;
        for (const ref of [name, digestRef]) {
          const r = records.get(ref);
          expect(r, ref).toBeDefined();
          expect(r!.target.digest).toBe(w.digest);
          expect(r!.labels).toMatchObject(PINS);
        }
        expect(records.get(name)!.labels).toEqual({ ...MANAGED, ...PINS });
        // The target as the archive's index.json gives it: the image's manifest, or its index.
        const blob = await s.containerd.readContent(w.digest);
        expect(records.get(name)!.target.size).toBe(blob.length);
        expect(records.get(name)!.target.mediaType).toBe(w.platforms.length > 1 ? 'application/vnd.oci.image.index.v1+json' : 'application/vnd.oci.image.manifest.v1+json');
      }
      // containerd's CRI plugin records each image under its id too: the config digest of the
      // node platform's manifest, labelled managed, with the image's target. Nothing else.
      for (const name of [APP, MULTI]) {
        const w = written(side, name);
        const id = imageIdOf(w);
        expect(records.get(id), `${id} (${name})`).toMatchObject({ labels: MANAGED, target: { digest: w.digest } });
      }
      const expected = [APP, MULTI].flatMap((n) => [n, `${repositoryOf(n)}@${written(side, n).digest}`, imageIdOf(written(side, n))]);
      expect([...records.keys()].sort()).toEqual(expected.sort());
    });

    it('updates labels one by one: a label set, a label removed, the others kept', async () => {
      const after = await s.containerd.updateImageLabels(APP, { 'contract.holdfast/mark': 'yes', 'io.cattle.k3s.pinned': null });
      const expected = { ...MANAGED, 'io.cri-containerd.pinned': 'pinned', 'contract.holdfast/mark': 'yes' };
      expect(after.labels).toEqual(expected);
      expect((await s.containerd.getImage(APP))!.labels).toEqual(expected);
      // The other references of the image are untouched.
      expect((await s.containerd.getImage(`${repositoryOf(APP)}@${written(side, APP).digest}`))!.labels).toMatchObject(PINS);
      expect(await s.containerd.getImage('docker.io/library/not-there:1')).toBeNull();
    });

    it('creates an image record that reads back as written', async () => {
      const source = (await s.containerd.getImage(MULTI))!;
      const name = 'docker.io/library/contract-copy:1.0';
      const made = await s.containerd.createImage({ name, labels: { 'contract.holdfast/copy': 'of-multi' }, target: source.target });
      expect(made.name).toBe(name);
      // CRI marks every image of its namespace managed, whoever made it.
      await expect.poll(async () => (await s.containerd.getImage(name))?.labels).toEqual({ 'contract.holdfast/copy': 'of-multi', ...MANAGED });
      const read = (await s.containerd.getImage(name))!;
      expect(read.target).toEqual(source.target);
      expect(read.createdAt).toBeInstanceOf(Date);
      expect((await s.containerd.listImages()).map((r) => r.name)).toContain(name);
    });

    it('reads, stats and lists a file of the images dir', async () => {
      const file = `${s.def.imagesDir}/${ARCHIVE}`;
      const st = await s.files.stat(file);
      expect(st).toMatchObject({ type: 'file', size: side.archive.length });
      expect(await readAll(s.files.readStream(file, { size: side.archive.length }))).toEqual(side.archive);
      expect(await s.files.stat(`${s.def.imagesDir}/missing.tar`)).toBeNull();
      expect((await s.files.stat(s.def.imagesDir))?.type).toBe('dir');
      const listed = await s.files.listFiles(s.def.imagesDir);
      expect(listed.find((f) => f.path === ARCHIVE)).toMatchObject({ abs: file, size: side.archive.length });
      // k3s's import cache is a file of the dir too (core tells it from archives itself).
      expect(listed.map((f) => f.path).sort()).toEqual(['.cache.json', ARCHIVE]);
      const cacheFile = listed.find((f) => f.path === '.cache.json')!;
      const cache = JSON.parse((await readAll(s.files.readStream(cacheFile.abs, { size: cacheFile.size }))).toString('utf8')) as Record<string, { size: number; modTime: string }>;
      expect(Object.keys(cache)).toEqual([file]);
      expect(cache[file]).toMatchObject({ size: side.archive.length, modTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
    });

    it("measures the images dir's file system: statvfs over the session's SFTP channel", async () => {
      const st = await statvfs(await s.ssh.sftp(), s.def.imagesDir);
      for (const k of ['f_bsize', 'f_frsize', 'f_blocks', 'f_bavail']) expect(Number(st[k]), k).toBeGreaterThan(0);
      expect(Number(st.f_bavail)).toBeLessThanOrEqual(Number(st.f_blocks));
      const disk = await diskOf(s.ssh, s.def.imagesDir);
      expect(disk).toMatchObject({ path: s.def.imagesDir, via: 'statvfs' });
      expect(disk!.freeBytes).toBeGreaterThan(0);
      expect(disk!.freeBytes).toBeLessThanOrEqual(disk!.totalBytes!);
    });

    it('detects what the node runs: containerd through the API, k3s from its binary', async () => {
      const detected = await s.detect();
      expect(detected.containerdVersion).toMatch(/^v?\d+\.\d+\.\d+/);
      expect(detected).toMatchObject({ distro: 'k3s', distroVersion: K3S_VERSION });
      expect(await s.info()).toEqual(detected);
      expect(await s.platform()).toMatchObject({ os: 'linux', architecture: 'amd64' });
    });

    it("resolves a multi-platform index to the node's platform manifest", async () => {
      const resolver = await s.resolver();
      const w = written(side, MULTI);
      const target = (await s.containerd.getImage(MULTI))!.target;
      const resolved = await resolver.resolve(target);
      expect(resolved.platforms).toEqual(['linux/amd64', 'linux/arm64']);
      expect(resolved.imageId).toBe(w.platforms.find((p) => p.platform === 'linux/amd64')!.configDigest);
      expect(resolved.size).toBeGreaterThan(target.size);
      const listed = (await s.listBaseImages()).find((r) => r.name === MULTI)!;
      expect(listed).toMatchObject({ digest: w.digest, imageId: resolved.imageId, platforms: ['linux/amd64', 'linux/arm64'] });
    });

    it('is closed once closed', async () => {
      expect(s.isClosed).toBe(false);
      await s.close();
      expect(s.isClosed).toBe(true);
    });
  });
}

contract('a lab node over SSH (real containerd)', labSide);
contract('the fake node of the UI tests (test/doubles)', fakeSide);
