// The bundles people carry to air-gapped sites, shaped as their tools write them (issue #35):
// a Zarf package (`zarf package create`: a tar.zst with zarf.yaml and an OCI layout under
// images/, each entry named by org.opencontainers.image.base.name) and a single-file Hauler haul
// (`hauler store save`: a tar.zst holding an OCI layout at its root, entries annotated with
// hauler's kind and the image's name). Only the parts Holdfast reads are written.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { runBuffer } from './exec.ts';
import { layeredLayout, type LayeredImage, type LayeredImageSpec } from './layered.ts';
import { packTar } from './tar.ts';

const zstd = (data: Buffer): Promise<Buffer> => runBuffer(['zstd', '-q', '-c', '-'], { input: data });

async function write(file: string, entries: { name: string; data: Buffer | string }[]): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, await zstd(await packTar(entries.map((e) => ({ name: e.name, data: Buffer.from(e.data) })))));
}

/** A Zarf package of `images` (names as Zarf records them: the reference the package author wrote). */
export async function writeZarfPackage(file: string, images: LayeredImageSpec[]): Promise<LayeredImage[]> {
  const { entries, images: out } = await layeredLayout(images, (img) => ({ 'org.opencontainers.image.base.name': img.name }));
  await write(file, [
    { name: 'zarf.yaml', data: `kind: ZarfPackageConfig\nmetadata:\n  name: holdfast-lab\ncomponents:\n  - name: images\n    images:\n${images.map((i) => `      - ${i.name}\n`).join('')}` },
    ...entries.map((e) => ({ ...e, name: `images/${e.name}` })),
  ]);
  return out;
}

/** A single-chunk Hauler haul of `images`. */
export async function writeHaul(file: string, images: LayeredImageSpec[]): Promise<LayeredImage[]> {
  const { entries, images: out } = await layeredLayout(images, (img) => ({
    kind: 'dev.hauler/image',
    'io.containerd.image.name': img.name,
    'org.opencontainers.image.ref.name': img.name.replace(/^[^/]+\//, ''),
  }));
  await write(file, entries);
  return out;
}
