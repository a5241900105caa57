import { generateKeyPairSync, sign } from 'node:crypto';
import { ed25519ph } from '@noble/curves/ed25519';
import { describe, expect, it } from 'vitest';
import { parsePublicKey, signatureShaped, verifyEd25519ph, verifyWith } from '../../../../src/core/signatures/keys';

const pairs = {
  'ECDSA P-256': generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  'ECDSA P-521': generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  'RSA 2048': generateKeyPairSync('rsa', { modulusLength: 2048 }),
  Ed25519: generateKeyPairSync('ed25519'),
};
const payload = Buffer.from('{"critical":{}}');
const pem = (p: (typeof pairs)[keyof typeof pairs]) => p.publicKey.export({ type: 'spki', format: 'pem' });

describe('public keys as technicians carry them', () => {
  for (const [name, pair] of Object.entries(pairs)) {
    it(`${name}: a signature verifies, a flipped one does not, another key's does not`, () => {
      const key = parsePublicKey(pem(pair), 'k.pub');
      const other = parsePublicKey(pem(name === 'Ed25519' ? pairs['ECDSA P-256'] : pairs.Ed25519), 'o.pub');
      const sig = sign(key.kind === 'ed25519' ? null : 'sha256', payload, pair.privateKey);
      expect(signatureShaped(sig)).toBe(true);
      expect(verifyWith(key, payload, sig)).toBe(true);
      const flipped = Buffer.from(sig);
      flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 1;
      expect(verifyWith(key, payload, flipped)).toBe(false);
      expect(verifyWith(other, payload, sig)).toBe(false);
    });
  }

  it('a signature shape: DER ECDSA, 64 bytes, or an RSA length; anything else is tampering', () => {
    const der = sign('sha256', payload, pairs['ECDSA P-256'].privateKey);
    expect(signatureShaped(der)).toBe(true);
    expect(signatureShaped(Buffer.concat([der, Buffer.from([0])]))).toBe(false);
    const broken = Buffer.from(der);
    broken[0] = 0x31;
    expect(signatureShaped(broken)).toBe(false);
    expect(signatureShaped(Buffer.alloc(64))).toBe(true);
    expect(signatureShaped(Buffer.alloc(100))).toBe(false);
    expect(signatureShaped(Buffer.alloc(256))).toBe(true);
    expect(signatureShaped(Buffer.from('not a signature'))).toBe(false);
  });

  it('Ed25519ph (how cosign 3 signs with an Ed25519 key) verifies too, and only with its key', () => {
    const secret = ed25519ph.utils.randomPrivateKey();
    const pub = Buffer.from(ed25519ph.getPublicKey(secret));
    // A raw Ed25519 key in a DER SubjectPublicKeyInfo (RFC 8410's fixed 12-byte prefix), as PEM.
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]);
    const key = parsePublicKey(`-----BEGIN PUBLIC KEY-----\n${spki.toString('base64')}\n-----END PUBLIC KEY-----\n`, 'ed.pub');
    const sig = Buffer.from(ed25519ph.sign(payload, secret));
    expect(verifyWith(key, payload, sig)).toBe(true);
    expect(verifyEd25519ph(key, payload, sig)).toBe(true);
    expect(verifyWith(key, Buffer.from('{"critical":{}} '), sig)).toBe(false);
    expect(verifyWith(parsePublicKey(pem(pairs.Ed25519), 'other.pub'), payload, sig)).toBe(false);
    expect(verifyEd25519ph(parsePublicKey(pem(pairs['ECDSA P-256']), 'ec.pub'), payload, sig)).toBe(false);
  });

  it('is named by the SHA-256 of its DER public key, hex and base64 (a bundle hint)', () => {
    const key = parsePublicKey(pem(pairs['ECDSA P-256']), 'k.pub');
    expect(key.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(key.hint, 'base64').toString('hex')).toBe(key.fingerprint);
  });

  it('refuses what is not a PEM public key, or a kind it does not verify with', () => {
    expect(() => parsePublicKey('not a key', 'junk.pub')).toThrow(/junk\.pub: not a PEM public key/);
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' });
    expect(() => parsePublicKey(x25519, 'x.pub')).toThrow(/x\.pub: a x25519 key; Holdfast verifies with ECDSA, RSA and Ed25519 keys/);
  });
});
