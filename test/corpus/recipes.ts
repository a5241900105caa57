// How each corpus archive is made, with the tools a technician uses, from base images made
// locally (no registry is reachable): `buildah from scratch` + `buildah copy` + `buildah commit`,
// `podman import` of a small rootfs tar, or `umoci init/new/insert`. Every archive gets images of
// its own (their content names the archive), so archives never share an image on a lab node.
//
// What each recipe declares it brings (`images`) is written down from the tools' own output
// (image ids from `--iidfile` / `podman import`) and the naming rules of k3s's importer
// (containerd client.Import without a ref translator), never from the code under test.
// Test tooling only.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageTools } from './tools.ts';

/** What the archive is, as k3s sees it (the corpus table's format column). */
export type CorpusFormat =
  | 'docker-archive'
  | 'oci-archive'
  | 'oci-index'
  | 'oci-zstd-layers'
  | 'oci-tag-only'
  | 'umoci-layout'
  | 'untagged'
  | 'ctr-export'
  | 'ctr-export-partial';

export interface CorpusImage {
  /** The name k3s stores for it; null when it stores none. */
  name: string | null;
  /** The image id (config digest) kubelet sees for linux/amd64, the lab's platform. */
  imageId: string;
  /** Every platform the archive holds complete. */
  platforms: string[];
}

export interface RecipeResult {
  /** The uncompressed tar the tool wrote. */
  tar: string;
  /** The command that made it, as the corpus table shows it. */
  tool: string;
  images: CorpusImage[];
  /** Platforms whose manifests the archive lists but does not hold (a partial export). */
  missingPlatforms?: string[];
  /**
   * The archive's names are not name:tag (a bare tag): k3s pins them, then its retagging fails
   * and it logs the import as failed.
   */
  k3sRetagFails?: boolean;
}

export interface RecipeContext {
  tools: ImageTools;
  /** Scratch dir for this recipe. */
  work: string;
}

/** A local base image whose single file names it: `buildah from scratch` + copy + commit. */
export async function buildahImage(ctx: RecipeContext, ref: string, arch: 'amd64' | 'arm64' = 'amd64'): Promise<string> {
  const { tools, work } = ctx;
  const file = join(work, `content-${arch}.txt`);
  await writeFile(file, `holdfast corpus ${ref} linux/${arch}\n`);
  const c = (await tools.buildah(['from', '--arch', arch, '--os', 'linux', 'scratch'])).trim();
  await tools.buildah(['copy', '--quiet', c, file, '/hf/content.txt']);
  await tools.buildah(['config', '--cmd', '/hf/content.txt', '--label', `io.holdfast.corpus=${ref}`, c]);
  const iid = join(work, `iid-${arch}`);
  await tools.buildah(['commit', '--quiet', '--iidfile', iid, c, ref]);
  await tools.buildah(['rm', c]);
  return (await readFile(iid, 'utf8')).trim();
}

/** A local base image from a rootfs tarball: `podman import`. Returns its image id. */
async function podmanImport(ctx: RecipeContext, ref: string): Promise<string> {
  const rootfs = join(ctx.work, 'rootfs');
  await mkdir(join(rootfs, 'hf'), { recursive: true });
  await writeFile(join(rootfs, 'hf', 'content.txt'), `holdfast corpus ${ref} (podman import)\n`);
  const tarball = join(ctx.work, 'rootfs.tar');
  await ctx.tools.tar(['-C', rootfs, '-cf', tarball, '.']);
  const id = (await ctx.tools.podman(['import', '--quiet', tarball, ref])).trim();
  return id.startsWith('sha256:') ? id : `sha256:${id}`;
}

/** A manifest list of an amd64 and an arm64 image, in buildah's storage. */
async function manifestList(ctx: RecipeContext, ref: string): Promise<{ amd64: string; arm64: string }> {
  const repo = ref.slice(0, ref.lastIndexOf(':'));
  const amd64 = await buildahImage(ctx, `${repo}-amd64:1.0`, 'amd64');
  const arm64 = await buildahImage(ctx, `${repo}-arm64:1.0`, 'arm64');
  await ctx.tools.buildah(['manifest', 'create', ref]);
  await ctx.tools.buildah(['manifest', 'add', ref, ctx.tools.storageRef(`${repo}-amd64:1.0`)]);
  await ctx.tools.buildah(['manifest', 'add', ref, ctx.tools.storageRef(`${repo}-arm64:1.0`)]);
  return { amd64, arm64 };
}

const BOTH = ['linux/amd64', 'linux/arm64'];
const AMD64 = ['linux/amd64'];
const out = (ctx: RecipeContext, id: string): string => join(ctx.work, `${id}.tar`);
const signaturePolicy = (ctx: RecipeContext): string[] => ['--signature-policy', ctx.tools.policy];

export type Recipe = (ctx: RecipeContext, id: string) => Promise<RecipeResult>;

/** podman save --format docker-archive of a podman-imported image. */
export const podmanSaveDocker: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await podmanImport(ctx, ref);
  await ctx.tools.podman(['save', '--quiet', '--format', 'docker-archive', '-o', out(ctx, id), ref]);
  return { tar: out(ctx, id), tool: 'podman import + podman save --format docker-archive', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** podman save -m: two images in one docker-archive. */
export const podmanSaveMulti: Recipe = async (ctx, id) => {
  const a = `localhost/hf/${id}-a:1.0`;
  const b = `localhost/hf/${id}-b:2.0`;
  const ia = await buildahImage(ctx, a);
  const ib = await podmanImport(ctx, b);
  await ctx.tools.podman(['save', '--quiet', '-m', '--format', 'docker-archive', '-o', out(ctx, id), a, b]);
  return {
    tar: out(ctx, id),
    tool: 'podman save -m --format docker-archive (2 images)',
    images: [
      { name: a, imageId: ia, platforms: AMD64 },
      { name: b, imageId: ib, platforms: AMD64 },
    ],
  };
};

/** podman save --format oci-archive: the ref name is the full name, no io.containerd.image.name. */
export const podmanSaveOci: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, ref);
  await ctx.tools.podman(['save', '--quiet', '--format', 'oci-archive', '-o', out(ctx, id), ref]);
  return { tar: out(ctx, id), tool: 'podman save --format oci-archive', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** skopeo copy to docker-archive under a familiar name (hf/x:1.0 → docker.io/hf/x:1.0). */
export const skopeoDocker: Recipe = async (ctx, id) => {
  const local = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, local);
  await ctx.tools.skopeo(['copy', '--quiet', ctx.tools.storageRef(local), `docker-archive:${out(ctx, id)}:hf/${id}:1.0`]);
  return { tar: out(ctx, id), tool: `skopeo copy docker-archive:…:hf/${id}:1.0`, images: [{ name: `docker.io/hf/${id}:1.0`, imageId, platforms: AMD64 }] };
};

/** skopeo copy to oci-archive with a full reference as the ref name. */
export const skopeoOci: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, ref);
  await ctx.tools.skopeo(['copy', '--quiet', ctx.tools.storageRef(ref), `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'skopeo copy oci-archive:…:<full name>', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** skopeo copy --dest-compress-format zstd: zstd-compressed layers in an OCI archive. */
export const skopeoZstdLayers: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, ref);
  await ctx.tools.skopeo(['copy', '--quiet', '--dest-compress-format', 'zstd', ctx.tools.storageRef(ref), `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'skopeo copy --dest-compress-format zstd oci-archive:', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** buildah push --compression-format zstd to oci-archive. */
export const buildahZstdLayers: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, ref);
  await ctx.tools.buildah(['push', '--quiet', ...signaturePolicy(ctx), '--compression-format', 'zstd', ref, `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'buildah push --compression-format zstd oci-archive:', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** buildah push to oci-archive (gzip layers). */
export const buildahOci: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const imageId = await buildahImage(ctx, ref);
  await ctx.tools.buildah(['push', '--quiet', ...signaturePolicy(ctx), ref, `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'buildah push oci-archive:', images: [{ name: ref, imageId, platforms: AMD64 }] };
};

/** buildah manifest push --all: a multi-platform index (amd64 + arm64) in an OCI archive. */
export const buildahManifest: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const ids = await manifestList(ctx, ref);
  await ctx.tools.buildah(['manifest', 'push', '--quiet', ...signaturePolicy(ctx), '--all', ref, `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'buildah manifest push --all oci-archive:', images: [{ name: ref, imageId: ids.amd64, platforms: BOTH }] };
};

/** skopeo copy --all of a multi-platform OCI archive (buildah's) into another OCI archive. */
export const skopeoAll: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const ids = await manifestList(ctx, ref);
  const src = join(ctx.work, 'list.tar');
  await ctx.tools.buildah(['manifest', 'push', '--quiet', ...signaturePolicy(ctx), '--all', ref, `oci-archive:${src}:${ref}`]);
  await ctx.tools.skopeo(['copy', '--quiet', '--all', `oci-archive:${src}:${ref}`, `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'skopeo copy --all oci-archive: → oci-archive:', images: [{ name: ref, imageId: ids.amd64, platforms: BOTH }] };
};

/** skopeo copy to `oci-archive:file.tar:1.0`: the ref name is only a tag, which k3s keeps as the name. */
export const skopeoTagOnly: Recipe = async (ctx, id) => {
  const imageId = await buildahImage(ctx, `localhost/hf/${id}:1.0`);
  await ctx.tools.skopeo(['copy', '--quiet', ctx.tools.storageRef(`localhost/hf/${id}:1.0`), `oci-archive:${out(ctx, id)}:1.0`]);
  return { tar: out(ctx, id), tool: 'skopeo copy oci-archive:file.tar:1.0', images: [{ name: '1.0', imageId, platforms: AMD64 }], k3sRetagFails: true };
};

/** skopeo copy to docker-archive without a reference: RepoTags is empty, k3s names nothing. */
export const skopeoUntaggedDocker: Recipe = async (ctx, id) => {
  const imageId = await buildahImage(ctx, `localhost/hf/${id}:1.0`);
  await ctx.tools.skopeo(['copy', '--quiet', ctx.tools.storageRef(`localhost/hf/${id}:1.0`), `docker-archive:${out(ctx, id)}`]);
  return { tar: out(ctx, id), tool: 'skopeo copy docker-archive:file.tar (no reference)', images: [{ name: null, imageId, platforms: AMD64 }] };
};

/** skopeo copy to oci-archive without a reference: the index entry has no annotations at all. */
export const skopeoUntaggedOci: Recipe = async (ctx, id) => {
  const imageId = await buildahImage(ctx, `localhost/hf/${id}:1.0`);
  await ctx.tools.skopeo(['copy', '--quiet', ctx.tools.storageRef(`localhost/hf/${id}:1.0`), `oci-archive:${out(ctx, id)}`]);
  return { tar: out(ctx, id), tool: 'skopeo copy oci-archive:file.tar (no reference)', images: [{ name: null, imageId, platforms: AMD64 }] };
};

/**
 * An umoci layout, tarred as a technician does (`tar -C layout -cf x.tar .`: members start with
 * `./`). umoci's ref name is the tag only (`2.0`).
 */
export const umociLayout: Recipe = async (ctx, id) => {
  const layout = join(ctx.work, 'layout');
  const file = join(ctx.work, 'content.txt');
  await writeFile(file, `holdfast corpus ${id} (umoci)\n`);
  await ctx.tools.umoci(['init', '--layout', layout]);
  await ctx.tools.umoci(['new', '--image', `${layout}:2.0`]);
  await ctx.tools.umoci(['insert', '--image', `${layout}:2.0`, file, '/hf/content.txt']);
  await ctx.tools.tar(['-C', layout, '-cf', out(ctx, id), '.']);
  // umoci prints no image id: it is the config its manifest names
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(await readFile(join(layout, 'blobs', 'sha256', index.manifests[0]!.digest.slice(7)), 'utf8')) as { config: { digest: string } };
  return {
    tar: out(ctx, id),
    tool: 'umoci init/new/insert + tar -C layout .',
    images: [{ name: '2.0', imageId: manifest.config.digest, platforms: AMD64 }],
    k3sRetagFails: true,
  };
};

/**
 * The multi-platform OCI archive a lab node imports before `ctr images export` (the source of
 * the ctr-export entries, not itself in the corpus table).
 */
export const ctrExportSource: Recipe = async (ctx, id) => {
  const ref = `localhost/hf/${id}:1.0`;
  const ids = await manifestList(ctx, ref);
  await ctx.tools.buildah(['manifest', 'push', '--quiet', ...signaturePolicy(ctx), '--all', ref, `oci-archive:${out(ctx, id)}:${ref}`]);
  return { tar: out(ctx, id), tool: 'buildah manifest push --all (ctr export source)', images: [{ name: ref, imageId: ids.amd64, platforms: BOTH }] };
};
