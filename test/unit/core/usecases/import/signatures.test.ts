import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchiveImage } from '../../../../../src/core/archives/format/readIndex';
import { HoldfastError } from '../../../../../src/core/errors';
import { importedImages, isSignatureTagName, refuseSignatureTags, signatureOptionsProblem, signatureWarnings, verifyArchiveImages } from '../../../../../src/core/usecases/import/signatures';
import type { SignatureOptions, SignatureRule } from '../../../../../src/shared/importOptions';

const HEX = 'a'.repeat(64);
const D1 = 'sha256:' + '1'.repeat(64);
const D2 = 'sha256:' + '2'.repeat(64);
const img = (name: string | null, targetDigest: string | null, refName?: string): ArchiveImage => ({ name, targetDigest, targetMediaType: null, platforms: [], ...(refName ? { refName } : {}) });

describe('signatureOptionsProblem: flags that need a key', () => {
  it('none without a key is fine, and each needs one', () => {
    expect(signatureOptionsProblem({})).toBeNull();
    expect(signatureOptionsProblem({ keys: ['/k.pub'], bundles: ['/b.json'], allowUnsigned: true })).toBeNull();
    expect(signatureOptionsProblem({ bundles: ['/b.json'] })).toBe('--bundle needs a key to verify with (--key FILE)');
    expect(signatureOptionsProblem({ allowUnsigned: true, strictReference: true })).toBe('--allow-unsigned, --strict-reference need a key to verify with (--key FILE)');
  });

  it('a policy rule for the nodes is something to verify with: bundles are wanted', () => {
    expect(signatureOptionsProblem({ bundles: ['/b.json'], rules: [{ name: 'apps', images: ['lab.local/**'], keys: ['/k.pub'] }] })).toBeNull();
  });
});

describe('verifyArchiveImages with a site policy (#48 item 8): covered images must verify', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-policy-unit-'));
  const key = path.join(dir, 'site.pub');
  writeFileSync(key, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }));
  const apps: SignatureRule = { name: 'apps', images: ['lab.local/app/**'], keys: [key] };
  const images = [
    { name: 'lab.local/app/web:1', digest: D1 },
    { name: 'lab.local/other:1', digest: D2 },
  ];
  const refusal = async (o: SignatureOptions): Promise<HoldfastError> => {
    const e: unknown = await verifyArchiveImages('/x/site.tar', images, null, o).then(() => null, (x: unknown) => x);
    if (!(e instanceof HoldfastError)) throw new Error(`not refused: ${String(e)}`);
    return e;
  };

  it.each<[string, SignatureOptions]>([
    ['the policy alone', { rules: [apps] }],
    ['--allow-unsigned does not override the rule', { allowUnsigned: true, rules: [apps] }],
    ['nor does a key of the flags with --allow-unsigned', { keys: [key], allowUnsigned: true, rules: [apps] }],
  ])('an unsigned covered image refuses the archive: %s', async (_, o) => {
    const e = await refusal(o);
    expect(e.code).toBe('REFUSED');
    expect(e.details).toEqual(['lab.local/app/web:1: no signature (policy rule apps)']);
    expect(e.hint).toMatch(/^Nothing was sent\. The site's signature policy requires/);
  });

  it('an image no rule covers is not verified at all (no verdict, nothing recorded)', async () => {
    const r = await verifyArchiveImages('/x/site.tar', [images[1]!], null, { rules: [apps] });
    expect(r.images).toEqual([]);
  });

  it('a rule that allows unsigned itself: imported, recorded as not verified', async () => {
    const r = await verifyArchiveImages('/x/site.tar', images, null, { rules: [{ ...apps, allowUnsigned: true }] });
    expect(r.images.map((i) => [i.name, i.verdict.verified])).toEqual([['lab.local/app/web:1', false]]);
  });

  it('a rule naming certificate identities refuses what it covers: keyless is not in this build', async () => {
    const vendor: SignatureRule = { name: 'vendor', images: ['lab.local/app/**'], identities: [{ identity: 'ci@v.example', issuer: 'https://i.example' }], trustedRoot: '/t.json' };
    const e = await refusal({ rules: [vendor] });
    expect(e.message).toBe('site.tar was refused: policy rule vendor names certificate identities, and keyless verification is not available in this build');
    // Not covering any image of the archive, it does not stand in the way.
    await expect(verifyArchiveImages('/x/site.tar', [images[1]!], null, { rules: [vendor] })).resolves.toEqual({ images: [], warnings: [] });
  });
});

describe('which images an archive creates on a node', () => {
  it('a .sig tag however it is written', () => {
    for (const n of [`sha256-${HEX}.sig`, `lab.local/app:sha256-${HEX}.sig`, `docker.io/library/sha256-${HEX}.sig`]) expect(isSignatureTagName(n), n).toBe(true);
    for (const n of ['lab.local/app:1', `lab.local/app@sha256:${HEX}`, `sha256-${HEX}`]) expect(isSignatureTagName(n), n).toBe(false);
  });

  it('named images only, without .sig tags or referrers', () => {
    const images = [img('lab.local/app:1', D1), img(null, D2), img(`sha256-${HEX}.sig`, D2), img('lab.local/ref:1', D2), img('docker.io/library/old:1', null)];
    expect(importedImages(images, new Set([D2]))).toEqual([
      { name: 'lab.local/app:1', digest: D1 },
      { name: 'docker.io/library/old:1', digest: null },
    ]);
  });

  it('an archive sent as it is with a .sig tag is refused, naming one', () => {
    expect(() => refuseSignatureTags('/x/site.tar', [img('lab.local/app:1', D1)])).not.toThrow();
    let err: unknown;
    try {
      refuseSignatureTags('/x/site.tar', [img('lab.local/app:1', D1), img(`sha256-${HEX}.sig`, D2, `sha256-${HEX}.sig`)]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).code).toBe('REFUSED');
    expect((err as HoldfastError).message).toContain(`site.tar was refused: it holds 1 cosign signature tag (sha256-${HEX}.sig)`);
  });
});

describe('signatureWarnings', () => {
  it('renamed images and images imported unverified', () => {
    const at = '2026-12-07T20:00:00.000Z';
    expect(signatureWarnings(null)).toEqual([]);
    expect(
      signatureWarnings({
        images: [
          { name: 'a:1', digest: D1, verdict: { verified: true, by: 'k', format: 'bundle', at } },
          { name: 'b:1', digest: D2, verdict: { verified: false, refusal: { kind: 'no-signature' }, reason: 'no signature', at } },
        ],
        warnings: ['a:1: signed as x/a, imported as a:1'],
      }),
    ).toEqual(['a:1: signed as x/a, imported as a:1', 'b:1 imported not verified (no signature), recorded so on the node']);
  });
});
