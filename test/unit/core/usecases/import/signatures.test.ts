import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchiveImage } from '../../../../../src/core/archives/format/readIndex';
import { HoldfastError } from '../../../../../src/core/errors';
import { importedImages, isSignatureTagName, refuseSignatureTags, signatureOptionsProblem, signatureWarnings, verifyArchiveImages } from '../../../../../src/core/usecases/import/signatures';
import type { SignatureOptions, SignatureRule } from '../../../../../src/shared/importOptions';
import { mockSigstore, signKeyless, trustedRoot } from '../../../../support/keyless';

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

  it('a rule naming certificate identities verifies keyless bundles against its trusted root', async () => {
    const m = await mockSigstore();
    const root = path.join(dir, 'trusted_root.json');
    writeFileSync(root, JSON.stringify(trustedRoot(m)));
    const bundle = path.join(dir, 'web.sigstore.json');
    writeFileSync(bundle, await signKeyless(m, D1, { identity: 'https://ci.v.example/release', issuer: 'https://i.example' }));
    const vendor: SignatureRule = { name: 'vendor', images: ['lab.local/app/**'], identities: [{ identity: 'https://ci.v.example/release', issuer: 'https://i.example' }], trustedRoot: root };
    const r = await verifyArchiveImages('/x/site.tar', images, null, { bundles: [bundle], rules: [vendor] });
    expect(r.images.map((i) => [i.name, i.verdict.verified && i.verdict.by])).toEqual([['lab.local/app/web:1', 'https://ci.v.example/release (https://i.example)']]);
    const other = { ...vendor, identities: [{ identity: 'https://ci.v.example/other', issuer: 'https://i.example' }] };
    expect((await refusal({ bundles: [bundle], rules: [other] })).details).toEqual(['lab.local/app/web:1: signed, but not by a given identity (policy rule vendor)']);
    // Not covering any image of the archive, it does not stand in the way.
    await expect(verifyArchiveImages('/x/site.tar', [images[1]!], null, { rules: [other] })).resolves.toEqual({ images: [], warnings: [] });
  });

  it('the flags\' keyless identity is a requirement of its own, like --key', async () => {
    const m = await mockSigstore();
    const root = path.join(dir, 'flags_root.json');
    writeFileSync(root, JSON.stringify(trustedRoot(m)));
    const bundle = path.join(dir, 'flags.sigstore.json');
    writeFileSync(bundle, await signKeyless(m, D2, { identity: 'https://ci.v.example/release', issuer: 'https://i.example' }));
    const flags: SignatureOptions = { certificateIdentity: 'https://ci.v.example/release', certificateOidcIssuer: 'https://i.example', trustedRoot: root, bundles: [bundle] };
    const r = await verifyArchiveImages('/x/site.tar', [images[1]!], null, flags);
    expect(r.images.map((i) => i.verdict.verified)).toEqual([true]);
    expect((await refusal(flags)).details).toEqual(['lab.local/app/web:1: no signature']);
  });
});

describe('signatureOptionsProblem: keyless flags', () => {
  const keyless = { certificateIdentity: 'ops@example.org', certificateOidcIssuer: 'https://issuer.example', trustedRoot: '/trusted_root.json' };
  it('an identity, its issuer and a trusted root verify on their own', () => {
    expect(signatureOptionsProblem(keyless)).toBeNull();
    expect(signatureOptionsProblem({ ...keyless, certificateIdentity: undefined, certificateIdentityRegexp: '^ops@' })).toBeNull();
    expect(signatureOptionsProblem({ ...keyless, bundles: ['/b.json'], allowUnsigned: true })).toBeNull();
  });
  it('each missing part is named with its flag', () => {
    expect(signatureOptionsProblem({ ...keyless, trustedRoot: undefined })).toBe('--certificate-identity needs the Sigstore trusted root to verify against (--trusted-root FILE)');
    expect(signatureOptionsProblem({ keys: ['/k.pub'], certificateIdentityRegexp: '.*', certificateOidcIssuer: 'x' })).toBe('--certificate-identity-regexp needs the Sigstore trusted root to verify against (--trusted-root FILE)');
    expect(signatureOptionsProblem({ ...keyless, certificateOidcIssuer: undefined })).toBe('--certificate-identity needs the identity\'s issuer (--certificate-oidc-issuer VALUE)');
    expect(signatureOptionsProblem({ trustedRoot: '/r.json' })).toBe("--trusted-root needs the signer's identity (--certificate-identity VALUE or --certificate-identity-regexp RE)");
    expect(signatureOptionsProblem({ ...keyless, certificateIdentityRegexp: '.*' })).toBe('give --certificate-identity or --certificate-identity-regexp, not both');
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

  it("a haul sent as it is is refused for a referrer named after its image: k3s would store it under the image's name", () => {
    const images = [img('docker.io/library/app:1', D1, 'library/app:1'), img('docker.io/library/app:1', D2, 'library/app:1')];
    expect(() => refuseSignatureTags('/x/haul.tar.zst', images)).not.toThrow();
    expect(() => refuseSignatureTags('/x/haul.tar.zst', images, new Set([D2]))).toThrow(/haul\.tar\.zst was refused: it holds 1 cosign signature manifest \(library\/app:1\), which .* import would turn into images/);
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
