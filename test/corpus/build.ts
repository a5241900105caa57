// The corpus: image archives made by the real tools technicians use, built at test time (no
// binary is ever committed) and cached in one directory per test run. Every format k3s meets
// (docker-archive, oci-archive, multi-platform indexes, zstd layers, tag-only and missing ref
// names, an umoci layout, `ctr images export` with and without --all-platforms) appears, and
// the table below covers docker-archive, oci-archive and the multi-platform index in every
// compression k3s imports; the other formats take one compression each, so that every
// compression appears with them too.
//
// buildCorpus(dir) makes the tool-built archives (23 s on two idle cores, 32 s under load; reused when
// `dir` already holds a corpus of this builder version, e.g. HOLDFAST_CORPUS_DIR). The ctr
// exports need a running containerd, so addCtrExports(corpus, node) makes them from a lab node.
//
// Needs the Debian packages podman, buildah, skopeo, umoci (and tar, gzip, zstd, lz4, bzip2).
// Test tooling only.
import { access, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LabNodeHandle } from '../../lab/index.ts';
import {
  buildahManifest,
  buildahOci,
  buildahZstdLayers,
  ctrExportSource,
  podmanSaveDocker,
  podmanSaveMulti,
  podmanSaveOci,
  skopeoAll,
  skopeoDocker,
  skopeoOci,
  skopeoTagOnly,
  skopeoUntaggedDocker,
  skopeoUntaggedOci,
  skopeoZstdLayers,
  umociLayout,
  type CorpusFormat,
  type Recipe,
  type RecipeResult,
} from './recipes.ts';
import { compressTar, ImageTools, runTool, SUFFIX, type Compression } from './tools.ts';

export type { CorpusFormat, CorpusImage } from './recipes.ts';
export type { Compression } from './tools.ts';

/** Bump when a recipe changes, so a cached corpus is rebuilt. */
const BUILDER_VERSION = 1;

export interface CorpusArchive extends Omit<RecipeResult, 'tar'> {
  id: string;
  /** Absolute path of the (compressed) archive. */
  file: string;
  format: CorpusFormat;
  compression: Compression;
}

export interface Corpus {
  dir: string;
  archives: CorpusArchive[];
  /** The multi-platform archives addCtrExports imports into a node and exports again. */
  ctrSources: CorpusArchive[];
  /** podman/buildah/skopeo/umoci --version. */
  versions: Record<string, string>;
  /** How long building took (0 when reused). */
  buildMs: number;
  reused: boolean;
}

interface Entry {
  id: string;
  format: CorpusFormat;
  compression: Compression;
  recipe: Recipe;
}

const TABLE: Entry[] = [
  { id: 'podman-docker', format: 'docker-archive', compression: 'none', recipe: podmanSaveDocker },
  { id: 'skopeo-docker', format: 'docker-archive', compression: 'gzip', recipe: skopeoDocker },
  { id: 'podman-docker-m', format: 'docker-archive', compression: 'zstd', recipe: podmanSaveMulti },
  { id: 'skopeo-docker-lz4', format: 'docker-archive', compression: 'lz4', recipe: skopeoDocker },
  { id: 'podman-docker-bz2', format: 'docker-archive', compression: 'bzip2', recipe: podmanSaveDocker },
  { id: 'skopeo-oci', format: 'oci-archive', compression: 'none', recipe: skopeoOci },
  { id: 'podman-oci', format: 'oci-archive', compression: 'gzip', recipe: podmanSaveOci },
  { id: 'buildah-oci', format: 'oci-archive', compression: 'zstd', recipe: buildahOci },
  { id: 'skopeo-oci-lz4', format: 'oci-archive', compression: 'lz4', recipe: skopeoOci },
  { id: 'podman-oci-bz2', format: 'oci-archive', compression: 'bzip2', recipe: podmanSaveOci },
  { id: 'buildah-manifest', format: 'oci-index', compression: 'none', recipe: buildahManifest },
  { id: 'skopeo-all', format: 'oci-index', compression: 'gzip', recipe: skopeoAll },
  { id: 'buildah-manifest-zst', format: 'oci-index', compression: 'zstd', recipe: buildahManifest },
  { id: 'skopeo-all-lz4', format: 'oci-index', compression: 'lz4', recipe: skopeoAll },
  { id: 'buildah-manifest-bz2', format: 'oci-index', compression: 'bzip2', recipe: buildahManifest },
  { id: 'skopeo-zstd-layers', format: 'oci-zstd-layers', compression: 'gzip', recipe: skopeoZstdLayers },
  { id: 'buildah-zstd-layers', format: 'oci-zstd-layers', compression: 'none', recipe: buildahZstdLayers },
  { id: 'skopeo-tag-only', format: 'oci-tag-only', compression: 'bzip2', recipe: skopeoTagOnly },
  { id: 'umoci', format: 'umoci-layout', compression: 'lz4', recipe: umociLayout },
  { id: 'skopeo-untagged-docker', format: 'untagged', compression: 'zstd', recipe: skopeoUntaggedDocker },
  { id: 'skopeo-untagged-oci', format: 'untagged', compression: 'none', recipe: skopeoUntaggedOci },
];

/** Made from a lab node by addCtrExports. */
const CTR_EXPORTS: { id: string; format: CorpusFormat; compression: Compression; allPlatforms: boolean }[] = [
  { id: 'ctr-export-all', format: 'ctr-export', compression: 'bzip2', allPlatforms: true },
  { id: 'ctr-export-partial', format: 'ctr-export-partial', compression: 'gzip', allPlatforms: false },
];

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

async function reuse(dir: string): Promise<Corpus | null> {
  try {
    const c = JSON.parse(await readFile(join(dir, 'corpus.json'), 'utf8')) as Corpus & { builder?: number };
    if (c.builder !== BUILDER_VERSION) return null;
    for (const a of [...c.archives, ...c.ctrSources]) if (!(await exists(a.file))) return null;
    return { ...c, buildMs: 0, reused: true };
  } catch {
    return null;
  }
}

async function make(tools: ImageTools, dir: string, e: Entry): Promise<CorpusArchive> {
  const work = join(dir, 'work', e.id);
  await mkdir(work, { recursive: true });
  const made = await e.recipe({ tools, work }, e.id);
  const file = join(dir, 'archives', `${e.id}${SUFFIX[e.compression]}`);
  if (e.compression === 'none') await copyFile(made.tar, file);
  else await compressTar(made.tar, e.compression, file);
  const { tar: _tar, ...rest } = made;
  return { id: e.id, file, format: e.format, compression: e.compression, ...rest };
}

/** Builds the tool-made part of the corpus into `dir` (or reuses what a previous run left there). */
export async function buildCorpus(dir: string): Promise<Corpus> {
  const cached = await reuse(dir);
  if (cached) return cached;
  const started = Date.now();
  const tools = new ImageTools(dir);
  await tools.init();
  const versions = await tools.versions().catch((e: unknown) => {
    throw new Error(
      `the corpus is made with podman, buildah, skopeo and umoci (apt-get install --no-install-recommends podman buildah skopeo umoci; .ci/run installs them): ${e instanceof Error ? e.message : String(e)}`,
    );
  });
  await mkdir(join(dir, 'archives'), { recursive: true });
  const archives: CorpusArchive[] = [];
  // one at a time: the tools share one storage, whose locking is theirs, and the machine has two cores
  for (const e of TABLE) archives.push(await make(tools, dir, e));
  const ctrSources: CorpusArchive[] = [];
  for (const x of CTR_EXPORTS) {
    const work = join(dir, 'work', x.id);
    await mkdir(work, { recursive: true });
    const { tar, ...rest } = await ctrExportSource({ tools, work }, x.id);
    ctrSources.push({ id: x.id, file: tar, format: 'oci-index', compression: 'none', ...rest });
  }
  const corpus: Corpus = { dir, archives, ctrSources, versions, buildMs: Date.now() - started, reused: false };
  await writeFile(join(dir, 'corpus.json'), JSON.stringify({ ...corpus, builder: BUILDER_VERSION }, null, 2));
  return corpus;
}

/** A ctr export that tar reads to its end, with the files every ctr export has: else fail here, not later as a refused archive. */
async function assertWholeExport(tarFile: string, id: string): Promise<void> {
  const members = (await runTool(['tar', '-tf', tarFile])).split('\n');
  const missing = ['index.json', 'oci-layout', 'manifest.json'].filter((m) => !members.includes(m));
  if (missing.length) throw new Error(`ctr images export for ${id} is short: no ${missing.join(', ')} in ${tarFile}`);
}

/**
 * `ctr images export` from a lab node, as a technician exports from a node that has the image:
 * each source is imported (all platforms), then exported with --all-platforms (complete) or
 * without (only the node's platform: the index still lists the other platforms, whose blobs are
 * missing), then compressed. Returns the new corpus entries.
 */
export async function addCtrExports(corpus: Corpus, node: LabNodeHandle): Promise<CorpusArchive[]> {
  const out: CorpusArchive[] = [];
  const local = node.containerdLine === '2' ? ['--local'] : [];
  // ctr from 1.7 on exports through the transfer service unless told --local, and that export
  // sometimes writes a short tar and still exits 0 (a containerd 2.1.9 lab node under load: 3
  // short files in 70 exports, one of them a valid tar missing members; --local: 40 of 40
  // whole), which once made a corpus archive "truncated". So --local, and the result checked.
  const exportLocal = node.containerdLine === '1.6' ? [] : ['--local'];
  for (const x of CTR_EXPORTS) {
    const src = corpus.ctrSources.find((s) => s.id === x.id)!;
    const name = src.images[0]!.name!;
    const workTar = join(corpus.dir, 'work', x.id, `${x.id}-exported.tar`);
    await node.ctr(['images', 'import', ...local, '--all-platforms', '--no-unpack', src.file]);
    await node.ctr(['images', 'export', ...exportLocal, ...(x.allPlatforms ? ['--all-platforms'] : []), workTar, name]);
    await assertWholeExport(workTar, x.id);
    const file = join(corpus.dir, 'archives', `${x.id}${SUFFIX[x.compression]}`);
    if (x.compression === 'none') await copyFile(workTar, file);
    else await compressTar(workTar, x.compression, file);
    out.push({
      id: x.id,
      file,
      format: x.format,
      compression: x.compression,
      tool: `ctr images export${exportLocal.length ? ' --local' : ''}${x.allPlatforms ? ' --all-platforms' : ''} (containerd ${node.containerdLine})`,
      images: [{ ...src.images[0]!, platforms: x.allPlatforms ? src.images[0]!.platforms : ['linux/amd64'] }],
      ...(x.allPlatforms ? {} : { missingPlatforms: ['linux/arm64'] }),
    });
  }
  return out;
}
