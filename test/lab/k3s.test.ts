import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CRI_PIN_LABEL,
  emulateK3sStart,
  hostImagesDirOf,
  labelsOf,
  listImages,
  startK3sWatcher,
  startLab,
  writeImageArchive,
  type ArchiveCompression,
  type Lab,
  type LabNodeHandle,
} from '../../lab/index.ts';

const K3S = 'io.cattle.k3s.pinned';
const PINS = { [K3S]: 'pinned', [CRI_PIN_LABEL]: 'pinned' };
/** A whole-second mtime an hour ago, as a file extracted from a tar has it: the only kind .cache.json can match. */
const WHOLE_SECOND = new Date((Math.floor(Date.now() / 1000) - 3600) * 1000);

/**
 * The pin labels of a label map. CRI (on, as on k3s) adds io.cri-containerd.image=managed to
 * every image it sees; what this suite is about is the pins alone.
 */
function pinLabels(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => k.endsWith('.pinned')));
}
const pinLabelsOf = async (n: LabNodeHandle, ref: string) => pinLabels(await labelsOf(n, ref));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const repoOf = (name: string): string => name.slice(0, name.lastIndexOf(':'));

describe('k3s start-up emulation', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ nodes: ['imp', 'clr', 'cache', 'fix', 'watch', 'rke2', 'walk', 'list'] });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('imports docker and OCI archives of every compression, in subfolders, and pins them with digest refs', async () => {
    const n = lab.node('imp');
    const comps: [ArchiveCompression, string][] = [
      ['none', '.tar'],
      ['gzip', '.tar.gz'],
      ['gzip', '.tgz'],
      ['zstd', '.tar.zst'],
      ['zstd', '.tzst'],
      ['bzip2', '.tar.bz2'],
      ['bzip2', '.tbz'],
      ['lz4', '.tar.lz4'],
    ];
    const expected = new Map<string, { digest: string; archive: string }>();
    let i = 0;
    for (const format of ['docker', 'oci'] as const) {
      for (const [compression, ext] of comps) {
        i++;
        const name = `docker.io/lab/${format}-${compression}-${ext.replace(/\./g, '')}:v${i}`;
        const file = join(n.hostImagesDir, i % 2 ? 'sub/deeper' : '', `${format}-${i}${ext}`);
        const { images } = await writeImageArchive(file, { format, compression, images: [{ name }] });
        expected.set(name, { digest: images[0]!.digest, archive: file });
      }
    }
    // multi-platform OCI index, two images in one docker archive, short docker name
    const multi = await writeImageArchive(join(n.hostImagesDir, 'multi.tar'), {
      format: 'oci',
      images: [{ name: 'registry.example:5000/team/multi:2.0', platforms: ['linux/amd64', 'linux/arm64/v8'] }],
    });
    expected.set('registry.example:5000/team/multi:2.0', { digest: multi.images[0]!.digest, archive: join(n.hostImagesDir, 'multi.tar') });
    await writeImageArchive(join(n.hostImagesDir, 'two.tar'), {
      format: 'docker',
      images: [{ name: 'docker.io/library/one:1' }, { name: 'docker.io/library/two:2' }],
    });
    // never imported: wrong case, other extensions, pre-pull list
    await writeImageArchive(join(n.hostImagesDir, 'UPPER.TAR'), { format: 'docker', images: [{ name: 'docker.io/lab/upper:1' }] });
    await writeImageArchive(join(n.hostImagesDir, 'half.tar.partial'), { format: 'docker', images: [{ name: 'docker.io/lab/partial:1' }] });
    await writeImageArchive(join(n.hostImagesDir, 'x.tar.xz'), { format: 'docker', images: [{ name: 'docker.io/lab/xz:1' }] });
    await writeFile(join(n.hostImagesDir, 'prepull.txt'), 'docker.io/library/nginx:1.27\n');

    const report = await emulateK3sStart(n);
    // the list names an image that is not there: k3s would pull it, and offline that fails
    expect(report.failed).toEqual([{ archive: join(n.hostImagesDir, 'prepull.txt'), error: expect.stringMatching(/failed to pull images from/) }]);
    expect(report.cleared).toEqual([]);
    expect(report.skippedByCache).toEqual([]);
    expect(report.imported).toHaveLength(expected.size + 1);
    const byArchive = new Map(report.imported.map((r) => [r.archive, r.images]));
    expect(byArchive.get(join(n.hostImagesDir, 'two.tar'))).toEqual(['docker.io/library/one:1', 'docker.io/library/two:2']);
    const sub = report.imported.find((r) => r.archive.includes('/sub/deeper/'))!;
    expect(sub.nodePath.startsWith('/var/lib/rancher/k3s/agent/images/sub/deeper/')).toBe(true);

    const all = new Map((await listImages(n)).map((img) => [img.name, img]));
    for (const [name, { digest, archive }] of expected) {
      expect(byArchive.get(archive)).toEqual([name]);
      const img = all.get(name);
      expect(img?.digest, name).toBe(digest); // fixture digests are exactly what containerd records
      expect(img?.labels).toMatchObject(PINS);
      const dref = all.get(`${repoOf(name)}@${digest}`);
      expect(dref?.digest).toBe(digest);
      expect(dref?.labels).toMatchObject(PINS);
    }
    expect(all.get('registry.example:5000/team/multi:2.0')?.mediaType).toBe('application/vnd.oci.image.index.v1+json');
    for (const never of ['upper', 'partial', 'xz']) expect([...all.keys()].some((k) => k.includes(`/lab/${never}:`))).toBe(false);
    expect(await labelsOf(n, 'docker.io/library/two:2')).toMatchObject(PINS);
    await expect(labelsOf(n, 'docker.io/library/absent:1')).rejects.toThrow(/no image ref/);
  });

  it('clearLabels unpins images whose archive is gone, leaves CRI-only pins alone, re-pins archives still there', async () => {
    const n = lab.node('clr');
    const keep = join(n.hostImagesDir, 'keep.tar.gz');
    const gone = join(n.hostImagesDir, 'gone.tar');
    const k = await writeImageArchive(keep, { format: 'oci', compression: 'gzip', images: [{ name: 'docker.io/lab/keep:1' }] });
    const g = await writeImageArchive(gone, { format: 'docker', images: [{ name: 'docker.io/lab/gone:1' }] });
    await emulateK3sStart(n);
    // a durable pin: only the CRI label
    await n.ctr(['images', 'tag', 'docker.io/lab/gone:1', 'docker.io/lab/durable:1']);
    // (ctr 1.x `tag` copies labels, 2.x does not: set them as they should be)
    await n.ctr(['images', 'label', 'docker.io/lab/durable:1', `${K3S}=`, `${CRI_PIN_LABEL}=pinned`]);
    expect(await pinLabelsOf(n, 'docker.io/lab/durable:1')).toEqual({ [CRI_PIN_LABEL]: 'pinned' });

    await rm(gone);
    const report = await emulateK3sStart(n);
    const goneDigestRef = `docker.io/lab/gone@${g.images[0]!.digest}`;
    expect(report.cleared.sort()).toEqual(
      ['docker.io/lab/gone:1', goneDigestRef, 'docker.io/lab/keep:1', `docker.io/lab/keep@${k.images[0]!.digest}`].sort(),
    );
    expect(report.imported.map((r) => r.archive)).toEqual([keep]);
    expect(await pinLabelsOf(n, 'docker.io/lab/gone:1')).toEqual({});
    expect(await pinLabelsOf(n, goneDigestRef)).toEqual({});
    expect(await pinLabelsOf(n, 'docker.io/lab/durable:1')).toEqual({ [CRI_PIN_LABEL]: 'pinned' });
    expect(await pinLabelsOf(n, 'docker.io/lab/keep:1')).toEqual(PINS);
  });

  it('.cache.json is written in k3s real format: absolute in-node keys, size, RFC 3339 modTime, images only with cacheFix', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      await writeImageArchive(file, { format: 'docker', compression: 'zstd', images: [{ name: 'docker.io/lab/app:1' }] });
      await utimes(file, WHOLE_SECOND, WHOLE_SECOND); // as extracted from a tar: the cache can skip it
      await writeFile(join(n.hostImagesDir, '.cache.json'), ''); // empty file enables the cache
      const first = await emulateK3sStart(n, { cacheFix });
      expect(first.imported.map((r) => r.archive)).toEqual([file]);
      const text = await readFile(join(n.hostImagesDir, '.cache.json'), 'utf8');
      const st = await stat(file);
      const modTime = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
      expect(JSON.parse(text)).toEqual({
        '/var/lib/rancher/k3s/agent/images/app.tar.zst': { size: st.size, modTime, ...(cacheFix ? { images: ['docker.io/lab/app:1'] } : {}) },
      });
      expect(text).toBe(JSON.stringify(JSON.parse(text))); // compact, as json.Marshal writes it
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
    }
  });

  it('the .cache.json trap: an unchanged archive is skipped and loses its pins; cacheFix re-pins exactly the recorded names', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      const digest = (await listImages(n)).find((i) => i.name === 'docker.io/lab/app:1')!.digest;
      const second = await emulateK3sStart(n, { cacheFix });
      expect(second.imported).toEqual([]);
      expect(second.skippedByCache).toEqual([file]);
      expect(second.cleared).toContain('docker.io/lab/app:1');
      expect(second.repinned).toEqual(cacheFix ? ['docker.io/lab/app:1'] : []);
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(cacheFix ? PINS : {});
      // the digest ref is not a recorded name: no release re-pins it from the cache
      expect(await pinLabelsOf(n, `docker.io/lab/app@${digest}`)).toEqual({});
    }
  });

  it('with cacheFix a sub-second mtime is later than the whole-second record: re-imported at every start, digest ref too', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      const digest = (await listImages(n)).find((i) => i.name === 'docker.io/lab/app:1')!.digest;
      const fraction = new Date(WHOLE_SECOND.getTime() + 250); // same second as recorded, 250 ms into it
      await utimes(file, fraction, fraction);
      for (let start = 0; start < 2; start++) {
        const r = await emulateK3sStart(n, { cacheFix });
        expect(r.imported.map((x) => x.archive)).toEqual(cacheFix ? [file] : []);
        expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(cacheFix ? PINS : {});
        expect(await pinLabelsOf(n, `docker.io/lab/app@${digest}`)).toEqual(cacheFix ? PINS : {});
      }
      await utimes(file, WHOLE_SECOND, WHOLE_SECOND);
    }
  });

  it('with cacheFix an entry without images is re-imported; without the fix it is skipped and its pins lost', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      const cacheFile = join(n.hostImagesDir, '.cache.json');
      const cache = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, { images?: string[] }>;
      delete cache['/var/lib/rancher/k3s/agent/images/app.tar.zst']!.images;
      await writeFile(cacheFile, JSON.stringify(cache));
      const r = await emulateK3sStart(n, { cacheFix });
      expect(r.imported.map((x) => x.archive)).toEqual(cacheFix ? [file] : []);
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(cacheFix ? PINS : {});
      // rewritten as the release writes it: images again with the fix, none without
      const back = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, { images?: string[] }>;
      expect(back['/var/lib/rancher/k3s/agent/images/app.tar.zst']!.images).toEqual(cacheFix ? ['docker.io/lab/app:1'] : undefined);
    }
  });

  it("without the fix an entry's images are ignored and dropped when k3s rewrites the file", async () => {
    const n = lab.node('cache');
    const cacheFile = join(n.hostImagesDir, '.cache.json');
    const cache = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, { images?: string[] }>;
    cache['/var/lib/rancher/k3s/agent/images/app.tar.zst']!.images = ['docker.io/lab/app:1'];
    await writeFile(cacheFile, JSON.stringify(cache));
    const r = await emulateK3sStart(n, { cacheFix: false });
    expect(r.repinned).toEqual([]);
    expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual({});
    const back = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, { images?: string[] }>;
    expect(back['/var/lib/rancher/k3s/agent/images/app.tar.zst']!.images).toBeUndefined();
  });

  it('k3s compares as its watcher does: a touched archive stays skipped until the same-size fix; a new size re-imports', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      const later = new Date(Date.now() + 60_000);
      await utimes(file, later, later); // same size, newer mtime
      const touched = await emulateK3sStart(n, { cacheFix });
      expect(touched.skippedByCache).toEqual(cacheFix ? [] : [file]);
      expect(touched.imported.map((r) => r.archive)).toEqual(cacheFix ? [file] : []);

      const before = (await stat(file)).size;
      await writeImageArchive(file, { format: 'docker', compression: 'zstd', images: [{ name: 'docker.io/lab/app:1', layerBytes: 3000 }] });
      expect((await stat(file)).size).not.toBe(before);
      const evenLater = new Date(Date.now() + 120_000);
      await utimes(file, evenLater, evenLater);
      const resized = await emulateK3sStart(n, { cacheFix });
      expect(resized.imported.map((r) => r.archive)).toEqual([file]);
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
    }
  });

  it('cacheFix re-pins a recorded name only while its ref exists, and entries of vanished files are pruned', async () => {
    const n = lab.node('fix');
    const file = join(n.hostImagesDir, 'pair.tar');
    await writeImageArchive(file, { format: 'docker', images: [{ name: 'docker.io/lab/p1:1' }, { name: 'docker.io/lab/p2:1' }] });
    await utimes(file, WHOLE_SECOND, WHOLE_SECOND);
    await emulateK3sStart(n, { cacheFix: true });
    await n.ctr(['images', 'rm', 'docker.io/lab/p2:1']);
    const r = await emulateK3sStart(n, { cacheFix: true });
    expect(r.skippedByCache).toContain(file);
    expect(r.repinned).toContain('docker.io/lab/p1:1');
    expect(r.repinned).not.toContain('docker.io/lab/p2:1');
    expect((await listImages(n)).some((i) => i.name === 'docker.io/lab/p2:1')).toBe(false); // not recreated

    await rm(file);
    await emulateK3sStart(n, { cacheFix: true });
    const cache = JSON.parse(await readFile(join(n.hostImagesDir, '.cache.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(cache)).toEqual(['/var/lib/rancher/k3s/agent/images/app.tar.zst']);
  });

  it('without .cache.json every start re-imports and re-pins', async () => {
    const n = lab.node('cache');
    await rm(join(n.hostImagesDir, '.cache.json'));
    const r = await emulateK3sStart(n);
    expect(r.skippedByCache).toEqual([]);
    expect(r.imported).toHaveLength(1);
    expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
  });

  it('the watcher imports a new archive once it settles, ignores .partial files, and deleting un-pins nothing', async () => {
    const n = lab.node('watch');
    const pre = join(n.hostImagesDir, 'pre.tar');
    await writeImageArchive(pre, { format: 'docker', images: [{ name: 'docker.io/lab/pre:1' }] });
    await emulateK3sStart(n);
    const w = startK3sWatcher(n);
    try {
      await sleep(400);
      const t0 = Date.now();
      await writeImageArchive(join(n.hostImagesDir, 'new', 'late.tar.gz'), {
        format: 'oci',
        compression: 'gzip',
        images: [{ name: 'docker.io/lab/late:1' }],
      });
      await writeImageArchive(join(n.hostImagesDir, 'late2.tar.partial'), { format: 'docker', images: [{ name: 'docker.io/lab/partial:1' }] });
      let labels: Record<string, string> | undefined;
      // A hang guard, not a speed check: a CI box running two suites at once took longer than 8 s.
      while (Date.now() - t0 < 30_000) {
        // the ref exists a moment before it is labelled (as on k3s): wait for the pin
        labels = await labelsOf(n, 'docker.io/lab/late:1').catch(() => undefined);
        if (labels?.[K3S]) break;
        await sleep(100);
      }
      expect(pinLabels(labels)).toEqual(PINS);
      for (let i = 0; i < 200 && w.imported.length === 0; i++) await sleep(50); // recorded after the digest ref
      expect(w.imported.map((r) => r.images)).toEqual([['docker.io/lab/late:1']]); // pre.tar was not re-imported
      await sleep(2500);
      expect((await listImages(n)).some((i) => i.name.includes('partial'))).toBe(false);

      await rm(pre);
      await sleep(800);
      expect(await pinLabelsOf(n, 'docker.io/lab/pre:1')).toEqual(PINS);
      expect(w.failed).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('rke2 uses its own images dir and label; extra registries get refs too', async () => {
    const n = lab.node('rke2');
    const dir = hostImagesDirOf(n, 'rke2');
    expect(dir).toBe(join(n.root, 'rancher', 'rke2', 'agent', 'images'));
    await mkdir(dir, { recursive: true });
    const { images } = await writeImageArchive(join(dir, 'r.tar'), { format: 'docker', images: [{ name: 'docker.io/rancher/thing:v1' }] });
    const r = await emulateK3sStart(n, { distro: 'rke2', extraRegistries: ['mirror.local:5000'] });
    expect(r.imported.map((x) => x.images)).toEqual([['docker.io/rancher/thing:v1']]);
    expect(r.imported[0]!.nodePath).toBe('/var/lib/rancher/rke2/agent/images/r.tar');
    const rke2Pins = { 'io.cattle.rke2.pinned': 'pinned', [CRI_PIN_LABEL]: 'pinned' };
    const d = images[0]!.digest;
    for (const ref of [
      'docker.io/rancher/thing:v1',
      `docker.io/rancher/thing@${d}`,
      'mirror.local:5000/rancher/thing:v1',
      `mirror.local:5000/rancher/thing@${d}`,
    ]) {
      expect(await pinLabelsOf(n, ref), ref).toEqual(rke2Pins);
    }
    const again = await emulateK3sStart(n, { distro: 'rke2' });
    expect(again.cleared).toHaveLength(4);
  });

  it('releases before k3s PR #12237 walk the top level only, case-insensitively, and have no cache', async () => {
    const n = lab.node('walk');
    const d = n.hostImagesDir;
    await writeImageArchive(join(d, 'UP.TAR.GZ'), { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/lab/up:1' }] });
    await writeImageArchive(join(d, 'low.tar'), { format: 'docker', images: [{ name: 'docker.io/lab/low:1' }] });
    await writeImageArchive(join(d, 'sub', 'deep.tar'), { format: 'docker', images: [{ name: 'docker.io/lab/deep:1' }] });
    await writeFile(join(d, '.cache.json'), '');
    const old = await emulateK3sStart(n, { walk: 'top-level-case-insensitive' });
    expect(old.imported.map((r) => r.archive).sort()).toEqual([join(d, 'UP.TAR.GZ'), join(d, 'low.tar')]);
    expect(await readFile(join(d, '.cache.json'), 'utf8')).toBe(''); // the release has no cache
    expect((await listImages(n)).map((i) => i.name)).not.toContain('docker.io/lab/deep:1');

    const modern = await emulateK3sStart(n);
    expect(modern.imported.map((r) => r.archive).sort()).toEqual([join(d, 'low.tar'), join(d, 'sub', 'deep.tar')]);
    expect(Object.keys(JSON.parse(await readFile(join(d, '.cache.json'), 'utf8')))).toEqual([
      '/var/lib/rancher/k3s/agent/images/low.tar',
      '/var/lib/rancher/k3s/agent/images/sub/deep.tar',
    ]);
  });

  it('a .txt list re-pins every tag of the present images it names at every start, without the archive', async () => {
    const n = lab.node('list');
    const d = n.hostImagesDir;
    const { images } = await writeImageArchive(join(d, 'bb.tar'), { format: 'docker', images: [{ name: 'docker.io/library/busybox:latest' }] });
    await emulateK3sStart(n);
    await n.ctr(['images', 'tag', 'docker.io/library/busybox:latest', 'registry.local/mirror/busybox:1.36']);
    await rm(join(d, 'bb.tar'));
    await writeFile(join(d, 'busybox.txt'), '# the site needs busybox\nbusybox\n\n');
    const r = await emulateK3sStart(n);
    expect(r.failed).toEqual([]);
    expect(r.imported).toEqual([
      {
        archive: join(d, 'busybox.txt'),
        nodePath: '/var/lib/rancher/k3s/agent/images/busybox.txt',
        images: ['docker.io/library/busybox:latest', 'registry.local/mirror/busybox:1.36'],
      },
    ]);
    for (const ref of ['docker.io/library/busybox:latest', 'registry.local/mirror/busybox:1.36', `docker.io/library/busybox@${images[0]!.digest}`]) {
      expect(await pinLabelsOf(n, ref), ref).toEqual(PINS);
    }

    // a list that also names an absent image pins nothing at all
    await writeFile(join(d, 'busybox.txt'), 'busybox\nregistry.local/absent:1\n');
    const failed = await emulateK3sStart(n);
    expect(failed.failed.map((f) => f.archive)).toEqual([join(d, 'busybox.txt')]);
    expect(await pinLabelsOf(n, 'docker.io/library/busybox:latest')).toEqual({});

    // with the cache on the list is cached too: re-pinned from its recorded names with the fix, lost without
    await writeFile(join(d, 'busybox.txt'), 'docker.io/library/busybox:latest\n');
    await utimes(join(d, 'busybox.txt'), WHOLE_SECOND, WHOLE_SECOND);
    await writeFile(join(d, '.cache.json'), '');
    await emulateK3sStart(n, { cacheFix: true });
    const cache = JSON.parse(await readFile(join(d, '.cache.json'), 'utf8')) as Record<string, { images?: string[] }>;
    expect(cache['/var/lib/rancher/k3s/agent/images/busybox.txt']?.images).toEqual(['docker.io/library/busybox:latest', 'registry.local/mirror/busybox:1.36']);
    const fixed = await emulateK3sStart(n, { cacheFix: true });
    expect(fixed.skippedByCache).toEqual([join(d, 'busybox.txt')]);
    expect(await pinLabelsOf(n, 'docker.io/library/busybox:latest')).toEqual(PINS);
    await emulateK3sStart(n, { cacheFix: false }); // a release without the fix ignores the names
    expect(await pinLabelsOf(n, 'docker.io/library/busybox:latest')).toEqual({});
  });
});
