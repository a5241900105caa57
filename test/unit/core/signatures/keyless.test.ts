// Keyless bundles (#48) from @sigstore/mock's CA, log and timestamp authority, verified offline
// against the trusted root made for them, and judged by the binding rule.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeCA } from '@sigstore/mock';
import { generateKeyPairSync } from 'node:crypto';
import { parseTrustedRoot, readTrustedRoot, type KeylessPolicy } from '../../../../src/core/signatures/keyless';
import { verifyImageSignatures } from '../../../../src/core/signatures/verify';
import { HoldfastError } from '../../../../src/core/errors';
import { mockSigstore, signKeyless, trustedRoot, type MockSigstore } from '../../../support/keyless';

const DIGEST = 'sha256:' + 'ab'.repeat(32);
const OTHER = 'sha256:' + 'cd'.repeat(32);
const ID = 'https://ci.example.org/release.yml@refs/heads/main';
const ISSUER = 'https://issuer.example';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-keyless-'));
let m: MockSigstore;
let trust: KeylessPolicy['trust'];

beforeAll(async () => {
  m = await mockSigstore();
  trust = parseTrustedRoot(Buffer.from(JSON.stringify(trustedRoot(m))), 'trusted_root.json');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Who = { identity?: string; identityRegexp?: string; issuer?: string };
/** One identity (by default ID from ISSUER), against `over.trust` or the mock's trusted root. */
const policy = (who: Who = {}, over: Partial<KeylessPolicy> = {}): KeylessPolicy => {
  const id = who.identityRegexp !== undefined ? { identityRegexp: who.identityRegexp } : { identity: who.identity ?? ID };
  return { identities: [{ ...id, issuer: who.issuer ?? ISSUER }], trust, ...over };
};
const verdict = (bundle: Buffer, p: KeylessPolicy = policy(), digest = DIGEST) => verifyImageSignatures(digest, [], { bundles: [bundle] }, new Date('2026-12-08T00:00:00Z'), p);
const sign = (o: { identity?: string; issuer?: string; tlog?: boolean; tsa?: boolean; chain?: Buffer[] } = {}, mock = m) => signKeyless(mock, DIGEST, { identity: ID, issuer: ISSUER, ...o });

/** The bundle with `edit` applied to its parsed JSON. */
function edited(bundle: Buffer, edit: (b: { dsseEnvelope: { payload: string; signatures: { sig: string }[] }; verificationMaterial: { tlogEntries: { canonicalizedBody: string }[] } }) => void): Buffer {
  const b = JSON.parse(bundle.toString('utf8'));
  edit(b);
  return Buffer.from(JSON.stringify(b));
}
const flip = (b64: string): string => {
  const raw = Buffer.from(b64, 'base64');
  raw.writeUInt8(raw.readUInt8(raw.length - 1) ^ 1, raw.length - 1);
  return raw.toString('base64');
};

describe('keyless verification with @sigstore/verify', () => {
  it('the right identity and issuer verify; by names both', async () => {
    expect(await verdict(await sign())).toEqual({ verified: true, by: `${ID} (${ISSUER})`, format: 'bundle', at: '2026-12-08T00:00:00.000Z' });
  });

  it('a regular expression matches the identity', async () => {
    const bundle = await sign();
    expect(await verdict(bundle, policy({ identityRegexp: '^https://ci\\.example\\.org/' }))).toMatchObject({ verified: true, by: `${ID} (${ISSUER})` });
    expect(await verdict(bundle, policy({ identityRegexp: '^https://other\\.example/' }))).toMatchObject({ verified: false, reason: 'signed, but not by a given identity' });
  });

  it('an exact identity is not a pattern: a prefix or a dot does not match', async () => {
    const bundle = await sign();
    expect(await verdict(bundle, policy({ identity: 'https://ci.example.org/' }))).toMatchObject({ verified: false, refusal: { kind: 'other-identity' } });
    // Unescaped, the dots in ID would match any character.
    expect(await verdict(await sign({ identity: ID.replace('ci.example', 'ciXexample') }))).toMatchObject({ verified: false, refusal: { kind: 'other-identity' } });
  });

  it('any one of several identities suffices', async () => {
    const two = policy({}, { identities: [{ identity: 'ops@example.org', issuer: ISSUER }, { identityRegexp: '^https://ci\\.example\\.org/', issuer: ISSUER }] });
    expect(await verdict(await sign(), two)).toMatchObject({ verified: true, by: `${ID} (${ISSUER})` });
  });

  it('another identity, another issuer', async () => {
    expect(await verdict(await sign({ identity: 'https://ci.example.org/evil.yml' }))).toMatchObject({ verified: false, reason: 'signed, but not by a given identity' });
    expect(await verdict(await sign({ issuer: 'https://other-issuer.example' }))).toMatchObject({ verified: false, reason: 'signed, but not by a given identity' });
  });

  it('a certificate from a CA the trusted root does not name', async () => {
    const stranger = { ...m, ca: await initializeCA(generateKeyPairSync('ec', { namedCurve: 'P-256' })) };
    expect(await verdict(await sign({}, stranger))).toMatchObject({ verified: false, reason: 'signed, but not by a given identity' });
  });

  it('a flipped byte in the DSSE signature or payload does not verify', async () => {
    const bundle = await sign();
    expect(await verdict(edited(bundle, (b) => (b.dsseEnvelope.signatures[0]!.sig = flip(b.dsseEnvelope.signatures[0]!.sig))))).toMatchObject({ verified: false, reason: 'signature does not verify' });
    // With only a timestamp over the signature, the signature check itself is what fails.
    const stamped = await sign({ tlog: false });
    const payload = edited(stamped, (b) => (b.dsseEnvelope.payload = Buffer.from(Buffer.from(b.dsseEnvelope.payload, 'base64').toString().replace('"predicate":{}', '"predicate":{"x":1}')).toString('base64')));
    expect(await verdict(payload)).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it('a transparency-log entry is checked against the trusted root', async () => {
    const logged = await sign({ tsa: false });
    expect(await verdict(logged)).toMatchObject({ verified: true });
    const body = edited(logged, (b) => (b.verificationMaterial.tlogEntries[0]!.canonicalizedBody = flip(b.verificationMaterial.tlogEntries[0]!.canonicalizedBody)));
    expect(await verdict(body)).toMatchObject({ verified: false, reason: 'signature does not verify' });
    const noLog = parseTrustedRoot(Buffer.from(JSON.stringify({ ...trustedRoot(m), tlogs: [] })), 'root');
    expect(await verdict(logged, policy({}, { trust: noLog }))).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it('a timestamp alone verifies; no timestamp at all does not', async () => {
    expect(await verdict(await sign({ tlog: false }))).toMatchObject({ verified: true });
    expect(await verdict(await sign({ tlog: false, tsa: false }))).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it('binds to the digest it signs; keys alone do not verify it', async () => {
    const bundle = await sign();
    expect(await verifyImageSignatures(OTHER, [], { bundles: [bundle] }, new Date(), policy())).toMatchObject({ verified: false, reason: 'no signature' });
    expect(await verifyImageSignatures(DIGEST, [], { bundles: [bundle] })).toMatchObject({ verified: false, reason: 'signed, but not by a given identity' });
  });
});

describe('the trusted root and the chain bound', () => {
  const file = (name: string, data: unknown): string => {
    const f = path.join(dir, name);
    writeFileSync(f, typeof data === 'string' ? data : JSON.stringify(data));
    return f;
  };
  let deep: Buffer[];
  beforeAll(async () => {
    deep = [];
    for (let i = 0; i < 50; i++) deep.push((await initializeCA(generateKeyPairSync('ec', { namedCurve: 'P-256' }))).rootCertificate);
  });

  it('reads a trusted root file, and refuses what is not one', async () => {
    expect((await readTrustedRoot(file('ok.json', trustedRoot(m)))).certificateAuthorities).toHaveLength(1);
    await expect(readTrustedRoot(file('bad.json', '{'))).rejects.toThrow(/bad\.json: not a Sigstore trusted root/);
    await expect(readTrustedRoot(file('other.json', { mediaType: 'application/json' }))).rejects.toThrow(/no trusted root mediaType/);
    await expect(readTrustedRoot(path.join(dir, 'absent.json'))).rejects.toThrow(/cannot read a Sigstore trusted root/);
  });

  it('a trusted root whose CA chain is 50 deep is refused by the limit', async () => {
    const e = await readTrustedRoot(file('deep.json', trustedRoot(m, deep))).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as Error).message).toMatch(/certificate authority 1 has a certificate chain of 50 certificates.*signature\.chain/);
  });

  it('a bundle naming a 50-deep chain is refused by the limit', async () => {
    const e = await verdict(await sign({ chain: deep.slice(1) })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as Error).message).toMatch(/a Sigstore bundle has a certificate chain of 50 certificates.*signature\.chain/);
  });

  it('a bundle naming a short chain is verified by its leaf', async () => {
    expect(await verdict(await sign({ chain: [m.ca.rootCertificate] }))).toMatchObject({ verified: true });
  });
});
