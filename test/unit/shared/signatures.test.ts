import { describe, expect, it } from 'vitest';
import { SIGNATURE_LABELS } from '../../../src/shared/domain/labels';
import { bindSignatures, checkAllowsImport, isKeylessSigner, keylessSigner, isLegacySignatureTag, isRefused, outcomeRecord, unverifiedImageCount, type CheckedImage, legacySignatureTag, referenceMismatch, refusalText, signatureBrief, signatureCounts, signatureSentence, signatureLabels, signatureRecord, unverifiedImages, type SignatureCheck } from '../../../src/shared/signatures';

const D = 'sha256:' + 'a'.repeat(64);
const OTHER = 'sha256:' + 'b'.repeat(64);
const AT = '2026-12-08T10:00:00.000Z';

const check = (c: Partial<SignatureCheck>): SignatureCheck => ({ format: 'legacy', verifiedBy: null, claimsGivenKey: false, signedDigests: [], ...c });
const good = (c: Partial<SignatureCheck> = {}): SignatureCheck => check({ verifiedBy: 'k1', claimsGivenKey: true, signedDigests: [D], ...c });

describe('bindSignatures: the binding rule', () => {
  const cases: { name: string; checks: SignatureCheck[]; want: string }[] = [
    { name: 'no signature at all', checks: [], want: 'no signature' },
    { name: 'verifies with a given key and signs this digest', checks: [good()], want: 'verified legacy by k1' },
    { name: 'a bundle is preferred over a legacy signature', checks: [good(), good({ format: 'bundle', verifiedBy: 'k2' })], want: 'verified bundle by k2' },
    { name: 'the same keys in any order give the same verdict', checks: [good({ verifiedBy: 'k2' }), good({ verifiedBy: 'k1' })], want: 'verified legacy by k1' },
    { name: 'verifies, but signs another digest', checks: [good({ signedDigests: [OTHER] })], want: `signature is for ${OTHER} not for this image` },
    { name: 'one of several subjects is this digest', checks: [good({ signedDigests: [OTHER, D] })], want: 'verified legacy by k1' },
    { name: 'verifies but names no digest', checks: [good({ signedDigests: [] })], want: 'signature does not verify' },
    { name: 'fails and claims a given key (tampered)', checks: [check({ claimsGivenKey: true })], want: 'signature does not verify' },
    { name: 'fails and names no given key', checks: [check({})], want: 'signed, but not by any given key' },
    { name: 'one good signature outweighs a tampered one', checks: [check({ claimsGivenKey: true }), good()], want: 'verified legacy by k1' },
    { name: 'a signature for another image outweighs tampering', checks: [check({ claimsGivenKey: true }), good({ signedDigests: [OTHER] })], want: `signature is for ${OTHER} not for this image` },
    { name: 'tampering outweighs another key', checks: [check({}), check({ claimsGivenKey: true })], want: 'signature does not verify' },
    { name: 'an unverified signature never binds, whatever it names', checks: [check({ signedDigests: [D] })], want: 'signed, but not by any given key' },
    { name: 'keyless signatures by nobody given', checks: [check({ keyless: true }), check({ keyless: true })], want: 'signed, but not by a given identity' },
    { name: 'a key signature and a keyless one, neither given', checks: [check({}), check({ keyless: true })], want: 'signed, but not by any given key' },
    { name: 'a tampered keyless signature', checks: [check({ keyless: true, claimsGivenKey: true })], want: 'signature does not verify' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const v = bindSignatures(D, c.checks, AT);
      expect(v.at).toBe(AT);
      expect(v.verified ? `verified ${v.format} by ${v.by}` : v.reason).toBe(c.want);
    });
  }

  it("keeps a legacy payload's reference on the verdict", () => {
    expect(bindSignatures(D, [good({ reference: 'reg.example/app' })], AT)).toEqual({ verified: true, by: 'k1', format: 'legacy', at: AT, reference: 'reg.example/app' });
  });
});

describe('refusalText', () => {
  it('words each refusal as the CLI prints it', () => {
    expect(refusalText({ kind: 'no-signature' })).toBe('no signature');
    expect(refusalText({ kind: 'other-key' })).toBe('signed, but not by any given key');
    expect(refusalText({ kind: 'other-identity' })).toBe('signed, but not by a given identity');
    expect(refusalText({ kind: 'does-not-verify' })).toBe('signature does not verify');
    expect(refusalText({ kind: 'other-image', signedDigest: OTHER })).toBe(`signature is for ${OTHER} not for this image`);
  });
});

describe('legacy signature tags', () => {
  it('names the tag after the digest', () => {
    expect(legacySignatureTag(D)).toBe(`sha256-${'a'.repeat(64)}.sig`);
  });

  const names: [string, boolean][] = [
    [legacySignatureTag(D), true],
    [`reg.example/app:${legacySignatureTag(D)}`, true],
    [`sha256-${'a'.repeat(63)}.sig`, false],
    [`x${legacySignatureTag(D)}`, false],
    [`sha256-${'a'.repeat(64)}`, false],
    [`${legacySignatureTag(D)}.att`, false],
  ];
  for (const [name, want] of names) {
    it(`${name} is ${want ? '' : 'not '}a signature tag`, () => expect(isLegacySignatureTag(name)).toBe(want));
  }
});

describe("referenceMismatch: the legacy payload's docker-reference against the imported name", () => {
  const cases: { imported: string; signed: string | undefined; want: string | null }[] = [
    { imported: 'reg.example/app:1.0', signed: 'reg.example/app', want: null },
    { imported: 'docker.io/library/nginx:1.27', signed: 'index.docker.io/library/nginx', want: null },
    { imported: 'nginx:1.27', signed: 'docker.io/library/nginx', want: null },
    { imported: 'reg.example/app@sha256:' + 'a'.repeat(64), signed: 'reg.example/app', want: null },
    { imported: 'mirror.site/app:1.0', signed: 'reg.example/app', want: 'signed as reg.example/app, imported as mirror.site/app:1.0' },
    { imported: 'reg.example/app:1.0', signed: 'NOT A REFERENCE', want: 'signed as NOT A REFERENCE, imported as reg.example/app:1.0' },
    { imported: 'reg.example/app:1.0', signed: undefined, want: null },
  ];
  for (const c of cases) {
    it(`${c.imported} signed as ${c.signed ?? '(none)'}: ${c.want ?? 'agrees'}`, () => {
      expect(referenceMismatch(c.imported, c.signed, false)?.text ?? null).toBe(c.want);
    });
  }

  it('is a warning, or an error when strict', () => {
    expect(referenceMismatch('mirror.site/app:1', 'reg.example/app', false)?.level).toBe('warning');
    expect(referenceMismatch('mirror.site/app:1', 'reg.example/app', true)?.level).toBe('error');
  });
});

describe('signature labels: the verdict recorded on the image, and read back', () => {
  /** Applies a label delta as containerd's update does (null removes the key). */
  const apply = (labels: Record<string, string>, delta: Record<string, string | null>) => {
    const out = { ...labels };
    for (const [k, v] of Object.entries(delta)) {
      if (v === null) delete out[k];
      else out[k] = v;
    }
    return out;
  };

  it('a verified verdict round-trips to {verified, by, format, at}', () => {
    const labels = apply({ other: 'x' }, signatureLabels(bindSignatures(D, [good({ format: 'bundle' })], AT)));
    expect(labels[SIGNATURE_LABELS.verified]).toBe('true');
    expect(signatureRecord(labels)).toEqual({ verified: true, by: 'k1', format: 'bundle', at: AT });
    expect(signatureBrief(signatureRecord(labels))).toBe('key k1 (bundle)');
  });

  it('a keyless verdict round-trips its identity and issuer', () => {
    const by = keylessSigner('ops@example.org', 'https://issuer.example');
    expect(by).toBe('ops@example.org (https://issuer.example)');
    expect(isKeylessSigner(by)).toBe(true);
    expect(isKeylessSigner('3f1c2a4b'.padEnd(64, '0'))).toBe(false);
    const labels = apply({}, signatureLabels(bindSignatures(D, [good({ format: 'bundle', verifiedBy: by, keyless: true })], AT)));
    expect(signatureRecord(labels)).toEqual({ verified: true, by, format: 'bundle', at: AT });
    expect(signatureBrief(signatureRecord(labels))).toBe('ops@example.org (bundle)');
    const long = keylessSigner('https://github.com/example-org/example-repo/.github/workflows/release.yml@refs/heads/main', 'https://token.actions.githubusercontent.com');
    expect(signatureBrief({ verified: true, by: long, format: 'bundle', at: AT })).toBe('https://github.com/example-org/… (bundle)');
  });

  it('a refused verdict round-trips with its reason, and clears a former signer', () => {
    const was = apply({}, signatureLabels(bindSignatures(D, [good()], AT)));
    const labels = apply(was, signatureLabels(bindSignatures(D, [], AT)));
    expect(labels[SIGNATURE_LABELS.by]).toBeUndefined();
    expect(signatureRecord(labels)).toEqual({ verified: false, reason: 'no signature', at: AT });
    expect(signatureBrief(signatureRecord(labels))).toBe('NOT VERIFIED');
  });

  it('no labels, or labels that do not add up, are no record', () => {
    expect(signatureRecord({})).toBeNull();
    expect(signatureRecord({ [SIGNATURE_LABELS.at]: AT, [SIGNATURE_LABELS.verified]: 'true' })).toBeNull();
    expect(signatureBrief(null)).toBe('-');
  });
});

describe('signatureSentence', () => {
  const fp = '3f1c2a4b'.padEnd(64, '0');
  it.each([
    [null, 'never verified'],
    [{ verified: true as const, by: fp, format: 'bundle' as const, at: '2026-12-08T10:00:00Z' }, 'signed by key 3f1c2a4b…, verified 2026-12-08'],
    [{ verified: true as const, by: 'ops@example.org (https://issuer.example)', format: 'bundle' as const, at: '2026-12-08T10:00:00Z' }, 'signed by ops@example.org (https://issuer.example), verified 2026-12-08'],
    [{ verified: false as const, reason: 'no signature', at: '2026-12-09T00:00:00Z' }, 'not verified: no signature (2026-12-09)'],
  ])('%j reads %s', (record, text) => {
    expect(signatureSentence(record)).toBe(text);
  });
});

describe('signatureCounts (the metrics)', () => {
  const verified = { verified: true as const, by: 'k1', format: 'bundle' as const, at: AT };
  const refused = { verified: false as const, reason: 'no signature', at: AT };
  const needed = { verdict: 'protected' as const, atRisk: false, needed: true, basis: 'provenance' as const, workloads: [], neededBecause: 'from an archive', because: 'kept' };
  const unneeded = { ...needed, verdict: 'reclaimable' as const, needed: false, basis: null, neededBecause: null };

  it('counts references by their record: never verified and refused alike are unverified', () => {
    const refs = [
      { name: 'r/a:1', signature: verified, need: needed },
      { name: 'r/b:1', signature: refused, need: needed },
      { name: 'r/c:1', signature: null, need: needed },
      { name: 'r/d:1', signature: null, need: unneeded },
      { name: 'r/e:1' },
    ];
    expect(signatureCounts(refs)).toEqual({ verified: 1, unverified: 4, neededUnverified: 2 });
  });

  it("leaves out CRI's own sha256:<id> record, which Holdfast never labels", () => {
    const refs = [
      { name: 'r/a:1', signature: verified, need: needed },
      { name: `sha256:${'c'.repeat(64)}`, signature: null, need: needed },
    ];
    expect(signatureCounts(refs)).toEqual({ verified: 1, unverified: 0, neededUnverified: 0 });
  });
});

describe('unverifiedImages: what verify lists as having no valid signature', () => {
  it('every image whose verdict is not verified, in order; a verdict straight from the binding rule reads as a sentence', () => {
    const img = (name: string, checks: SignatureCheck[]) => ({ name, refs: [name], digest: D, signature: bindSignatures(D, checks, AT) });
    const images = [img('a:1', [good()]), img('b:1', []), img('c:1', [check({})])];
    expect(unverifiedImages(images).map((i) => [i.name, signatureSentence(i.signature)])).toEqual([
      ['b:1', 'not verified: no signature (2026-12-08)'],
      ['c:1', 'not verified: signed, but not by any given key (2026-12-08)'],
    ]);
  });
});

describe('outcomeRecord: a fresh verdict reads like a recorded one', () => {
  it('keeps what the labels keep, and signatureSentence words it', () => {
    const fp = '3f1c2a4b'.padEnd(64, '0');
    const ok = outcomeRecord({ verified: true, by: fp, format: 'legacy', at: AT, reference: 'x/app' });
    expect(ok).toEqual({ verified: true, by: fp, format: 'legacy', at: AT });
    expect(signatureSentence(ok)).toBe('signed by key 3f1c2a4b…, verified 2026-12-08');
    const no = outcomeRecord({ verified: false, refusal: { kind: 'other-key' }, reason: 'signed, but not by any given key', at: AT });
    expect(signatureSentence(no)).toBe('not verified: signed, but not by any given key (2026-12-08)');
  });
});

describe('checkAllowsImport: what the check says of the import', () => {
  const verified: CheckedImage = { name: 'a:1', digest: D, verdict: { verified: true, by: 'k1', format: 'bundle', at: AT } };
  const unsigned: CheckedImage = { name: 'b:1', digest: OTHER, verdict: { verified: false, refusal: { kind: 'no-signature' }, reason: 'no signature', at: AT } };
  const renamed = (level: 'warning' | 'error'): CheckedImage => ({ ...verified, name: 'c:1', reference: { level, text: 'signed as x/c, imported as c:1' } });
  const allows = (images: CheckedImage[], allowUnsigned: boolean) => checkAllowsImport({ path: '/a.tar', images }, allowUnsigned);

  it('every image verified (a renamed one only warns): goes on', () => {
    expect(allows([verified, renamed('warning')], false)).toBe(true);
    expect([verified, renamed('warning')].some(isRefused)).toBe(false);
  });
  it('an unsigned image blocks, unless unsigned images are allowed', () => {
    expect(isRefused(unsigned)).toBe(true);
    expect(allows([verified, unsigned], false)).toBe(false);
    expect(allows([verified, unsigned], true)).toBe(true);
  });
  it('a strict reference mismatch blocks even with unsigned images allowed', () => {
    expect(isRefused(renamed('error'))).toBe(true);
    expect(allows([renamed('error')], true)).toBe(false);
  });
});

describe('unverifiedImageCount: images on a node without a verified signature', () => {
  const verified = { verified: true as const, by: 'k1', format: 'bundle' as const, at: AT };
  it('counts images (not references) none of whose references records a verified signature', () => {
    expect(
      unverifiedImageCount([
        { imageId: 'i1', digest: D, signature: verified },
        // CRI's id record of the same image has no labels: the image is still verified.
        { imageId: 'i1', digest: D, signature: null },
        { imageId: 'i2', digest: OTHER, signature: { verified: false, reason: 'no signature', at: AT } },
        { imageId: null, digest: OTHER },
      ]),
    ).toBe(2);
    expect(unverifiedImageCount([])).toBe(0);
  });
});
