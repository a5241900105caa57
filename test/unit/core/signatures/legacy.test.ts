import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePublicKey } from '../../../../src/core/signatures/keys';
import { SignatureLayout } from '../../../../src/core/signatures/layout';
import { checkPayload, legacyChecks } from '../../../../src/core/signatures/legacy';
import { legacySignatureTag } from '../../../../src/shared/signatures';

const D = 'sha256:' + 'c'.repeat(64);
const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const key = parsePublicKey(pair.publicKey.export({ type: 'spki', format: 'pem' }), 'k.pub');
const other = parsePublicKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }), 'o.pub');
const payload = Buffer.from(JSON.stringify({ critical: { identity: { 'docker-reference': 'reg.example/app' }, image: { 'docker-manifest-digest': D }, type: 'cosign container image signature' }, optional: null }));
const sig = sign('sha256', payload, pair.privateKey);

describe('legacy simple-signing payloads', () => {
  it('verified: the key, the digest and the reference the payload names', () => {
    expect(checkPayload(payload, sig, [other, key])).toEqual({ format: 'legacy', verifiedBy: key.fingerprint, claimsGivenKey: true, signedDigests: [D], reference: 'reg.example/app' });
  });

  it('another key: unverified, and what the payload names is not read', () => {
    expect(checkPayload(payload, sig, [other])).toEqual({ format: 'legacy', verifiedBy: null, claimsGivenKey: false, signedDigests: [] });
  });

  it("an RSA signature checked with ECDSA keys only is another key's, not tampering", () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(checkPayload(payload, sign('sha256', payload, rsa.privateKey), [key])).toMatchObject({ verifiedBy: null, claimsGivenKey: false });
  });

  it('a malformed signature is tampering whatever the keys', () => {
    expect(checkPayload(payload, Buffer.from('not a signature'), [other])).toMatchObject({ verifiedBy: null, claimsGivenKey: true });
  });

  it('a payload changed after signing does not verify', () => {
    const changed = Buffer.from(payload.toString().replace('c', 'd'));
    expect(checkPayload(changed, sig, [key])).toMatchObject({ verifiedBy: null, signedDigests: [] });
  });
});

describe('legacyChecks', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-siglegacy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses an image with 101 legacy signatures before reading any payload', async () => {
    // The payload blobs do not exist: reading even one would fail with ENOENT instead.
    const layer = (i: number) => ({ mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json', digest: `sha256:${i.toString(16).padStart(64, '0')}`, size: 200, annotations: { 'dev.cosignproject.cosign/signature': 'AAAA' } });
    const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, layers: Array.from({ length: 101 }, (_, i) => layer(i)) }));
    const digest = 'sha256:' + createHash('sha256').update(manifest).digest('hex');
    mkdirSync(path.join(dir, 'blobs', 'sha256'), { recursive: true });
    writeFileSync(path.join(dir, 'blobs', 'sha256', digest.slice(7)), manifest);
    const entry = { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest, size: manifest.length, annotations: { 'org.opencontainers.image.ref.name': legacySignatureTag(D) } };
    writeFileSync(path.join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [entry] }));
    await expect(legacyChecks(await SignatureLayout.open(dir), D, [key])).rejects.toThrow(`${D}: 101 legacy signatures: over the limit signature.perImage (100).`);
  });
});
