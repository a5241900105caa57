// The bundles people carry to air-gapped sites, shaped as their tools write them (issue #35):
// a Zarf package (`zarf package create`: a tar.zst with zarf.yaml and an OCI layout under
// images/, each entry named by org.opencontainers.image.base.name) and a single-file Hauler haul
// (`hauler store save`: a tar.zst holding an OCI layout at its root, entries annotated with
// hauler's kind and the image's name). Only the parts Holdfast reads are written. Signed ones
// (#48) are cut from the layout real cosign and oras made (lab/signing.ts), renamed as each tool
// names images and their signatures.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runBuffer } from './exec.ts';
import { layeredLayout, type LayeredImage, type LayeredImageSpec } from './layered.ts';
import type { SigningFixtures } from './signing.ts';
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

const REF_NAME = 'org.opencontainers.image.ref.name';
const BASE_NAME = 'org.opencontainers.image.base.name';
const CONTAINERD_NAME = 'io.containerd.image.name';
const LEGACY_TAG = /^sha256-([0-9a-f]{64})\.sig$/;

interface LayoutEntry {
  mediaType?: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** What an entry of the signing lab's layout is to `repo`: the image, its `.sig` tag or a referrer. */
type Role = { role: 'image' | 'sig' | 'referrer'; repo: string; entry: LayoutEntry };

/** The entries of the signing layout that belong to `repos` (images named by repo, as oras copied them). */
async function signedRoles(fx: SigningFixtures, repos: readonly string[]): Promise<Role[]> {
  const blob = async (digest: string): Promise<Buffer> => readFile(join(fx.layout, 'blobs', 'sha256', digest.slice('sha256:'.length)));
  const index = JSON.parse(await readFile(join(fx.layout, 'index.json'), 'utf8')) as { manifests: LayoutEntry[] };
  const repoOf = new Map(index.manifests.filter((e) => repos.includes(e.annotations?.[REF_NAME] ?? '')).map((e) => [e.digest, e.annotations![REF_NAME]!]));
  const out: Role[] = [];
  for (const entry of index.manifests) {
    const ref = entry.annotations?.[REF_NAME];
    const tagged = ref ? LEGACY_TAG.exec(ref) : null;
    if (ref && repos.includes(ref)) out.push({ role: 'image', repo: ref, entry });
    else if (tagged && repoOf.has(`sha256:${tagged[1]}`)) out.push({ role: 'sig', repo: repoOf.get(`sha256:${tagged[1]}`)!, entry });
    else if (!ref) {
      // oras lists referrers, and an index's platform manifests, unnamed
      const subject = (JSON.parse((await blob(entry.digest)).toString('utf8')) as { subject?: { digest: string } }).subject?.digest;
      if (subject && repoOf.has(subject)) out.push({ role: 'referrer', repo: repoOf.get(subject)!, entry });
    }
  }
  return out;
}

/** The layout's files with index.json listing `entries`, under `prefix`. */
async function layoutFiles(fx: SigningFixtures, entries: LayoutEntry[], prefix: string): Promise<{ name: string; data: Buffer | string }[]> {
  const blobs = await readdir(join(fx.layout, 'blobs', 'sha256'));
  return [
    { name: `${prefix}oci-layout`, data: '{"imageLayoutVersion":"1.0.0"}' },
    { name: `${prefix}index.json`, data: JSON.stringify({ schemaVersion: 2, manifests: entries }) },
    ...(await Promise.all(blobs.map(async (b) => ({ name: `${prefix}blobs/sha256/${b}`, data: await readFile(join(fx.layout, 'blobs', 'sha256', b)) })))),
  ];
}

/** The name a signed lab image gets on a node. */
export const signedLabName = (repo: string): string => `lab.local/${repo}:1`;

/**
 * A Zarf package of the signing lab's images `repos`, as `zarf package create` lays out images it
 * pulled with their cosign signatures listed beside them: every entry (a `.sig` tag too) named by
 * org.opencontainers.image.base.name, the full reference; referrers unnamed, as oras copies them.
 */
export async function writeSignedZarfPackage(file: string, fx: SigningFixtures, repos: readonly string[]): Promise<void> {
  const entries = (await signedRoles(fx, repos)).map(({ role, repo, entry }) => {
    const { annotations: _drop, ...bare } = entry;
    if (role === 'referrer') return bare;
    const name = role === 'image' ? signedLabName(repo) : `lab.local/${repo}:${entry.annotations![REF_NAME]!}`;
    return { ...bare, annotations: { [BASE_NAME]: name } };
  });
  // The package author lists the signatures as images (`zarf dev find-images` names them so).
  const listed = entries.flatMap((e) => ('annotations' in e ? [e.annotations[BASE_NAME]] : []));
  const yaml = `kind: ZarfPackageConfig\nmetadata:\n  name: holdfast-signed\ncomponents:\n  - name: images\n    images:\n${listed.map((r) => `      - ${r}\n`).join('')}`;
  await write(file, [{ name: 'zarf.yaml', data: yaml }, ...(await layoutFiles(fx, entries, 'images/'))]);
}

/**
 * A single-chunk Hauler haul of the signing lab's images `repos`, as `hauler store save` writes
 * them: each entry's kind; ref.name without the registry; io.containerd.image.name the image's
 * full name, on its `.sig` tag and referrers too (Hauler groups them under their image so).
 */
export async function writeSignedHaul(file: string, fx: SigningFixtures, repos: readonly string[]): Promise<void> {
  const entries = (await signedRoles(fx, repos)).map(({ role, repo, entry }) => {
    const kind =
      role === 'image' ? (entry.mediaType?.includes('index') ? 'dev.hauler/imageIndex' : 'dev.hauler/image') : role === 'sig' ? 'dev.hauler/sigs' : `dev.hauler/referrers/${entry.digest.slice('sha256:'.length)}`;
    const ref = role === 'sig' ? `${repo}:${entry.annotations![REF_NAME]!}` : `${repo}:1`;
    return { ...entry, annotations: { kind, [REF_NAME]: ref, [CONTAINERD_NAME]: signedLabName(repo) } };
  });
  await write(file, await layoutFiles(fx, entries, ''));
}
