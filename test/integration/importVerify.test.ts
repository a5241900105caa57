// `holdfast import --key` (#48) on real lab nodes (containerd 2.x, 1.7 in the version matrix):
// archives made from what cosign 3 and oras really write (lab/signing.ts) are verified on this
// machine before any byte is sent. Signed images import with their provenance on the image;
// one failing image refuses the whole archive and the node is left exactly as it was.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, listImages, type LabNodeHandle } from '../../lab';
import type { SigningFixtures } from '../../lab/signing';
import { readPublicKey } from '../../src/core/signatures/keys';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { flipBundleSignature, layoutOf, nodeState as stateOf, rewriteReferrer, startSignedSite, tarOf as tar, type SignedSite } from './signedSite';

let site: SignedSite;
let fx: SigningFixtures;
let n: LabNodeHandle;
let fpA: string;
const cli = (args: string[]) => site.cli(args);

beforeAll(async () => {
  site = await startSignedSite('v1');
  ({ fx, n, fpA } = site);
}, 400_000);

afterAll(async () => {
  await site?.stop();
});

/** The name an image gets on the node: its layout tag under lab.local. */
const named = (repo: string): string => `lab.local/${repo}:1`;

/** The layout keeping `repos`, each named lab.local/<repo>:1 (signedSite layoutOf). */
const archive = (repos: string[], opts: Parameters<typeof layoutOf>[2] = {}): string => layoutOf(site, Object.fromEntries(repos.map((r) => [r, named(r)])), opts);

const nodeState = () => stateOf(n);

async function expectRefused(args: string[], lines: string[]): Promise<void> {
  const before = await nodeState();
  const r = await cli(args);
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toMatch(/was refused: \d+ of \d+ images failed signature verification/);
  for (const l of lines) expect(r.stderr.split('\n')).toContain(`  ${l}`);
  expect(await nodeState()).toEqual(before);
}

describe('holdfast import --key: verified on this machine, recorded on the node', () => {
  it('signed images (a bundle-signed image and an index) import, with their provenance on each image and in images --json', async () => {
    const file = await tar(archive(['bundle', 'index']));
    const r = await cli(['import', 'v1', file, '--pin', '--key', fx.keys.b.pub, '--key', fx.keys.a.pub]);
    expect(r.code, r.stderr).toBe(0);
    for (const [repo, digest] of [['bundle', fx.images.bundle.digest], ['index', fx.images.index.digest]] as const) {
      const labels = await labelsOf(n, named(repo));
      expect(labels[SIGNATURE_LABELS.verified]).toBe('true');
      expect(labels[SIGNATURE_LABELS.by]).toBe(fpA);
      expect(labels[SIGNATURE_LABELS.format]).toBe('bundle');
      // The index is verified as the digest of the index: the image record's target.
      expect((await listImages(n)).find((i) => i.name === named(repo))!.digest).toBe(digest);
    }
    const j = await cli(['images', 'v1', '--json']);
    const refs = JSON.parse(j.stdout) as { name: string; signature: unknown }[];
    expect(refs.find((x) => x.name === named('index'))!.signature).toEqual({ verified: true, by: fpA, format: 'bundle', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(readdirSync(n.hostImagesDir).length).toBeGreaterThan(0);
    // The table's SIGNED column, there because some image has a record.
    const table = (await cli(['images', 'v1'])).stdout.split('\n');
    expect(table[0]).toMatch(/\bSIGNED$/);
    expect(table.find((l) => l.startsWith(named('index')))).toMatch(new RegExp(`key ${fpA.slice(0, 8)} \\(bundle\\)$`));
  });

  it('the wrong key refuses the whole archive, a line per image, and leaves the node untouched', async () => {
    const file = await tar(archive(['rsa-bundle', 'ed25519-bundle']));
    await expectRefused(['import', 'v1', file, '--pin', '--key', fx.keys.a.pub], [`${named('rsa-bundle')}: signed, but not by any given key`, `${named('ed25519-bundle')}: signed, but not by any given key`]);
  });

  it('one unsigned image refuses the signed one with it', async () => {
    const file = await tar(archive(['bundle', 'unsigned']));
    await expectRefused(['import', 'v1', file, '--key', fx.keys.a.pub], [`${named('unsigned')}: no signature`]);
  });

  it("a flipped byte in a bundle's DSSE signature refuses the archive", async () => {
    const layout = archive(['rsa-bundle'], { edit: (l) => flipBundleSignature(l, fx.imported.rsa.bundle.digest) });
    await expectRefused(['import', 'v1', await tar(layout), '--key', fx.keys.rsa.pub], [`${named('rsa-bundle')}: signature does not verify`]);
  });

  it("a signature moved to another image refuses it: it is for the other image's digest", async () => {
    const layout = archive(['unsigned'], { referrersOf: [fx.images.bundle.digest], edit: (l) => rewriteReferrer(l, fx.images.bundle.digest, (m) => ({ ...m, subject: { ...m.subject!, digest: fx.images.unsigned.digest } })) });
    await expectRefused(['import', 'v1', await tar(layout), '--key', fx.keys.a.pub], [`${named('unsigned')}: signature is for ${fx.images.bundle.digest} not for this image`]);
  });

  it('--direct refuses the same way: nothing is written into containerd', async () => {
    const file = await tar(archive(['bundle', 'unsigned']));
    await expectRefused(['import', 'v1', file, '--direct', '--key', fx.keys.a.pub], [`${named('unsigned')}: no signature`]);
  });
});

describe('signature manifests are never images on the node', () => {
  it('an archive with cosign .sig tags is refused as it is (k3s would import them as images), before anything is sent', async () => {
    const file = await tar(archive(['legacy'], { sigTags: true }));
    const before = await nodeState();
    const r = await cli(['import', 'v1', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cosign signature tags? \(sha256-[0-9a-f]{64}\.sig.*import would turn into images/);
    expect(await nodeState()).toEqual(before);
  });

  it('--direct delivers the images without the .sig tags; --allow-unsigned imports the unsigned one marked not verified', async () => {
    const file = await tar(archive(['legacy', 'unsigned', 'rsa-legacy'], { sigTags: true }));
    const r = await cli(['import', 'v1', file, '--direct', '--key', fx.keys.a.pub, '--key', fx.keys.rsa.pub, '--allow-unsigned']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${named('unsigned')} imported not verified (no signature)`);
    const names = (await listImages(n)).map((i) => i.name);
    expect(names.filter((x) => x.includes('.sig'))).toEqual([]);
    expect(await labelsOf(n, named('legacy'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.format]: 'legacy', [SIGNATURE_LABELS.by]: fpA });
    const rsaFp = (await readPublicKey(fx.keys.rsa.pub)).fingerprint;
    expect(await labelsOf(n, named('rsa-legacy'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.by]: rsaFp });
    const j = JSON.parse((await cli(['images', 'v1', '--json'])).stdout) as { name: string; signature: unknown }[];
    expect(j.find((x) => x.name === named('unsigned'))!.signature).toEqual({ verified: false, reason: 'no signature', at: expect.any(String) });
  });
});
