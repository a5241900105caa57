// `holdfast import --key` (#48) on the bundles people carry: Zarf packages and Hauler hauls, made
// from what cosign 3 and oras really write (lab/signing.ts) and laid out as those tools lay them
// out (lab/bundles.ts). Signed ones are delivered with their provenance on each image and no
// signature manifest as an image; one unsigned image refuses the whole bundle, the node untouched.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, listImages, startLab, type Lab, type LabNodeHandle } from '../../lab';
import { signedLabName as named, writeSignedHaul, writeSignedZarfPackage } from '../../lab/bundles';
import { makeSigningFixtures, type SigningFixtures } from '../../lab/signing';
import { readPublicKey } from '../../src/core/signatures/keys';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { addLabNode, runCli, tempHome } from './support';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-bundle-verify-'));
let fx: SigningFixtures;
let lab: Lab;
let home: string;
let n: LabNodeHandle;
let fpA: string;
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 300_000);

beforeAll(async () => {
  fx = await makeSigningFixtures(dir);
  fpA = (await readPublicKey(fx.keys.a.pub)).fingerprint;
  lab = await startLab({ nodes: ['b1'] });
  home = tempHome();
  n = lab.node('b1');
  await addLabNode(lab, n, home);
}, 400_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let made = 0;
const zarf = async (repos: string[]): Promise<string> => {
  const file = path.join(dir, `zarf-package-signed-amd64-${++made}.0.0.tar.zst`);
  await writeSignedZarfPackage(file, fx, repos);
  return file;
};
const haul = async (repos: string[]): Promise<string> => {
  const file = path.join(dir, `haul-${++made}.tar.zst`);
  await writeSignedHaul(file, fx, repos);
  return file;
};

/** What a refusal must leave alone: containerd's images and blobs, and the images dir. */
async function nodeState(): Promise<{ images: string[]; content: string[]; dir: string[] }> {
  const images = (await listImages(n)).map((i) => `${i.name} ${i.digest} ${JSON.stringify(i.labels)}`).sort();
  const content = (await n.ctr(['content', 'ls', '-q'])).split('\n').filter(Boolean).sort();
  return { images, content, dir: readdirSync(n.hostImagesDir).sort() };
}

async function expectDelivered(file: string, signed: Record<string, { digest: string; format: 'legacy' | 'bundle' }>): Promise<void> {
  const r = await cli(['import', 'b1', file, '--direct', '--key', fx.keys.b.pub, '--key', fx.keys.a.pub]);
  expect(r.code, r.stderr).toBe(0);
  const images = await listImages(n);
  for (const [repo, { digest, format }] of Object.entries(signed)) {
    // The image record targets the signed digest (an index: the index's), never a signature manifest.
    expect(images.find((i) => i.name === named(repo))?.digest).toBe(digest);
    const labels = await labelsOf(n, named(repo));
    expect(labels[SIGNATURE_LABELS.verified]).toBe('true');
    expect(labels[SIGNATURE_LABELS.by]).toBe(fpA);
    expect(labels[SIGNATURE_LABELS.format]).toBe(format);
  }
  expect(images.map((i) => i.name).filter((x) => x.includes('.sig') || x.includes('sha256-'))).toEqual([]);
}

async function expectRefused(args: string[], message: RegExp, lines: string[] = []): Promise<void> {
  const before = await nodeState();
  const r = await cli(args);
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toMatch(message);
  for (const l of lines) expect(r.stderr.split('\n')).toContain(`  ${l}`);
  expect(await nodeState()).toEqual(before);
}

const FAILED = /was refused: 1 of \d+ images failed signature verification/;

describe('a Zarf package signed with cosign', () => {
  it('--direct --key: the legacy-signed and the bundle-signed image are verified and delivered with their provenance', async () => {
    await expectDelivered(await zarf(['legacy', 'bundle']), { legacy: { digest: fx.images.legacy.digest, format: 'legacy' }, bundle: { digest: fx.images.bundle.digest, format: 'bundle' } });
  });

  it('one unsigned image refuses the whole package; nothing reaches the node', async () => {
    const file = await zarf(['rsa-legacy', 'ed25519-bundle', 'unsigned']);
    const rsa = fx.keys.rsa.pub;
    const ed = fx.keys.ed25519.pub;
    await expectRefused(['import', 'b1', file, '--direct', '--key', rsa, '--key', ed], FAILED, [`${named('unsigned')}: no signature`]);
  });
});

describe('a Hauler haul signed with cosign', () => {
  it('--direct --key: a legacy-signed image, a bundle-signed image and a signed index are delivered with their provenance', async () => {
    await expectDelivered(await haul(['legacy', 'bundle', 'index']), {
      legacy: { digest: fx.images.legacy.digest, format: 'legacy' },
      bundle: { digest: fx.images.bundle.digest, format: 'bundle' },
      index: { digest: fx.images.index.digest, format: 'bundle' },
    });
  });

  it('one unsigned image refuses the whole haul; nothing reaches the node', async () => {
    const file = await haul(['rsa-bundle', 'ed25519-legacy', 'unsigned']);
    await expectRefused(['import', 'b1', file, '--direct', '--key', fx.keys.rsa.pub, '--key', fx.keys.ed25519.pub], FAILED, [`${named('unsigned')}: no signature`]);
  });

  it("import and upload as it is are refused before anything is sent: k3s would import Hauler's signature entries as images under the image's name", async () => {
    const file = await haul(['bundle']);
    const refused = /was refused: it holds 1 cosign signature manifest \(bundle:1\), which .* import would turn into images/;
    await expectRefused(['import', 'b1', file, '--key', fx.keys.a.pub], refused);
    await expectRefused(['upload', 'b1', file, '--key', fx.keys.a.pub], refused);
  });
});
