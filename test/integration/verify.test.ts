// `holdfast verify` (#48 item 6) on real lab nodes (containerd 2.x, 1.7 in the version matrix):
// the images already on a node, checked against what cosign 3 and oras really write
// (lab/signing.ts). Each verdict lands on the image as import's provenance labels; nothing else
// on the node changes (labels, pins, images, blobs, the images dir), and a dry run changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, listImages, type LabNodeHandle } from '../../lab';
import type { SigningFixtures } from '../../lab/signing';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import type { NodeVerifyOutcome } from '../../src/shared/signatures';
import { flipBundleSignature, layoutOf, nodeState, startSignedSite, tarOf as tar, type SignedSite } from './signedSite';

let site: SignedSite;
let fx: SigningFixtures;
let n: LabNodeHandle;
let fpA: string;
const cli = (args: string[]) => site.cli(args);

/** The name an image gets on the node: its layout tag under lab.local. */
const named = (repo: string): string => `lab.local/${repo}:1`;
const archive = (repos: string[], opts: Parameters<typeof layoutOf>[2] = {}): string => layoutOf(site, Object.fromEntries(repos.map((r) => [r, named(r)])), opts);

/** Puts images on the node as a technician would have before: imported without a key. */
async function importUnchecked(repos: string[]): Promise<void> {
  const r = await cli(['import', 'v1', await tar(archive(repos)), '--direct']);
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  site = await startSignedSite('v1');
  ({ fx, n, fpA } = site);
  await importUnchecked(['bundle', 'index']);
}, 400_000);

afterAll(async () => {
  await site?.stop();
});

const SIG_KEYS = new Set<string>(Object.values(SIGNATURE_LABELS));

/** The node as verify may not change it: signedSite's state, each reference's labels without the signature labels. */
async function stateApartFromSignatures(): Promise<{ images: string[]; content: string[]; dir: string[] }> {
  const images = (await listImages(n)).map((i) => `${i.name} ${i.digest} ${JSON.stringify(Object.fromEntries(Object.entries(i.labels).filter(([k]) => !SIG_KEYS.has(k))))}`);
  return { ...(await nodeState(n)), images: images.sort() };
}

/** Runs verify and checks that nothing but the signature labels changed on the node. */
async function verify(args: string[], code: number): Promise<{ stdout: string; stderr: string }> {
  const before = await stateApartFromSignatures();
  const r = await cli(['verify', ...args]);
  expect(r.code, r.stderr).toBe(code);
  expect(await stateApartFromSignatures()).toEqual(before);
  return r;
}

const summaryLines = (stdout: string): string[] => stdout.split('\n').slice(stdout.split('\n').findIndex((l) => l.startsWith('No valid signature')));

describe('holdfast verify: the images on a node against the signatures the technician carries', () => {
  it('images signed by the given key verify (exit 0) and are labelled; images --json shows it; nothing else changes', async () => {
    const r = await verify(['v1', '--key', fx.keys.a.pub, '--signatures', fx.layout], 0);
    for (const repo of ['bundle', 'index']) {
      expect(await labelsOf(n, named(repo))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.by]: fpA, [SIGNATURE_LABELS.format]: 'bundle' });
      expect(r.stdout.split('\n').find((l) => l.startsWith(named(repo)))).toMatch(new RegExp(`signed by key ${fpA.slice(0, 8)}…, verified \\d{4}-\\d\\d-\\d\\d$`));
    }
    expect(r.stdout).toMatch(/^v1: 2 of 2 images verified; recorded on \d+ references$/m);
    expect(r.stdout).not.toContain('No valid signature');
    const refs = JSON.parse((await cli(['images', 'v1', '--json'])).stdout) as { name: string; signature: unknown }[];
    expect(refs.find((x) => x.name === named('index'))!.signature).toEqual({ verified: true, by: fpA, format: 'bundle', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('--dry-run lists what fails and records nothing at all', async () => {
    await importUnchecked(['unsigned', 'rsa-bundle', 'legacy']);
    const before = await nodeState(n);
    const r = await verify(['v1', '--key', fx.keys.a.pub, '--signatures', fx.layout, '--dry-run'], 3);
    expect(await nodeState(n)).toEqual(before);
    expect(r.stdout).toMatch(/^v1: 3 of 5 images verified; nothing recorded \(--dry-run\)$/m);
    expect(summaryLines(r.stdout)).toEqual(['No valid signature for 2 images on v1:', `  ${named('rsa-bundle')}: signed, but not by any given key`, `  ${named('unsigned')}: no signature`, '']);
    expect(r.stderr).toContain('holdfast: 2 images on v1 have no valid signature');
  });

  it('an unsigned image and one signed by another key are recorded as not verified, with the reason; a legacy signature verifies', async () => {
    const r = await verify(['v1', '--key', fx.keys.a.pub, '--signatures', fx.layout], 3);
    expect(summaryLines(r.stdout).slice(1, 3)).toEqual([`  ${named('rsa-bundle')}: signed, but not by any given key`, `  ${named('unsigned')}: no signature`]);
    expect(await labelsOf(n, named('unsigned'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'false', [SIGNATURE_LABELS.reason]: 'no signature' });
    expect(await labelsOf(n, named('rsa-bundle'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'false', [SIGNATURE_LABELS.reason]: 'signed, but not by any given key' });
    expect(await labelsOf(n, named('legacy'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.format]: 'legacy', [SIGNATURE_LABELS.by]: fpA });
    const refs = JSON.parse((await cli(['images', 'v1', '--json'])).stdout) as { name: string; signature: unknown }[];
    expect(refs.find((x) => x.name === named('unsigned'))!.signature).toEqual({ verified: false, reason: 'no signature', at: expect.any(String) });
  });

  it('a flipped byte in a signature carried as an archive: signature does not verify, recorded so', async () => {
    const layout = archive(['rsa-bundle'], { edit: (l) => flipBundleSignature(l, fx.imported.rsa.bundle.digest) });
    const r = await verify(['v1', '--key', fx.keys.rsa.pub, '--signatures', await tar(layout), '--json'], 3);
    const [out] = JSON.parse(r.stdout) as NodeVerifyOutcome[];
    expect(out).toMatchObject({ node: 'v1', ok: true, dryRun: false });
    if (!out?.ok) throw new Error('v1 was not checked');
    expect(out.images.find((i) => i.name === named('rsa-bundle'))).toMatchObject({ digest: fx.imported.rsa.bundle.digest, signature: { verified: false, refusal: { kind: 'does-not-verify' }, reason: 'signature does not verify' } });
    expect(await labelsOf(n, named('rsa-bundle'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'false', [SIGNATURE_LABELS.reason]: 'signature does not verify' });
  });

  it('a detached bundle alone verifies the image it signs (--local, on the node itself)', async () => {
    const r = await verify(['--local', '--name', 'v1', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--key', fx.keys.a.pub, '--bundle', fx.bundleFile, '--json', '--dry-run'], 3);
    const [out] = JSON.parse(r.stdout) as NodeVerifyOutcome[];
    if (!out?.ok) throw new Error('this machine was not checked');
    expect(out.images.find((i) => i.name === named('bundle'))!.signature).toMatchObject({ verified: true, by: fpA, format: 'bundle' });
    expect(out.images.find((i) => i.name === named('index'))!.signature).toMatchObject({ verified: false, reason: 'no signature' });
    expect(out.recorded).toBe(0);
  });

  it('without a key it refuses to start (exit 2)', async () => {
    const r = await cli(['verify', 'v1', '--signatures', fx.layout]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('verify needs a key to verify with (--key FILE)');
  });
});
