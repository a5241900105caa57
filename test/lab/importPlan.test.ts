// The lab's reading of k3s's import naming on crafted archives: the cases the real-tool corpus
// (test/integration/corpus.test.ts) cannot make — a digest-only ref name, a partial archive the
// lab cannot import as k3s would — and the retag rule k3s applies after labelling.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../lab/fixtures.ts';
import { parseNamedTagged, readImportPlan } from '../../lab/importPlan.ts';
import { retagErrors } from '../../lab/k3s.ts';
import tar from 'tar-stream';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp('/tmp/hf-plan-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Rewrites an archive's members (drop one, or change index.json). */
async function repack(src: Buffer, edit: (name: string, data: Buffer) => Buffer | null, extra: { name: string; data: Buffer }[] = []): Promise<Buffer> {
  const entries: { name: string; data: Buffer }[] = [];
  const extract = tar.extract();
  extract.on('entry', (h, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (h.type === 'file') {
        const data = edit(h.name, Buffer.concat(chunks));
        if (data) entries.push({ name: h.name, data });
      }
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(src);
  await done;
  const pack = tar.pack();
  const out: Buffer[] = [];
  pack.on('data', (c: unknown) => out.push(c as Buffer));
  const ended = new Promise<void>((r) => pack.on('end', r));
  for (const e of [...entries, ...extra]) pack.entry({ name: e.name }, e.data);
  pack.finalize();
  await ended;
  return Buffer.concat(out);
}

async function write(name: string, data: Buffer): Promise<string> {
  const f = join(dir, name);
  await writeFile(f, data);
  return f;
}

describe('readImportPlan', () => {
  it('names every index.json entry as client.Import without a translator does', async () => {
    const { tar: t } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/app:1' }] });
    const f = await write(
      'names.tar',
      await repack(t, (name, data) => {
        if (name !== 'index.json') return data;
        const idx = JSON.parse(data.toString()) as { manifests: Record<string, unknown>[] };
        const m = idx.manifests[0]!;
        const ann = (a: Record<string, string>) => ({ ...m, annotations: a });
        idx.manifests = [
          ann({ 'io.containerd.image.name': 'docker.io/library/app:1', 'org.opencontainers.image.ref.name': '1' }),
          ann({ 'org.opencontainers.image.ref.name': 'registry.local/app:2' }),
          ann({ 'org.opencontainers.image.ref.name': '3.0' }),
          ann({ 'org.opencontainers.image.ref.name': 'app' }),
          ann({}),
        ];
        return Buffer.from(JSON.stringify(idx));
      }),
    );
    const plan = await readImportPlan(f);
    expect(plan.entries.map((e) => [e.k3sName, e.ctrRenames])).toEqual([
      ['docker.io/library/app:1', undefined],
      ['registry.local/app:2', undefined],
      ['3.0', '3.0'],
      ['app', 'app'],
      [null, undefined],
    ]);
    expect(plan.names).toEqual(['docker.io/library/app:1', 'registry.local/app:2', '3.0', 'app']);
    expect(plan.platforms).toEqual({ all: true });
  });

  it('a missing manifest: the one present platform is imported; with two present the lab refuses loudly', async () => {
    const { tar: t, images } = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/x/m:1', platforms: ['linux/amd64', 'linux/arm64', 'linux/s390x'] }] });
    const arm = images[0]!.platforms.find((p) => p.platform === 'linux/arm64')!.manifestDigest;
    const s390 = images[0]!.platforms.find((p) => p.platform === 'linux/s390x')!.manifestDigest;
    const drop = (gone: string[]) => (name: string, data: Buffer) => (gone.some((d) => name === `blobs/sha256/${d.slice(7)}`) ? null : data);
    const partial = await write('partial.tar', await repack(t, drop([arm, s390])));
    expect((await readImportPlan(partial)).platforms).toEqual({ only: 'linux/amd64' });
    const two = await write('two.tar', await repack(t, drop([arm])));
    await expect(readImportPlan(two)).rejects.toThrow(/the lab cannot import this archive as k3s would/);
  });

  it('oci-layout wins over a manifest.json next to it (ctr export writes both)', async () => {
    const { tar: t } = await buildImageArchive({ format: 'oci', images: [{ name: 'localhost/a:1' }] });
    const manifestJson = Buffer.from(JSON.stringify([{ Config: 'x.json', RepoTags: ['docker.io/library/other:9'], Layers: [] }]));
    const both = await write('both.tar', await repack(t, (_n, d) => d, [{ name: 'manifest.json', data: manifestJson }]));
    const plan = await readImportPlan(both);
    expect([plan.format, plan.names]).toEqual(['oci', ['localhost/a:1']]);
  });
});

describe('parseNamedTagged (k3s retagImages)', () => {
  it('needs a name with a tag', () => {
    expect(parseNamedTagged('localhost/hf/app:1.0')).toEqual({ repository: 'localhost/hf/app', tag: '1.0' });
    expect(parseNamedTagged('hf/app:2')).toEqual({ repository: 'docker.io/hf/app', tag: '2' });
    expect(parseNamedTagged('app:3')).toEqual({ repository: 'docker.io/library/app', tag: '3' });
    expect(parseNamedTagged('1.0')).toEqual({ error: "can't cast reference.repository to NamedTagged" });
    expect(parseNamedTagged('app@sha256:' + 'a'.repeat(64))).toEqual({ error: "can't cast reference.canonicalReference to NamedTagged" });
    expect(parseNamedTagged('Bad/Name:1')).toEqual({ error: 'invalid reference format' });
    expect(retagErrors(['localhost/a:1', '2.0'])).toBe("failed to retag images: failed to parse tag for image 2.0: can't cast reference.repository to NamedTagged");
    expect(retagErrors(['localhost/a:1'])).toBe('');
  });
});
