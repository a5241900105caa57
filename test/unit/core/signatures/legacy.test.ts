import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parsePublicKey } from '../../../../src/core/signatures/keys';
import { checkPayload } from '../../../../src/core/signatures/legacy';

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
