import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HoldfastError } from '../../../../src/core/errors';
import { CHECK_BEFORE_TRUST, normalizeFingerprint, verifyHostKey } from '../../../../src/core/ssh/hostKey';
import { hostKeyFingerprint } from '../../../../src/core/ssh/knownHosts';
import { orderHostKeyAlgorithms } from '../../../../src/core/ssh/hostKeyAlgorithms';

const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
function pub(name: string): { type: string; b64: string; blob: Buffer } {
  const [type, b64] = readFileSync(path.join(FIX, name), 'utf8').trim().split(' ');
  return { type: type!, b64: b64!, blob: Buffer.from(b64!, 'base64') };
}
const A = pub('host_ed25519.pub');
const B = pub('host_ed25519_b.pub');
const C = pub('host_ecdsa.pub');

async function rejection(p: Promise<unknown>): Promise<HoldfastError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(HoldfastError);
    return err as HoldfastError;
  }
  throw new Error('expected a rejection');
}

/** `file`: a known_hosts path in a new, empty directory for each test of the calling suite. */
let dir: string;
let file: string;
function freshKnownHostsFile(): void {
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-hk-'));
    file = path.join(dir, 'known_hosts');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
}

describe('verifyHostKey', () => {
  freshKnownHostsFile();

  const base = () => ({ knownHostsFile: file, host: '10.0.0.5', port: 22, keyBlob: A.blob, acceptNew: false as boolean | string });

  it('accepts a key on record', async () => {
    writeFileSync(file, `# c\n10.0.0.5 ${A.type} ${A.b64}\n`);
    await expect(verifyHostKey(base())).resolves.toEqual({ status: 'known', fingerprint: hostKeyFingerprint(A.blob), keyType: 'ssh-ed25519', line: 2 });
  });

  it('refuses an unknown host (missing file) with the fingerprint and a hint, and writes nothing', async () => {
    const err = await rejection(verifyHostKey(base()));
    expect(err.code).toBe('HOST_KEY_UNKNOWN');
    expect(err.fingerprint).toBe(hostKeyFingerprint(A.blob));
    expect(err.message).toContain(hostKeyFingerprint(A.blob));
    // How to trust it is worded where it is read (the CLI's command, the app's button), from the data.
    expect(err.hint).toBe(CHECK_BEFORE_TRUST);
    expect(() => readFileSync(file)).toThrow();
  });

  it('records an unknown host when acceptNew is true, then knows it', async () => {
    await expect(verifyHostKey({ ...base(), port: 2222, acceptNew: true })).resolves.toMatchObject({ status: 'recorded' });
    expect(readFileSync(file, 'utf8')).toBe(`[10.0.0.5]:2222 ${A.type} ${A.b64}\n`);
    await expect(verifyHostKey({ ...base(), port: 2222 })).resolves.toMatchObject({ status: 'known', line: 1 });
    // Same host, other port: still unknown.
    expect((await rejection(verifyHostKey(base()))).code).toBe('HOST_KEY_UNKNOWN');
  });

  it('records an unknown host only when the accepted fingerprint is the presented one', async () => {
    const fp = hostKeyFingerprint(A.blob);
    const wrong = await rejection(verifyHostKey({ ...base(), acceptNew: hostKeyFingerprint(B.blob) }));
    expect(wrong.code).toBe('HOST_KEY_UNKNOWN');
    expect(wrong.message).toContain('not the fingerprint you accepted');
    expect(() => readFileSync(file)).toThrow();
    // Pasted without the prefix or with base64 padding: still the same fingerprint.
    await expect(verifyHostKey({ ...base(), acceptNew: `${fp.slice('SHA256:'.length)}=` })).resolves.toMatchObject({ status: 'recorded', fingerprint: fp });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('refuses a changed key of the same type even with acceptNew, naming file and line', async () => {
    writeFileSync(file, `other ${C.type} ${C.b64}\n10.0.0.5 ${B.type} ${B.b64}\n`);
    for (const acceptNew of [false, true, hostKeyFingerprint(A.blob)]) {
      const err = await rejection(verifyHostKey({ ...base(), acceptNew }));
      expect(err.code).toBe('HOST_KEY_CHANGED');
      expect(err.fingerprint).toBe(hostKeyFingerprint(A.blob));
      expect(err.expectedFingerprint).toBe(hostKeyFingerprint(B.blob));
      expect(err.message).toContain(hostKeyFingerprint(A.blob));
      expect(err.hint).toContain(`${file} line 2`);
    }
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
  });

  it('treats a host on record with only other key types as changed', async () => {
    writeFileSync(file, `10.0.0.5 ${C.type} ${C.b64}\n`);
    const err = await rejection(verifyHostKey({ ...base(), acceptNew: true }));
    expect(err.code).toBe('HOST_KEY_CHANGED');
    expect(err.expectedFingerprint).toBe(hostKeyFingerprint(C.blob));
  });

  it('accepts when any of several recorded keys matches', async () => {
    writeFileSync(file, `10.0.0.5 ${C.type} ${C.b64}\n10.0.0.5,node ${A.type} ${A.b64}\n`);
    await expect(verifyHostKey(base())).resolves.toMatchObject({ status: 'known', line: 2 });
  });

  it('refuses a revoked key even if it is also on record or acceptNew is set', async () => {
    writeFileSync(file, `@revoked * ${A.type} ${A.b64}\n10.0.0.5 ${A.type} ${A.b64}\n`);
    const err = await rejection(verifyHostKey({ ...base(), acceptNew: true }));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toContain('@revoked');
    const err2 = await rejection(verifyHostKey({ ...base(), host: 'brand-new', acceptNew: true }));
    expect(err2.code).toBe('REFUSED');
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
  });

  it('ignores @cert-authority lines (host stays unknown)', async () => {
    writeFileSync(file, `@cert-authority * ${A.type} ${A.b64}\n`);
    expect((await rejection(verifyHostKey(base()))).code).toBe('HOST_KEY_UNKNOWN');
  });

  it('matches hashed entries', async () => {
    // Line 14 of the fixture is `ssh-keygen -H` of "hashed.example.com" with key A.
    writeFileSync(file, readFileSync(path.join(FIX, 'known_hosts')));
    await expect(verifyHostKey({ ...base(), host: 'hashed.example.com' })).resolves.toMatchObject({ status: 'known', line: 14 });
    expect((await rejection(verifyHostKey({ ...base(), host: 'hashed.example.com', keyBlob: B.blob }))).code).toBe('HOST_KEY_CHANGED');
  });

  it('parallel first connections record the host once', async () => {
    await Promise.all([1, 2, 3, 4].map(() => verifyHostKey({ ...base(), acceptNew: true })));
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('normalizeFingerprint', () => {
    expect(normalizeFingerprint(' SHA256:abc= ')).toBe('SHA256:abc');
    expect(normalizeFingerprint('abc')).toBe('SHA256:abc');
  });
});

describe('accepting a new host key (issue #11: only the key the user checked)', () => {
  freshKnownHostsFile();
  const base = { host: '10.0.0.7', port: 22, keyBlob: A.blob };

  it('several fingerprints (one per hop): records a key that has one of them, refuses one that has none, with the flag to add', async () => {
    const others = [hostKeyFingerprint(B.blob), hostKeyFingerprint(C.blob)];
    const err = await rejection(verifyHostKey({ ...base, knownHostsFile: file, acceptNew: others }));
    expect(err.code).toBe('HOST_KEY_UNKNOWN');
    expect(err.message).toContain('not any of the fingerprints you accepted');
    expect(err.fingerprint).toBe(hostKeyFingerprint(A.blob));
    expect(err.hint).toContain('before you trust it too');
    expect(() => readFileSync(file)).toThrow();
    await expect(verifyHostKey({ ...base, knownHostsFile: file, acceptNew: [...others, hostKeyFingerprint(A.blob)] })).resolves.toMatchObject({ status: 'recorded' });
    expect(readFileSync(file, 'utf8')).toBe(`10.0.0.7 ${A.type} ${A.b64}\n`);
  });

  it('a question: asked with the presented key; no → nothing recorded; yes → recorded', async () => {
    const asked: string[] = [];
    const no = await rejection(verifyHostKey({ ...base, knownHostsFile: file, label: 'jump host j (10.0.0.7:22)', acceptNew: async (k) => (asked.push(`${k.label} ${k.keyType} ${k.fingerprint}`), false) }));
    expect(no.code).toBe('HOST_KEY_UNKNOWN');
    expect(no.fingerprint).toBe(hostKeyFingerprint(A.blob));
    expect(no.hint).toBe(CHECK_BEFORE_TRUST);
    expect(asked).toEqual([`jump host j (10.0.0.7:22) ssh-ed25519 ${hostKeyFingerprint(A.blob)}`]);
    expect(() => readFileSync(file)).toThrow();
    await expect(verifyHostKey({ ...base, knownHostsFile: file, acceptNew: async () => true })).resolves.toMatchObject({ status: 'recorded' });
    // Known now: not asked again.
    await expect(verifyHostKey({ ...base, knownHostsFile: file, acceptNew: async () => Promise.reject(new Error('not asked')) })).resolves.toMatchObject({ status: 'known' });
  });

  it('a host recorded with another key while the person was asked is refused as changed, not appended', async () => {
    const err = await rejection(
      verifyHostKey({
        ...base,
        knownHostsFile: file,
        acceptNew: async () => {
          writeFileSync(file, `10.0.0.7 ${B.type} ${B.b64}\n`);
          return true;
        },
      }),
    );
    expect(err.code).toBe('HOST_KEY_CHANGED');
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('orderHostKeyAlgorithms (as OpenSSH orders them by known_hosts)', () => {
  it('offers the recorded types first, each group in ssh2\'s order', () => {
    expect(orderHostKeyAlgorithms(['ecdsa-sha2-nistp256'])).toEqual([
      'ecdsa-sha2-nistp256', 'ssh-ed25519', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa',
    ]);
    // An RSA key on record: its SHA-2 signature algorithms first, as OpenSSH does.
    expect(orderHostKeyAlgorithms(['ssh-rsa'])!.slice(0, 3)).toEqual(['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']);
    expect(orderHostKeyAlgorithms(['ssh-ed25519', 'ecdsa-sha2-nistp384'])!.slice(0, 2)).toEqual(['ssh-ed25519', 'ecdsa-sha2-nistp384']);
  });

  it('nothing usable on record: ssh2\'s own default', () => {
    expect(orderHostKeyAlgorithms([])).toBeNull();
    expect(orderHostKeyAlgorithms(['ssh-dss'])).toBeNull();
  });
});
