// A site's signature policy applied by `holdfast import` without any flag (#48 item 8), on a real
// lab node of group plant-a, with images cosign 3 really signed (lab/signing.ts). A covered image
// that does not verify refuses the whole archive and the node is left as it was; a covered signed
// image is labelled verified; an image no rule covers imports as it would without a policy.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, type LabNodeHandle } from '../../lab';
import type { SigningFixtures } from '../../lab/signing';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { layoutOf, nodeState as stateOf, startSignedSite, tarOf, type SignedSite } from './signedSite';

let site: SignedSite;
let fx: SigningFixtures;
let n: LabNodeHandle;
let home: string;
let fpA: string;
const cli = (args: string[]) => site.cli(args);

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
  site = await startSignedSite('p1', ['--group', 'plant-a']);
  ({ fx, n, home, fpA } = site);
  // The policy in Holdfast's home, its key beside it: paths are relative to the policy file.
  mkdirSync(path.join(home, 'keys'));
  cpSync(fx.keys.a.pub, path.join(home, 'keys', 'site.pub'));
  writeFileSync(path.join(home, 'policy.yaml'), POLICY);
}, 400_000);

afterAll(async () => {
  await site?.stop();
});

/** A tar of the signed layout keeping the images `names` maps (layout tag → name on the node) and their referrers. */
const archive = (names: Record<string, string>): Promise<string> => tarOf(layoutOf(site, names));

const nodeState = () => stateOf(n);

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
