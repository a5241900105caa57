// Offline signature verification (#48) against what cosign 3 and oras really write: images
// pushed to Debian's docker-registry, signed in both formats, copied into an OCI layout
// (lab/signing.ts, in a loopback-only network namespace). Tampered layouts are made the way an
// attacker would: the changed blob re-hashed and every descriptor above it rewritten.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../lab/exec';
import { makeSigningFixtures, type SigningFixtures } from '../../lab/signing';
import { readArchiveSignatures } from '../../src/core/signatures/archive';
import { readPublicKey, type GivenKey } from '../../src/core/signatures/keys';
import { REF_NAME, SignatureLayout, type Descriptor, type OciManifest } from '../../src/core/signatures/layout';
import { readBundleFiles, verifyImageSignatures } from '../../src/core/signatures/verify';
import { legacySignatureTag, referenceMismatch, type SignatureOutcome } from '../../src/shared/signatures';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-signing-'));
let fx: SigningFixtures;
let keyA: GivenKey;
let keyB: GivenKey;

beforeAll(async () => {
  fx = await makeSigningFixtures(dir);
  keyA = await readPublicKey(fx.keys.a.pub);
  keyB = await readPublicKey(fx.keys.b.pub);
}, 300_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

/** A copy of the lab's layout to tamper with. */
let copies = 0;
function copyLayout(): string {
  const to = path.join(dir, `tampered-${++copies}`);
  cpSync(fx.layout, to, { recursive: true });
  return to;
}

const blobPath = (layout: string, digest: string): string => path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Writes `data` as a blob; returns its descriptor fields. */
function putBlob(layout: string, data: Buffer): { digest: string; size: number } {
  writeFileSync(blobPath(layout, sha256(data)), data);
  return { digest: sha256(data), size: data.length };
}

function rewriteIndex(layout: string, edit: (entries: Descriptor[]) => Descriptor[]): void {
  const file = path.join(layout, 'index.json');
  const index = readJson<{ manifests: Descriptor[] }>(file);
  writeFileSync(file, JSON.stringify({ ...index, manifests: edit(index.manifests) }));
}

/** Replaces an index entry's manifest with `edit(manifest)`, re-hashed. */
function editManifest(layout: string, entry: Descriptor, edit: (m: OciManifest) => OciManifest): Descriptor {
  const m = edit(readJson<OciManifest>(blobPath(layout, entry.digest)));
  const next = { ...entry, ...putBlob(layout, Buffer.from(JSON.stringify(m))) };
  rewriteIndex(layout, (es) => es.map((e) => (e.digest === entry.digest ? next : e)));
  return next;
}

function flip(b64: string, at: number): string {
  const sig = Buffer.from(b64, 'base64');
  sig[at] = sig[at]! ^ 0x01;
  return sig.toString('base64');
}

async function verdict(layout: string, digest: string, keys: GivenKey[]): Promise<SignatureOutcome> {
  return verifyImageSignatures(digest, keys, { layout: await SignatureLayout.open(layout) });
}

const legacyEntry = (layout: SignatureLayout): Descriptor => layout.tagged(legacySignatureTag(fx.images.legacy.digest))[0]!;

async function bundleReferrer(layoutDir: string, digest: string): Promise<Descriptor> {
  const refs = await (await SignatureLayout.open(layoutDir)).referrersOf(digest);
  expect(refs).toHaveLength(1);
  return refs[0]!.entry;
}

describe('signatures cosign 3 made, read from the OCI layout oras wrote', () => {
  it('both formats verify with the right key, named by its fingerprint', async () => {
    for (const img of [fx.images.legacy, fx.images.bundle]) {
      const v = await verdict(fx.layout, img.digest, [keyB, keyA]);
      expect(v).toMatchObject({ verified: true, by: keyA.fingerprint, format: img === fx.images.legacy ? 'legacy' : 'bundle' });
    }
    const fp = createHash('sha256').update(readFileSync(fx.keys.a.pub, 'utf8').replace(/-----[A-Z ]+-----|\s/g, ''), 'base64').digest('hex');
    expect(keyA.fingerprint).toBe(fp);
  });

  for (const kind of ['rsa', 'ed25519'] as const) {
    it(`an ${kind} key imported into cosign verifies in both formats, and only with its own key`, async () => {
      const key = await readPublicKey(fx.keys[kind].pub);
      expect(key.kind).toBe(kind);
      for (const format of ['legacy', 'bundle'] as const) {
        const img = fx.imported[kind][format];
        expect(await verdict(fx.layout, img.digest, [keyA, key])).toMatchObject({ verified: true, by: key.fingerprint, format });
        expect(await verdict(fx.layout, img.digest, [keyA])).toMatchObject({ verified: false, reason: 'signed, but not by any given key' });
      }
    });
  }

  it("the legacy payload's docker-reference is shown, and checked against the imported name", async () => {
    const v = await verdict(fx.layout, fx.images.legacy.digest, [keyA]);
    const reference = v.verified ? v.reference : undefined;
    expect(reference).toMatch(/^127\.0\.0\.1:\d+\/legacy$/);
    expect(referenceMismatch(`${reference}:1`, reference, true)).toBeNull();
    expect(referenceMismatch('mirror.site/legacy:1', reference, true)).toEqual({ level: 'error', text: `signed as ${reference}, imported as mirror.site/legacy:1` });
  });

  it('the other key: "signed, but not by any given key"', async () => {
    for (const img of [fx.images.legacy, fx.images.bundle, fx.images.index]) {
      expect(await verdict(fx.layout, img.digest, [keyB])).toMatchObject({ verified: false, reason: 'signed, but not by any given key' });
    }
  });

  it('unsigned: "no signature"', async () => {
    expect(await verdict(fx.layout, fx.images.unsigned.digest, [keyA, keyB])).toMatchObject({ verified: false, reason: 'no signature' });
  });

  it('an index is verified as the digest of the index, not of its platform manifests', async () => {
    expect(await verdict(fx.layout, fx.images.index.digest, [keyA])).toMatchObject({ verified: true, format: 'bundle', by: keyA.fingerprint });
    const index = readJson<{ manifests: Descriptor[] }>(blobPath(fx.layout, fx.images.index.digest));
    expect(index.manifests).toHaveLength(2);
    for (const child of index.manifests) {
      expect(await verdict(fx.layout, child.digest, [keyA])).toMatchObject({ verified: false, reason: 'no signature' });
    }
  });

  it("cosign's detached bundle (sign --bundle) verifies on its own, matched by the digest it signs", async () => {
    const bundles = await readBundleFiles([fx.bundleFile]);
    expect(await verifyImageSignatures(fx.images.bundle.digest, [keyA], { bundles })).toMatchObject({ verified: true, format: 'bundle' });
    expect(await verifyImageSignatures(fx.images.legacy.digest, [keyA], { bundles })).toMatchObject({ verified: false, reason: 'no signature' });
  });
});

describe('tampered signatures', () => {
  /** A copy of the layout whose legacy signature has the byte at `offset` flipped. */
  async function withLegacySignatureFlipped(offset: number): Promise<string> {
    const copy = copyLayout();
    const entry = legacyEntry(await SignatureLayout.open(copy));
    editManifest(copy, entry, (m) => {
      const layer = m.layers![0]!;
      const ann = layer.annotations!;
      return { ...m, layers: [{ ...layer, annotations: { ...ann, 'dev.cosignproject.cosign/signature': flip(ann['dev.cosignproject.cosign/signature']!, offset) } }] };
    });
    return copy;
  }

  it('a flipped byte in the legacy signature\'s DER structure: "signature does not verify"', async () => {
    const copy = await withLegacySignatureFlipped(0);
    expect(await verdict(copy, fx.images.legacy.digest, [keyA])).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it('a flipped byte inside the legacy signature\'s value is refused too (a legacy signature names no signer)', async () => {
    const copy = await withLegacySignatureFlipped(20);
    expect(await verdict(copy, fx.images.legacy.digest, [keyA])).toMatchObject({ verified: false, reason: 'signed, but not by any given key' });
  });

  it('a flipped byte in the bundle\'s DSSE signature: "signature does not verify"', async () => {
    const copy = copyLayout();
    const entry = await bundleReferrer(copy, fx.images.bundle.digest);
    editManifest(copy, entry, (m) => {
      const layer = m.layers![0]!;
      const bundle = readJson<{ dsseEnvelope: { signatures: { sig: string }[] } }>(blobPath(copy, layer.digest));
      bundle.dsseEnvelope.signatures[0]!.sig = flip(bundle.dsseEnvelope.signatures[0]!.sig, 20);
      return { ...m, layers: [{ ...layer, ...putBlob(copy, Buffer.from(JSON.stringify(bundle))) }] };
    });
    expect(await verdict(copy, fx.images.bundle.digest, [keyA])).toMatchObject({ verified: false, reason: 'signature does not verify' });
    expect(await verdict(copy, fx.images.bundle.digest, [keyB])).toMatchObject({ verified: false, reason: 'signed, but not by any given key' });
  });

  it('a bundle blob that does not match its digest: "signature does not verify"', async () => {
    const copy = copyLayout();
    const entry = await bundleReferrer(copy, fx.images.bundle.digest);
    const layer = readJson<OciManifest>(blobPath(copy, entry.digest)).layers![0]!;
    const raw = readFileSync(blobPath(copy, layer.digest));
    raw[raw.length - 3] = raw[raw.length - 3]! ^ 0x01;
    writeFileSync(blobPath(copy, layer.digest), raw);
    expect(await verdict(copy, fx.images.bundle.digest, [keyA])).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it("a legacy signature moved to another image's tag: \"signature is for sha256:… not for this image\"", async () => {
    const copy = copyLayout();
    const entry = legacyEntry(await SignatureLayout.open(copy));
    rewriteIndex(copy, (es) => [...es, { ...entry, annotations: { [REF_NAME]: legacySignatureTag(fx.images.unsigned.digest) } }]);
    expect(await verdict(copy, fx.images.unsigned.digest, [keyA])).toMatchObject({ verified: false, reason: `signature is for ${fx.images.legacy.digest} not for this image` });
  });

  it('a bundle referrer moved to another image: "signature is for sha256:… not for this image"', async () => {
    const copy = copyLayout();
    const entry = await bundleReferrer(copy, fx.images.bundle.digest);
    const unsigned = fx.images.unsigned.digest;
    editManifest(copy, entry, (m) => ({ ...m, subject: { ...m.subject!, digest: unsigned } }));
    expect(await verdict(copy, unsigned, [keyA])).toMatchObject({ verified: false, reason: `signature is for ${fx.images.bundle.digest} not for this image` });
  });
});

describe('the same layout as an archive (a tar of it, compressed or not)', () => {
  for (const suffix of ['.tar', '.tar.gz']) {
    it(`${suffix}: the same verdicts, and the signature manifests are known apart from images`, async () => {
      const file = path.join(dir, `layout${suffix}`);
      await run(['tar', suffix === '.tar' ? '-cf' : '-czf', file, '-C', fx.layout, '.']);
      const { index, layout } = await readArchiveSignatures(file);
      const want = { legacy: 'legacy', bundle: 'bundle', index: 'bundle' } as const;
      for (const [name, format] of Object.entries(want)) {
        const img = index.images.find((i) => i.name === name)!;
        expect(await verifyImageSignatures(img.targetDigest!, [keyA], { layout })).toMatchObject({ verified: true, format });
      }
      const unsigned = index.images.find((i) => i.name === 'unsigned')!;
      expect(await verifyImageSignatures(unsigned.targetDigest!, [keyA], { layout })).toMatchObject({ verified: false, reason: 'no signature' });
      // Four referrers (bundle, index, two imported-key bundles) and three .sig tags; the two
      // unnamed entries left are the index's platform manifests, which oras lists on their own.
      const sigs = await layout.signatureManifests();
      const images = index.images.filter((i) => i.targetDigest && !sigs.has(i.targetDigest));
      const imported = ['rsa-legacy', 'rsa-bundle', 'ed25519-legacy', 'ed25519-bundle'];
      expect(images.map((i) => i.name ?? '(unnamed)').sort()).toEqual(['bundle', 'index', 'legacy', 'unsigned', ...imported, '(unnamed)', '(unnamed)'].sort());
      expect(sigs.size).toBe(7);
    });
  }
});
