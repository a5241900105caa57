import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
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
    lab = await startLab({ nodes: ['imp', 'clr', 'cache', 'fix', 'watch', 'rke2'] });
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
    expect(report.failed).toEqual([]);
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

  it('the .cache.json trap: unchanged archives are skipped and lose their pins unless cacheFix', async () => {
    for (const [nodeName, cacheFix] of [['cache', false], ['fix', true]] as const) {
      const n = lab.node(nodeName);
      const file = join(n.hostImagesDir, 'app.tar.zst');
      const { images } = await writeImageArchive(file, { format: 'docker', compression: 'zstd', images: [{ name: 'docker.io/lab/app:1' }] });
      const dref = `docker.io/lab/app@${images[0]!.digest}`;
      await writeFile(join(n.hostImagesDir, '.cache.json'), ''); // empty file enables the cache

      const first = await emulateK3sStart(n, { cacheFix });
      expect(first.imported.map((r) => r.archive)).toEqual([file]);
      const cache = JSON.parse(await readFile(join(n.hostImagesDir, '.cache.json'), 'utf8'));
      expect(cache['/var/lib/rancher/k3s/agent/images/app.tar.zst']).toMatchObject({ images: ['docker.io/lab/app:1'] });
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);

      const second = await emulateK3sStart(n, { cacheFix });
      expect(second.imported).toEqual([]);
      expect(second.skippedByCache).toEqual([file]);
      expect(second.cleared).toContain('docker.io/lab/app:1');
      if (cacheFix) {
        expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
        expect(await pinLabelsOf(n, dref)).toEqual(PINS);
        expect(second.repinned).toContain('docker.io/lab/app:1');
      } else {
        // pins lost although the archive is still there
        expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual({});
        expect(await pinLabelsOf(n, dref)).toEqual({});
      }

      // touching the archive (new mtime) makes it import again
      const later = new Date(Date.now() + 60_000);
      await utimes(file, later, later);
      const third = await emulateK3sStart(n, { cacheFix });
      expect(third.imported.map((r) => r.archive)).toEqual([file]);
      expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
    }
  });

  it('without .cache.json every start re-imports and re-pins', async () => {
    const n = lab.node('cache');
    await rm(join(n.hostImagesDir, '.cache.json'));
    const r = await emulateK3sStart(n);
    expect(r.skippedByCache).toEqual([]);
    expect(r.imported).toHaveLength(1);
    expect(await pinLabelsOf(n, 'docker.io/lab/app:1')).toEqual(PINS);
  });

  it('the watcher imports a new archive within ~5 s, ignores .partial files, and deleting un-pins nothing', async () => {
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
      while (Date.now() - t0 < 8000) {
        // the ref exists a moment before it is labelled (as on k3s): wait for the pin
        labels = await labelsOf(n, 'docker.io/lab/late:1').catch(() => undefined);
        if (labels?.[K3S]) break;
        await sleep(100);
      }
      const took = Date.now() - t0;
      expect(pinLabels(labels)).toEqual(PINS);
      expect(took).toBeGreaterThanOrEqual(1500); // waits for the file to settle, like k3s
      expect(took).toBeLessThan(5000);
      for (let i = 0; i < 40 && w.imported.length === 0; i++) await sleep(50); // recorded after the digest ref
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
});
