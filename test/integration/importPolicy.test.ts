// A site's signature policy applied by `holdfast import` without any flag (#48 item 8), on a real
// lab node of group plant-a, with images cosign 3 really signed (lab/signing.ts). A covered image
// that does not verify refuses the whole archive and the node is left as it was; a covered signed
// image is labelled verified; an image no rule covers imports as it would without a policy.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, listImages, startK3sWatcher, startLab, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import { run } from '../../lab/exec';
import { makeSigningFixtures, type SigningFixtures } from '../../lab/signing';
import { readPublicKey } from '../../src/core/signatures/keys';
import { REF_NAME, type Descriptor, type OciManifest } from '../../src/core/signatures/layout';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { addLabNode, runCli, tempHome } from './support';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-import-policy-'));
let fx: SigningFixtures;
let lab: Lab;
let home: string;
let n: LabNodeHandle;
let watcher: K3sWatcher;
let fpA: string;
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 300_000);

// The rule covers site.local/…; the same images named lab.local/… are covered by no rule.
const POLICY = `apiVersion: holdfast/v1
kind: SignaturePolicy
metadata: {name: site}
spec:
  rules:
    - name: site-apps
      groups: [plant-a]
      images: ["site.local/**"]
      keys: [keys/site.pub]
`;

beforeAll(async () => {
  fx = await makeSigningFixtures(dir);
  fpA = (await readPublicKey(fx.keys.a.pub)).fingerprint;
  lab = await startLab({ nodes: ['p1'] });
  home = tempHome();
  n = lab.node('p1');
  await addLabNode(lab, n, home, { extra: ['--group', 'plant-a'] });
  // The policy in Holdfast's home, its key beside it: paths are relative to the policy file.
  mkdirSync(path.join(home, 'keys'));
  cpSync(fx.keys.a.pub, path.join(home, 'keys', 'site.pub'));
  writeFileSync(path.join(home, 'policy.yaml'), POLICY);
  watcher = startK3sWatcher(n);
}, 400_000);

afterAll(async () => {
  await watcher?.stop();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const blobPath = (layout: string, digest: string): string => path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));

let made = 0;
/** A tar of the lab's layout keeping the images `names` maps (layout tag → name on the node) and their referrers. */
async function archive(names: Record<string, string>): Promise<string> {
  const layout = path.join(dir, `layout-${++made}`);
  cpSync(fx.layout, layout, { recursive: true });
  const file = path.join(layout, 'index.json');
  const index = readJson<{ manifests: Descriptor[] }>(file);
  const kept = new Set(index.manifests.filter((e) => (e.annotations?.[REF_NAME] ?? '') in names).map((e) => e.digest));
  index.manifests = index.manifests
    .filter((e) => {
      const ref = e.annotations?.[REF_NAME];
      return ref === undefined ? kept.has(readJson<OciManifest>(blobPath(layout, e.digest)).subject?.digest ?? '') : ref in names;
    })
    .map((e) => {
      const ref = e.annotations?.[REF_NAME];
      return ref ? { ...e, annotations: { ...e.annotations, [REF_NAME]: names[ref]! } } : e;
    });
  writeFileSync(file, JSON.stringify(index));
  await run(['tar', '-cf', `${layout}.tar`, '-C', layout, '.']);
  return `${layout}.tar`;
}

/** What a refusal must leave alone: containerd's images and blobs, and the images dir. */
async function nodeState(): Promise<{ images: string[]; content: string[]; dir: string[] }> {
  const images = (await listImages(n)).map((i) => `${i.name} ${i.digest} ${JSON.stringify(i.labels)}`).sort();
  const content = (await n.ctr(['content', 'ls', '-q'])).split('\n').filter(Boolean).sort();
  return { images, content, dir: readdirSync(n.hostImagesDir).sort() };
}

describe('holdfast import applies the site policy without flags', () => {
  it('policy show prints the rule that applies to the node', async () => {
    const r = await cli(['policy', 'show', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`for p1 (group plant-a):`);
    expect(r.stdout).toMatch(new RegExp(`^site-apps +site\\.local/\\*\\* +key keys/site\\.pub ${fpA.slice(0, 8)} +refused$`, 'm'));
  });

  it.each([
    ['import', []],
    ['import --allow-unsigned (does not override a policy)', ['--allow-unsigned']],
    ['import --direct', ['--direct']],
  ])('%s: a covered unsigned image refuses the archive; nothing reaches the node', async (_, flags) => {
    const file = await archive({ bundle: 'site.local/bundle:1', unsigned: 'site.local/unsigned:1' });
    const before = await nodeState();
    const r = await cli(['import', 'p1', file, '--pin', ...flags]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/was refused: 1 of 2 images failed signature verification/);
    expect(r.stderr.split('\n')).toContain('  site.local/unsigned:1: no signature (policy rule site-apps)');
    expect(await nodeState()).toEqual(before);
  });

  it('a covered signed image is labelled verified; an image no rule covers imports as without a policy', async () => {
    const file = await archive({ bundle: 'site.local/bundle:1', unsigned: 'lab.local/unsigned:1' });
    const r = await cli(['import', 'p1', file, '--pin']);
    expect(r.code, r.stderr).toBe(0);
    expect(await labelsOf(n, 'site.local/bundle:1')).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.by]: fpA, [SIGNATURE_LABELS.format]: 'bundle' });
    const uncovered = await labelsOf(n, 'lab.local/unsigned:1');
    expect(uncovered[SIGNATURE_LABELS.verified]).toBeUndefined();
    const j = JSON.parse((await cli(['images', 'p1', '--json'])).stdout) as { name: string; signature: unknown }[];
    expect(j.find((x) => x.name === 'site.local/bundle:1')!.signature).toEqual({ verified: true, by: fpA, format: 'bundle', at: expect.stringMatching(/^\d{4}-/) });
    expect(j.find((x) => x.name === 'lab.local/unsigned:1')!.signature).toBeNull();
  });
});
