// No identity file and no ssh-agent: the default key files in ~/.ssh are tried as ssh(1) tries
// them (id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk, id_xmss, id_dsa), each public
// key offered first; an encrypted one's passphrase is asked only once the server accepts it, and
// a key whose passphrase cannot be had is passed over and named. Against an in-process ssh2
// Server that accepts one key and records what it was offered.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { wholeKeyPair } from '../../../support/sshKeys';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { HoldfastError } from '../../../../src/core/errors';
import { opensshPublicKey } from '../../../../src/core/ssh/auth';
import { connectSsh, type SshTarget } from '../../../../src/core/ssh/connect';
import { formatKnownHostsLine } from '../../../../src/core/ssh/knownHosts';

const PASSPHRASE = 'default-keys S3cret';
const WRONG = 'default-keys wrong S3cret';

type KeyType = 'rsa' | 'ecdsa' | 'ed25519';
const generate = (type: KeyType, passphrase?: string) => wholeKeyPair(() => generateOnce(type, passphrase));
const generateOnce = (type: KeyType, passphrase?: string) => {
  if (passphrase) {
    const enc = { passphrase, cipher: 'aes256-ctr', rounds: 16 };
    return type === 'rsa'
      ? ssh2.utils.generateKeyPairSync('rsa', { ...enc, bits: 2048 })
      : type === 'ecdsa'
        ? ssh2.utils.generateKeyPairSync('ecdsa', { ...enc, bits: 256 })
        : ssh2.utils.generateKeyPairSync('ed25519', enc);
  }
  return type === 'rsa'
    ? ssh2.utils.generateKeyPairSync('rsa', { bits: 2048 })
    : type === 'ecdsa'
      ? ssh2.utils.generateKeyPairSync('ecdsa', { bits: 256 })
      : ssh2.utils.generateKeyPairSync('ed25519');
};

let server: InstanceType<typeof ssh2.Server>;
let port: number;
let knownHosts: string;
let home: string;
const savedHome = process.env.HOME;
const savedAgent = process.env.SSH_AUTH_SOCK;
/** The public key (wire form) the server accepts, and the key types it was offered, in order. */
let authorised: Buffer | null = null;
let offered: string[] = [];

const keyType = (blob: Buffer) => blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1');

beforeAll(async () => {
  const host = ssh2.utils.generateKeyPairSync('ed25519');
  server = new ssh2.Server({ hostKeys: [host.private] }, (client) => {
    client.on('error', () => {});
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      if (!ctx.signature) offered.push(keyType(ctx.key.data));
      if (!authorised || !ctx.key.data.equals(authorised)) return ctx.reject(['publickey']);
      if (!ctx.signature) return ctx.accept(); // the query: "this key would do", now sign
      const pub = ssh2.utils.parseKey(ctx.key.data) as ssh2.ParsedKey;
      return pub.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) ? ctx.accept() : ctx.reject(['publickey']);
    });
    client.on('ready', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as { port: number }).port;
  const pub = ssh2.utils.parseKey(host.public) as ssh2.ParsedKey;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-default-keys-'));
  knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, formatKnownHostsLine('127.0.0.1', port, pub.type, pub.getPublicSSH()) + '\n');
  delete process.env.SSH_AUTH_SOCK;
});

afterAll(() => {
  server?.close();
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  if (savedAgent !== undefined) process.env.SSH_AUTH_SOCK = savedAgent;
});

beforeEach(() => {
  // A fresh home for each case: os.homedir() reads $HOME.
  home = mkdtempSync(path.join(os.tmpdir(), 'hf-home-keys-'));
  mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  process.env.HOME = home;
  authorised = null;
  offered = [];
});

/** Writes ~/.ssh/NAME (and NAME.pub unless told not to); returns the key's public wire form. */
function keyFile(name: string, type: KeyType, o: { passphrase?: string; pub?: boolean } = {}): Buffer {
  const kp = generate(type, o.passphrase);
  writeFileSync(path.join(home, '.ssh', name), kp.private, { mode: 0o600 });
  if (o.pub !== false) writeFileSync(path.join(home, '.ssh', `${name}.pub`), kp.public);
  return (ssh2.utils.parseKey(kp.public) as ssh2.ParsedKey).getPublicSSH();
}

const target = (over: Partial<SshTarget> = {}): SshTarget => ({ host: '127.0.0.1', port, user: 'ops', knownHosts, readyTimeoutMs: 5_000, ...over });
const file = (name: string) => path.join(home, '.ssh', name);

async function fails(t: SshTarget): Promise<HoldfastError> {
  const e = await connectSsh(t).then(
    async (c) => (await c.close(), null),
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HoldfastError);
  return e as HoldfastError;
}

describe('the default key files, as ssh tries them', () => {
  it('offers id_rsa, then id_ecdsa, then id_ed25519, and logs in with the one the server accepts', async () => {
    keyFile('id_ed25519', 'ed25519');
    keyFile('id_rsa', 'rsa');
    authorised = keyFile('id_ecdsa', 'ecdsa');
    // Only the accepted one is needed; the next in line is never offered.
    const c = await connectSsh(target());
    expect(offered).toEqual(['ssh-rsa', 'ecdsa-sha2-nistp256']);
    expect(c.nativeAuth).toEqual({ identity: file('id_ecdsa') });
    await c.close();

    authorised = (ssh2.utils.parseKey(generate('ed25519').public) as ssh2.ParsedKey).getPublicSSH(); // none of them
    offered = [];
    const err = await fails(target());
    expect(offered).toEqual(['ssh-rsa', 'ecdsa-sha2-nistp256', 'ssh-ed25519']);
    expect(err.code).toBe('AUTH_FAILED');
    expect(err.message).toBe(`Authentication failed for user ops at 127.0.0.1:${port}: tried publickey (${file('id_rsa')}, ${file('id_ecdsa')}, ${file('id_ed25519')}).`);
    expect(err.hint).toMatch(/^Check that one of these keys is authorised for ops on the node/);
  });

  it('asks the passphrase of an encrypted key only once the server accepts it, again when wrong', async () => {
    keyFile('id_rsa', 'rsa', { passphrase: PASSPHRASE }); // refused: never asked for
    authorised = keyFile('id_ed25519', 'ed25519', { passphrase: PASSPHRASE, pub: false }); // public half from its header
    const answers = [WRONG, PASSPHRASE];
    const passphrase = vi.fn(async (_keyPath: string) => answers.shift()!);
    const c = await connectSsh(target({ credentials: { passphrase } }));
    expect(passphrase).toHaveBeenCalledTimes(2);
    expect(passphrase.mock.calls.every(([f]) => f === file('id_ed25519'))).toBe(true);
    // The passphrase stays in this process: a native OpenSSH client is not given the file.
    expect(c.nativeAuth).toBeNull();
    await c.close();
  });

  it('passes over a key whose passphrase is not given (no terminal, Cancel), goes on, and names it if nothing else works', async () => {
    authorised = keyFile('id_ecdsa', 'ecdsa', { passphrase: PASSPHRASE });
    const refused = vi.fn(async () => Promise.reject(new Error(`no terminal ${PASSPHRASE}`)));
    const err = await fails(target({ credentials: { passphrase: refused } }));
    expect(err.message).toBe(`Authentication failed for user ops at 127.0.0.1:${port}: tried publickey (${file('id_ecdsa')}); passed over ${file('id_ecdsa')}: its passphrase was not given.`);
    expect(err.hint).toMatch(/run the command on a terminal to be asked for it, or load the key into ssh-agent/);
    expect(JSON.stringify(err.toInfo())).not.toContain(PASSPHRASE);

    // A later key in ssh's order still logs in.
    authorised = keyFile('id_ed25519', 'ed25519');
    const c = await connectSsh(target({ credentials: { passphrase: refused } }));
    expect(c.nativeAuth).toEqual({ identity: file('id_ed25519') });
    await c.close();
  });

  it('with no one to ask, an encrypted key is not offered, and the error says why', async () => {
    authorised = keyFile('id_ed25519', 'ed25519', { passphrase: PASSPHRASE });
    const err = await fails(target());
    expect(offered).toEqual([]);
    expect(err.message).toBe(
      `No way to authenticate as ops@127.0.0.1: no identity file is set, no ssh-agent is running (SSH_AUTH_SOCK is not set), and no default key can be used: ${file('id_ed25519')} is encrypted and nothing here can ask for its passphrase.`,
    );
    expect(err.hint).toMatch(/^Load the key into ssh-agent \(ssh-add\)/);
  });

  it('says what is in ~/.ssh that cannot be used, or that nothing is there', async () => {
    writeFileSync(file('id_ed25519_sk'), '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
    writeFileSync(file('id_xmss'), 'not a key\n');
    const err = await fails(target());
    expect(err.message).toBe(
      `No way to authenticate as ops@127.0.0.1: no identity file is set, no ssh-agent is running (SSH_AUTH_SOCK is not set), and no default key can be used: ${file('id_ed25519_sk')} is a security-key (FIDO) key, which Holdfast cannot use; ${file('id_xmss')} is not a key Holdfast can use (Unsupported key format).`,
    );
    rmSync(path.join(home, '.ssh'), { recursive: true });
    expect((await fails(target())).message).toBe(
      `No way to authenticate as ops@127.0.0.1: no identity file is set, no ssh-agent is running (SSH_AUTH_SOCK is not set), and no default key can be used: none of id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk, id_xmss, id_dsa is in ${path.join(home, '.ssh')}.`,
    );
  });
});

describe('opensshPublicKey', () => {
  it.each(['rsa', 'ecdsa', 'ed25519'] as const)('%s: reads the public key an encrypted OpenSSH key file carries in the clear', (type) => {
    const kp = generate(type, PASSPHRASE);
    const line = opensshPublicKey(Buffer.from(kp.private));
    expect(line).not.toBeNull();
    expect((ssh2.utils.parseKey(line!) as ssh2.ParsedKey).getPublicSSH()).toEqual((ssh2.utils.parseKey(kp.public) as ssh2.ParsedKey).getPublicSSH());
    expect(opensshPublicKey(Buffer.from('-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n'))).toBeNull();
  });
});
