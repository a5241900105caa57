// What the signature suites share (importVerify, importPolicy, verify): one lab node beside images cosign
// 3 really signed (lab/signing.ts), archives cut from that OCI layout, and the node's state a
// refusal must leave exactly as it was.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listImages, startK3sWatcher, startLab, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import { layoutSubset, makeSigningFixtures, tarLayout, type LayoutSubset, type SigningFixtures } from '../../lab/signing';
import { readPublicKey } from '../../src/core/signatures/keys';
import { REF_NAME, type Descriptor, type OciManifest } from '../../src/core/signatures/layout';
import { addLabNode, runCli, tempHome } from './support';

export const sha256 = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
export const blobPath = (layout: string, digest: string): string => path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));
export const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** The signed images, one lab node with k3s's watcher, a Holdfast home, and key a's fingerprint. */
export interface SignedSite {
  dir: string;
  fx: SigningFixtures;
  fpA: string;
  lab: Lab;
  n: LabNodeHandle;
  home: string;
  watcher: K3sWatcher;
  cli: (args: string[]) => ReturnType<typeof runCli>;
  stop: () => Promise<void>;
}

/** Signs the fixtures and starts node `name` (`addArgs`: extra `node add` flags, e.g. a group). */
export async function startSignedSite(name: string, addArgs: string[] = []): Promise<SignedSite> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `hf-signed-${name}-`));
  const fx = await makeSigningFixtures(dir);
  const fpA = (await readPublicKey(fx.keys.a.pub)).fingerprint;
  const lab = await startLab({ nodes: [name] });
  const home = tempHome();
  const n = lab.node(name);
  await addLabNode(lab, n, home, addArgs.length ? { extra: addArgs } : {});
  const watcher = startK3sWatcher(n);
  const stop = async () => {
    await watcher.stop();
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, fx, fpA, lab, n, home, watcher, cli: (args) => runCli(args, { HOLDFAST_HOME: home }, 300_000), stop };
}

let made = 0;
/**
 * A copy of the signed layout keeping the images `names` maps (layout tag → name on the node) and
 * their referrers (and those of `referrersOf`); with `sigTags`, the legacy `.sig` tags too. The
 * index's platform manifests, which oras also lists unnamed, stay as blobs of the index. `edit`
 * changes the copy (a tampered blob, a moved signature) before it is used.
 */
export function layoutOf(s: Pick<SignedSite, 'dir' | 'fx'>, names: Record<string, string>, opts: LayoutSubset = {}): string {
  return layoutSubset(s.fx, names, path.join(s.dir, `layout-${++made}`), opts);
}

/** The layout as a tar, as a technician carries it (lab/signing tarLayout). */
export const tarOf = tarLayout;

/** What a refusal must leave alone: containerd's images and blobs, and the images dir. */
export async function nodeState(n: LabNodeHandle): Promise<{ images: string[]; content: string[]; dir: string[] }> {
  const images = (await listImages(n)).map((i) => `${i.name} ${i.digest} ${JSON.stringify(i.labels)}`).sort();
  const content = (await n.ctr(['content', 'ls', '-q'])).split('\n').filter(Boolean).sort();
  return { images, content, dir: readdirSync(n.hostImagesDir).sort() };
}

/** The bundle referrer of `digest` in a layout: its index entry and manifest. */
export function referrer(layout: string, digest: string): { entry: Descriptor; manifest: OciManifest } {
  const index = readJson<{ manifests: Descriptor[] }>(path.join(layout, 'index.json'));
  for (const entry of index.manifests) {
    if (entry.annotations?.[REF_NAME]) continue;
    const manifest = readJson<OciManifest>(blobPath(layout, entry.digest));
    if (manifest.subject?.digest === digest) return { entry, manifest };
  }
  throw new Error(`no referrer of ${digest}`);
}

/** Rewrites a referrer's manifest as an attacker would: re-hashed, the index pointing at it. */
export function rewriteReferrer(layout: string, digest: string, edit: (m: OciManifest) => OciManifest): void {
  const { entry, manifest } = referrer(layout, digest);
  const data = Buffer.from(JSON.stringify(edit(manifest)));
  writeFileSync(blobPath(layout, sha256(data)), data);
  const file = path.join(layout, 'index.json');
  const index = readJson<{ manifests: Descriptor[] }>(file);
  index.manifests = index.manifests.map((e) => (e.digest === entry.digest ? { ...e, digest: sha256(data), size: data.length } : e));
  writeFileSync(file, JSON.stringify(index));
}

/** Flips a byte of the DSSE signature in the bundle referrer of `digest`, re-hashing what holds it. */
export function flipBundleSignature(layout: string, digest: string): void {
  rewriteReferrer(layout, digest, (m) => {
    const layer = m.layers![0]!;
    const bundle = readJson<{ dsseEnvelope: { signatures: { sig: string }[] } }>(blobPath(layout, layer.digest));
    const sig = Buffer.from(bundle.dsseEnvelope.signatures[0]!.sig, 'base64');
    sig[20] = sig[20]! ^ 0x01;
    bundle.dsseEnvelope.signatures[0]!.sig = sig.toString('base64');
    const data = Buffer.from(JSON.stringify(bundle));
    writeFileSync(blobPath(layout, sha256(data)), data);
    return { ...m, layers: [{ ...layer, digest: sha256(data), size: data.length }] };
  });
}
