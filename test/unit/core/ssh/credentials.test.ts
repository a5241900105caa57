// Authentication against an in-process ssh2 Server on loopback: passwords, keyboard-interactive,
// passphrases, cancellation and the deadline — and no secret ever in an error, a hint or output.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { wholeKeyPair } from '../../../support/sshKeys';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HoldfastError } from '../../../../src/core/errors';
import { connectSsh, type SshTarget } from '../../../../src/core/ssh/connect';
import { formatKnownHostsLine } from '../../../../src/core/ssh/knownHosts';
import { ttyCredentials, readLine, PromptCancelled } from '../../../../src/cli/prompt';
import { PassThrough } from 'node:stream';

const PASSWORD = 'unit-S3cret pw $(x)';
const PASSPHRASE = 'unit-passphrase S3cret';
const WRONG = 'unit-wrong S3cret';
const SECRETS = [PASSWORD, PASSPHRASE, WRONG];
const seen: string[] = [];

let server: InstanceType<typeof ssh2.Server>;
let port: number;
let dir: string;
let knownHosts: string;
/** What the server does with keyboard-interactive: ask one hidden question, or nothing. */
let kbdMode: 'password' | 'silent' = 'password';

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hf-cred-'));
  const host = wholeKeyPair(() => ssh2.utils.generateKeyPairSync('ed25519'));
  server = new ssh2.Server({ hostKeys: [host.private] }, (client) => {
    client.on('error', () => {});
    client.on('authentication', (ctx) => {
      if (ctx.method === 'password') return ctx.password === PASSWORD ? ctx.accept() : ctx.reject(['password', 'keyboard-interactive']);
      if (ctx.method === 'keyboard-interactive') {
        if (kbdMode === 'silent') return; // never answers: the client must still end by its deadline
        return ctx.prompt([{ prompt: 'Password: ', echo: false }], (answers) => (answers[0] === PASSWORD ? ctx.accept() : ctx.reject()));
      }
      if (ctx.method === 'publickey') return ctx.accept();
      ctx.reject(['password', 'keyboard-interactive', 'publickey']);
    });
    client.on('ready', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as { port: number }).port;
  const pub = ssh2.utils.parseKey(host.public) as ssh2.ParsedKey;
  knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, formatKnownHostsLine('127.0.0.1', port, pub.type, pub.getPublicSSH()) + '\n');
});

afterAll(() => {
  server?.close();
});

const target = (over: Partial<SshTarget>): SshTarget => ({ host: '127.0.0.1', port, user: 'ops', knownHosts, readyTimeoutMs: 5_000, ...over });

async function fails(t: SshTarget): Promise<HoldfastError> {
  try {
    const c = await connectSsh(t);
    await c.close();
  } catch (e) {
    expect(e).toBeInstanceOf(HoldfastError);
    const h = e as HoldfastError;
    seen.push(h.message, h.hint ?? '', JSON.stringify(h.toInfo()), String(h.stack));
    return h;
  }
  throw new Error('expected the connection to fail');
}

describe('password and keyboard-interactive', () => {
  it('logs in with the password from the provider', async () => {
    const password = vi.fn(async () => PASSWORD);
    const c = await connectSsh(target({ auth: 'password', credentials: { password } }));
    await c.close();
    expect(password).toHaveBeenCalledWith('ops', '127.0.0.1');
  });

  it('asks again (3 times at most) when refused, then fails without the secret in the error', async () => {
    const password = vi.fn(async () => WRONG);
    const err = await fails(target({ auth: 'password', credentials: { password } }));
    expect(err.code).toBe('AUTH_FAILED');
    expect(password).toHaveBeenCalledTimes(3);
  });

  it('answers keyboard-interactive prompts through the provider, or with the password for one hidden prompt', async () => {
    const kbd = vi.fn(async (ps: { prompt: string }[]) => ps.map(() => PASSWORD));
    await (await connectSsh(target({ auth: 'keyboard-interactive', credentials: { keyboardInteractive: kbd } }))).close();
    expect(kbd.mock.calls[0]![0]).toEqual([{ prompt: 'Password: ', echo: false }]);
    await (await connectSsh(target({ auth: 'keyboard-interactive', credentials: { password: async () => PASSWORD } }))).close();
  });

  it('a cancelled prompt fails as cancelled, without the callback\'s message', async () => {
    const err = await fails(target({ auth: 'password', credentials: { password: async () => Promise.reject(new Error(`no: ${PASSWORD}`)) } }));
    expect(err.message).toMatch(/cancelled/);
  });

  it('pauses the deadline while a person answers', async () => {
    const slow = async () => {
      await new Promise((r) => setTimeout(r, 1_500));
      return PASSWORD;
    };
    await (await connectSsh(target({ auth: 'password', readyTimeoutMs: 1_000, credentials: { password: slow } }))).close();
  });

  it('a server that never finishes keyboard-interactive ends at the deadline (TIMEOUT), not with a hang', async () => {
    kbdMode = 'silent';
    try {
      const err = await fails(target({ auth: 'keyboard-interactive', readyTimeoutMs: 1_000, credentials: { password: async () => PASSWORD } }));
      expect(err.code).toBe('TIMEOUT');
      expect(err.message).toMatch(/within 1 s/);
    } finally {
      kbdMode = 'password';
    }
  });

  it('refuses password auth when there is no way to ask', async () => {
    const err = await fails(target({ auth: 'password' }));
    expect(err.message).toMatch(/no way to ask/);
  });
});

describe('encrypted identity files', () => {
  for (const type of ['ed25519', 'ecdsa', 'rsa'] as const) {
    it(`${type}: asks the passphrase, again when wrong`, async () => {
      const opts = { passphrase: PASSPHRASE, cipher: 'aes256-cbc', rounds: 16 };
      const kp =
        type === 'rsa'
          ? ssh2.utils.generateKeyPairSync('rsa', { ...opts, bits: 2048 })
          : type === 'ecdsa'
            ? ssh2.utils.generateKeyPairSync('ecdsa', { ...opts, bits: 256 })
            : wholeKeyPair(() => ssh2.utils.generateKeyPairSync('ed25519', opts));
      const file = path.join(dir, `id_${type}`);
      writeFileSync(file, kp.private, { mode: 0o600 });
      const answers = [WRONG, PASSPHRASE];
      const passphrase = vi.fn(async () => answers.shift()!);
      await (await connectSsh(target({ identity: file, credentials: { passphrase } }))).close();
      expect(passphrase).toHaveBeenCalledTimes(2);
      expect(passphrase).toHaveBeenCalledWith(file);
      const err = await fails(target({ identity: file, credentials: { passphrase: async () => WRONG } }));
      expect(err.message).toMatch(/wrong/);
      expect((await fails(target({ identity: file }))).message).toMatch(/no passphrase was given/);
    });
  }
});

describe('the CLI prompt', () => {
  function fakeTty(typed: string) {
    const input = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode: (on: boolean) => void; raw: boolean[] };
    input.isTTY = true;
    input.raw = [];
    input.setRawMode = (on) => void input.raw.push(on);
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d) => (shown += d));
    setTimeout(() => input.write(typed), 5);
    return { io: { input, output }, shown: () => shown, input };
  }

  it('reads without echo, handles backspace, restores the terminal', async () => {
    const t = fakeTty(`${PASSWORD}x\u007f\r`);
    const v = await ttyCredentials(t.io).password!('ops', 'node1');
    expect(v).toBe(PASSWORD);
    expect(t.shown()).toBe('Password for ops@node1: \n');
    expect(t.input.raw).toEqual([true, false]);
    seen.push(t.shown());
  });

  it('Ctrl-C cancels; no terminal means no prompt', async () => {
    const t = fakeTty('abc\u0003');
    await expect(readLine('Q: ', { echo: false }, t.io)).rejects.toBeInstanceOf(PromptCancelled);
    const notTty = { input: new PassThrough(), output: new PassThrough() };
    await expect(readLine('Q: ', { echo: false }, notTty)).rejects.toBeInstanceOf(PromptCancelled);
  });
});

describe('secrets', () => {
  it('never appear in any error message, hint, stack or prompt output above', () => {
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) for (const s of SECRETS) expect(text).not.toContain(s);
  });
});
