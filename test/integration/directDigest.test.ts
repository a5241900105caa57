// Direct delivery gives a docker-save archive's image the manifest containerd's own importer
// writes, so an image has one identity whichever way it arrived. Checked against the real thing:
// `ctr images import --local` (k3s's path: the client-side importer) of the same archive on a lab
// node, for gzip, uncompressed and zstd layers; the image's target digest and the manifest bytes
// in the node's content store must be the ones spoolBundle synthesised. Runs on every containerd
// line of the version matrix.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../lab/fixtures';
import { listImages } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import type { LabNodeHandle } from '../../lab/node';
import { runBuffer } from '../../lab/exec';
import { packTar, prng } from '../../lab/tar';
import type { BundleManifest } from '../../src/core/usecases/direct/bundle';
import { spoolBundle } from '../../src/core/usecases/direct/spool';

let lab: Lab;
let node: LabNodeHandle;
let work: string;

const sha = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  lab = await startLab({ nodes: ['dd1'] });
  node = lab.node('dd1');
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-dd-'));
});

afterAll(async () => {
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A docker-save archive (as `docker save` lays it out) whose one layer is stored as `layer`. */
async function dockerSave(name: string, tag: string, layer: Buffer): Promise<string> {
  const config = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['/x'] }, rootfs: { type: 'layers', diff_ids: [] }, history: [{ created_by: name }] }),
  );
  const cfgName = `${sha(config).slice(7)}.json`;
  const tar = await packTar(
    [
      { name: cfgName, data: config },
      { name: `${name}/layer.tar`, data: layer },
      { name: 'manifest.json', data: JSON.stringify([{ Config: cfgName, RepoTags: [tag], Layers: [`${name}/layer.tar`] }]) },
    ],
    { parentDirs: true },
  );
  const file = path.join(work, `${name}.tar`);
  writeFileSync(file, tar);
  return file;
}

/** Imports `file` as k3s does (client-side importer: --local on 2.x) and returns the image's target digest. */
async function ctrImport(file: string, name: string): Promise<string> {
  const local = node.containerdLine === '2' ? ['--local'] : [];
  await node.ctr(['images', 'import', ...local, '--all-platforms', '--no-unpack', file]);
  const img = (await listImages(node, [`name==${JSON.stringify(name)}`]))[0];
  expect(img, `${name} imported`).toBeDefined();
  return img!.digest;
}

async function expectSameManifest(file: string, name: string): Promise<void> {
  const bundle = await spoolBundle(file, { dir: path.join(work, 'spool') });
  try {
    const img = bundle.images.find((i) => i.names.includes(name));
    expect(img, `${name} in the bundle`).toBeDefined();
    const target = img!.target as BundleManifest;
    const onNode = await ctrImport(file, name);
    expect(onNode).toBe(target.manifest.digest);
    // the bytes too: what the node's content store holds under that digest is our file
    const stored = await node.ctr(['content', 'get', onNode]);
    expect(stored).toBe((await readFile(bundle.files.get(target.manifest.digest)!)).toString());
  } finally {
    await bundle.dispose();
  }
}

describe(`docker-save manifests match containerd's importer`, () => {
  it('a gzip layer (the lab fixture, as docker save writes it)', async () => {
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'registry.local/dd/gzip:1', layerBytes: 4096 }] });
    const file = path.join(work, 'gzip.tar');
    writeFileSync(file, tar);
    await expectSameManifest(file, 'registry.local/dd/gzip:1');
  });

  it('an uncompressed layer', async () => {
    const layer = await packTar([{ name: 'hf/plain.bin', data: prng('plain', 5000) }]);
    await expectSameManifest(await dockerSave('plain', 'registry.local/dd/plain:1', layer), 'registry.local/dd/plain:1');
  });

  it('a gzip layer of a familiar tag (normalised as containerd names it)', async () => {
    const layer = gzipSync(await packTar([{ name: 'hf/fam.bin', data: prng('fam', 3000) }]));
    await expectSameManifest(await dockerSave('fam', 'ddfamiliar:2', layer), 'docker.io/library/ddfamiliar:2');
  });

  it('a zstd layer (containerd tags it tar.gzip: its importer knows no other compressed type)', async () => {
    const layer = await runBuffer(['zstd', '-q', '-c', '-'], { input: await packTar([{ name: 'hf/z.bin', data: prng('zstd', 3000) }]) });
    await expectSameManifest(await dockerSave('zst', 'registry.local/dd/zstd:1', layer), 'registry.local/dd/zstd:1');
  });
});
