// Real cosign signatures for the signature tests, made at test time: images pushed to Debian's
// docker-registry, signed by cosign 3 in both formats (the legacy `.sig` tag and the OCI 1.1
// referrer bundle), copied by `oras copy -r` into an OCI layout as technicians carry them.
// Everything runs in a private network namespace that has only loopback, so a tool that tried
// the network (a transparency log, TUF) would fail here. Test tooling only.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { run } from './exec.ts';
import { layeredLayout } from './layered.ts';
import { spawnGroup, stopGroup } from './node.ts';
import { REF_NAME, type Descriptor, type OciManifest } from '../src/core/signatures/layout.ts';

const TOOLS = process.env.HOLDFAST_SIGNING_CACHE ?? '/var/cache/holdfast-lab/signing';
const REGISTRY_BIN = '/usr/bin/docker-registry';
const PASSWORD = 'holdfast-lab';
/** The namespace is private and has nothing else listening: any port is free in it. */
const ADDR = '127.0.0.1:5000';

/** The binaries the signing lab runs; a missing one says how to get it. */
export function signingTools(): { cosign: string; oras: string; registry: string } {
  const tools = { cosign: join(TOOLS, 'cosign', 'cosign'), oras: join(TOOLS, 'oras', 'oras') };
  for (const [name, bin] of Object.entries(tools)) {
    if (!existsSync(bin)) throw new Error(`lab: ${name} is missing at ${bin}: run scripts/lab-signing-tools.sh (as root)`);
  }
  if (!existsSync(REGISTRY_BIN)) throw new Error(`lab: ${REGISTRY_BIN} is missing: apt-get install docker-registry`);
  return { ...tools, registry: REGISTRY_BIN };
}

export interface Registry {
  /** host:port inside the namespace. */
  addr: string;
  /** Runs argv inside the registry's loopback-only namespace, with the lab's private env. */
  exec(argv: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** Starts docker-registry with a private config and storage under `dir`, in its own netns. */
export async function startRegistry(dir: string): Promise<Registry> {
  const { registry } = signingTools();
  const config = join(dir, 'registry.yml');
  const home = join(dir, 'home');
  await mkdir(join(dir, 'storage'), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(config, registryConfig(join(dir, 'storage')));
  const log = join(dir, 'registry.log');
  // unshare execs sh, which execs the registry: the spawned pid is the namespace's holder.
  const child = spawnGroup(['unshare', '--net', 'sh', '-c', 'ip link set lo up && exec "$0" serve "$1"', registry, config], log);
  const env = { ...process.env, HOME: home, DOCKER_CONFIG: join(home, '.docker'), COSIGN_PASSWORD: PASSWORD };
  const exec = (argv: string[]): Promise<string> => run(['nsenter', `--net=/proc/${child.pid}/ns/net`, '--', ...argv], { env, timeoutMs: 120_000 });
  const stop = (): Promise<void> => stopGroup(child);
  await waitListening(child, exec, log).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  return { addr: ADDR, exec, stop };
}

function registryConfig(storage: string): string {
  return ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${JSON.stringify(storage)}`, 'http:', `  addr: ${ADDR}`, '  secret: holdfast-lab', ''].join('\n');
}

/** Polls the registry's /v2/ endpoint from inside the namespace (a hang guard, not a timing). */
async function waitListening(child: ChildProcess, exec: Registry['exec'], log: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) break;
    const ok = await exec(['skopeo', 'inspect', '--tls-verify=false', '--raw', `docker://${ADDR}/holdfast-probe:none`]).then(
      () => true,
      (e: { stderr?: string }) => /manifest unknown|not found|name unknown/i.test(e.stderr ?? ''),
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lab: docker-registry did not start; see ${log}:\n${await readFile(log, 'utf8').catch(() => '')}`);
}

export interface CosignKey {
  /** The private key (encrypted with COSIGN_PASSWORD). */
  key: string;
  /** The PEM public key, as `cosign generate-key-pair` writes it. */
  pub: string;
}

/** `cosign generate-key-pair` in `dir` (no prompt: COSIGN_PASSWORD is set). */
export async function generateKeyPair(reg: Registry, dir: string): Promise<CosignKey> {
  await mkdir(dir, { recursive: true });
  const { cosign } = signingTools();
  const prefix = join(dir, 'cosign');
  await reg.exec([cosign, 'generate-key-pair', '--output-key-prefix', prefix]);
  return { key: `${prefix}.key`, pub: `${prefix}.pub` };
}

export type SignFormat = 'legacy' | 'bundle';

/**
 * The cosign 3 flags for each format, with nothing sent anywhere: no signing config (it names
 * Rekor and Fulcio) and no transparency-log upload. `--new-bundle-format=false` asks for the
 * legacy `sha256-<digest>.sig` tag; the default is the OCI 1.1 referrer bundle v0.3.
 */
export const COSIGN_SIGN_FLAGS: Record<SignFormat, readonly string[]> = {
  legacy: ['--new-bundle-format=false', '--use-signing-config=false', '--tlog-upload=false'],
  bundle: ['--use-signing-config=false', '--tlog-upload=false'],
};

/** Signs repo@digest in the registry; `bundleFile` also writes cosign's detached bundle there. */
export async function cosignSign(reg: Registry, key: CosignKey, repo: string, digest: string, format: SignFormat, bundleFile?: string): Promise<void> {
  const { cosign } = signingTools();
  const extra = bundleFile ? ['--bundle', bundleFile] : [];
  await reg.exec([cosign, 'sign', '--key', key.key, ...COSIGN_SIGN_FLAGS[format], ...extra, '--allow-http-registry', '-y', `${reg.addr}/${repo}@${digest}`]);
}

export interface SignedLabImage {
  /** Repository in the lab registry, and the tag naming it in the layout. */
  repo: string;
  /** The digest of what is signed: the manifest, or the index for an index. */
  digest: string;
}

/** The keys cosign does not generate but signs with once imported (`cosign import-key-pair`). */
export type ImportedKind = 'rsa' | 'ed25519';
const IMPORTED: readonly ImportedKind[] = ['rsa', 'ed25519'];

/** A PEM private key made here, imported into cosign's encrypted format. */
export async function importKeyPair(reg: Registry, kind: ImportedKind, dir: string): Promise<CosignKey> {
  await mkdir(dir, { recursive: true });
  const { privateKey } = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const pem = join(dir, `${kind}.pem`);
  await writeFile(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const prefix = join(dir, 'cosign');
  await reg.exec([signingTools().cosign, 'import-key-pair', '--key', pem, '--output-key-prefix', prefix]);
  return { key: `${prefix}.key`, pub: `${prefix}.pub` };
}

export interface SigningFixtures {
  /** The OCI layout `oras copy -r --to-oci-layout` wrote (images, referrers, `.sig` tags). */
  layout: string;
  /** a and b: ECDSA P-256 from `cosign generate-key-pair`; rsa and ed25519: imported. */
  keys: Record<'a' | 'b' | ImportedKind, CosignKey>;
  images: {
    /** Signed by key a in the legacy format. */
    legacy: SignedLabImage;
    /** Signed by key a as an OCI 1.1 referrer bundle; its detached bundle is `bundleFile`. */
    bundle: SignedLabImage;
    unsigned: SignedLabImage;
    /** A two-platform index signed (bundle format, key a) as the index digest. */
    index: SignedLabImage;
  };
  /** One image per imported key and format, signed by that key in that format. */
  imported: Record<ImportedKind, Record<SignFormat, SignedLabImage>>;
  bundleFile: string;
}

const FORMATS: readonly SignFormat[] = ['legacy', 'bundle'];
const importedRepo = (kind: ImportedKind, format: SignFormat): string => `${kind}-${format}`;

/** Builds, pushes, signs and copies the lab's signed images into `dir/layout`. */
export async function makeSigningFixtures(dir: string): Promise<SigningFixtures> {
  const src = join(dir, 'src');
  const { images, imported } = await writeSourceLayout(src);
  const all = [...Object.values(images), ...IMPORTED.flatMap((k) => FORMATS.map((f) => imported[k][f]))];
  const reg = await startRegistry(join(dir, 'registry'));
  try {
    for (const { repo } of all) {
      await reg.exec(['skopeo', 'copy', '--quiet', '--all', '--insecure-policy', '--dest-tls-verify=false', `oci:${src}:${repo}`, `docker://${reg.addr}/${repo}:1`]);
    }
    const keys = {
      a: await generateKeyPair(reg, join(dir, 'key-a')),
      b: await generateKeyPair(reg, join(dir, 'key-b')),
      rsa: await importKeyPair(reg, 'rsa', join(dir, 'key-rsa')),
      ed25519: await importKeyPair(reg, 'ed25519', join(dir, 'key-ed25519')),
    };
    const bundleFile = join(dir, 'bundle.sigstore.json');
    await cosignSign(reg, keys.a, 'legacy', images.legacy.digest, 'legacy');
    await cosignSign(reg, keys.a, 'bundle', images.bundle.digest, 'bundle', bundleFile);
    await cosignSign(reg, keys.a, 'index', images.index.digest, 'bundle');
    for (const kind of IMPORTED) {
      for (const f of FORMATS) await cosignSign(reg, keys[kind], imported[kind][f].repo, imported[kind][f].digest, f);
    }
    const layout = join(dir, 'layout');
    await copyToLayout(reg, all, [images.legacy, ...IMPORTED.map((k) => imported[k].legacy)], layout);
    return { layout, keys, images, imported, bundleFile };
  } finally {
    await reg.stop();
  }
}

/** `oras copy -r` of each image (with its referrers), then the legacy `.sig` tags, which are not referrers. */
async function copyToLayout(reg: Registry, images: readonly SignedLabImage[], legacySigned: readonly SignedLabImage[], layout: string): Promise<void> {
  const { oras } = signingTools();
  for (const img of images) {
    await reg.exec([oras, 'copy', '-r', '--from-plain-http', '--to-oci-layout', `${reg.addr}/${img.repo}:1`, `${layout}:${img.repo}`]);
  }
  for (const img of legacySigned) {
    const tag = `sha256-${img.digest.slice('sha256:'.length)}.sig`;
    await reg.exec([oras, 'copy', '--from-plain-http', '--to-oci-layout', `${reg.addr}/${img.repo}:${tag}`, `${layout}:${tag}`]);
  }
}

const sha256 = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const INDEX_PLATFORMS = ['index-amd64', 'index-arm64'];

/** Single-manifest images and a two-platform index, tagged by repo name. */
async function writeSourceLayout(src: string): Promise<Pick<SigningFixtures, 'images' | 'imported'>> {
  const single = ['legacy', 'bundle', 'unsigned', ...IMPORTED.flatMap((k) => FORMATS.map((f) => importedRepo(k, f)))];
  const specs = [...single, ...INDEX_PLATFORMS].map((repo) => ({ name: `lab.local/${repo}:1`, layers: [{ seed: `signing-${repo}`, bytes: 2048 }] }));
  const { entries, images } = await layeredLayout(specs, (img) => ({ 'org.opencontainers.image.ref.name': img.name.slice('lab.local/'.length, -2) }));
  const index = JSON.parse(entries.find((e) => e.name === 'index.json')!.data.toString('utf8')) as { manifests: Record<string, unknown>[] };
  const platforms = images.slice(single.length).map((img, i) => ({ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...img.manifest, platform: { architecture: i ? 'arm64' : 'amd64', os: 'linux' } }));
  const indexBlob = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: platforms }));
  index.manifests = [
    ...index.manifests.slice(0, single.length),
    { mediaType: 'application/vnd.oci.image.index.v1+json', digest: sha256(indexBlob), size: indexBlob.length, annotations: { 'org.opencontainers.image.ref.name': 'index' } },
  ];
  for (const e of entries) {
    const data = e.name === 'index.json' ? Buffer.from(JSON.stringify(index)) : e.data;
    await mkdir(dirname(join(src, e.name)), { recursive: true });
    await writeFile(join(src, e.name), data);
  }
  await writeFile(join(src, 'blobs', 'sha256', sha256(indexBlob).slice(7)), indexBlob);
  const signed = (repo: string): SignedLabImage => ({ repo, digest: images[single.indexOf(repo)]!.manifest.digest });
  const byFormat = (k: ImportedKind): Record<SignFormat, SignedLabImage> => ({ legacy: signed(importedRepo(k, 'legacy')), bundle: signed(importedRepo(k, 'bundle')) });
  return {
    images: { legacy: signed('legacy'), bundle: signed('bundle'), unsigned: signed('unsigned'), index: { repo: 'index', digest: sha256(indexBlob) } },
    imported: { rsa: byFormat('rsa'), ed25519: byFormat('ed25519') },
  };
}

/** The name an image of the lab's layout gets on a node in the signature suites: its layout tag under lab.local. */
export const labImageName = (repo: string): string => `lab.local/${repo}:1`;

export interface LayoutSubset {
  /** Keep the legacy `.sig` tags too. */
  sigTags?: boolean;
  /** Keep the referrers of these digests too (a signature moved onto another image). */
  referrersOf?: string[];
  /** Changes the copy (a tampered blob, a moved signature) before it is used. */
  edit?: (layout: string) => void;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const blobPath = (layout: string, digest: string): string => join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));

/**
 * A copy of the lab's layout at `out` keeping the images named in `names` (layout tag → the
 * name it gets) and their referrers. The index's platform manifests, which oras also lists
 * unnamed, stay as blobs of the index.
 */
export function layoutSubset(fx: Pick<SigningFixtures, 'layout'>, names: Record<string, string>, out: string, opts: LayoutSubset = {}): string {
  cpSync(fx.layout, out, { recursive: true });
  const file = join(out, 'index.json');
  const index = readJson<{ manifests: Descriptor[] }>(file);
  const kept = new Set([...index.manifests.filter((e) => (e.annotations?.[REF_NAME] ?? '') in names).map((e) => e.digest), ...(opts.referrersOf ?? [])]);
  index.manifests = index.manifests
    .filter((e) => {
      const ref = e.annotations?.[REF_NAME];
      if (ref === undefined) return kept.has(readJson<OciManifest>(blobPath(out, e.digest)).subject?.digest ?? '');
      return ref in names || (opts.sigTags === true && ref.endsWith('.sig'));
    })
    .map((e) => {
      const ref = e.annotations?.[REF_NAME];
      return ref && ref in names ? { ...e, annotations: { ...e.annotations, [REF_NAME]: names[ref]! } } : e;
    });
  writeFileSync(file, JSON.stringify(index));
  opts.edit?.(out);
  return out;
}

/** The layout as a tar next to it (`<layout>.tar`), as a technician carries it. */
export async function tarLayout(layout: string): Promise<string> {
  const out = `${layout}.tar`;
  await run(['tar', '-cf', out, '-C', layout, '.']);
  return out;
}
