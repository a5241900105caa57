// The OpenSSH-client upload path's pure parts: the known_hosts line it writes for the verified
// key, the argv it runs (no shell, the host after `--`), when it declines, and the remote
// script — run here with the real sh and the real openssl / sha256sum (recorded outputs below).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { knownHostsDir, knownHostsLine, LIFELINE_SCRIPT, nativeUnfit, OPENSSH_WRITE_SCRIPT, opensshArgv, opensshWriteCommand, parseWriteResult } from '../../../../../src/core/usecases/upload/openssh';

// A real ed25519 host key (`ssh-keygen -t ed25519`, /etc/ssh/ssh_host_ed25519_key.pub).
const PUB = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKRP92kMRtlDPBM6dxumz5XywDVnuoSdkhm0bcABdZkV root@vm';
const BLOB = Buffer.from(PUB.split(' ')[1]!, 'base64');
const ssh = { hostKey: BLOB, login: { host: 'edge-7.site', port: 2222, user: 'root' }, nativeAuth: { identity: '/home/t/.ssh/id_ed25519' }, via: undefined };

describe('knownHostsLine', () => {
  it('is the .pub line under the alias: type from the blob, the blob in base64', () => {
    expect(knownHostsLine('holdfast-verified-node', BLOB)).toBe(`holdfast-verified-node ${PUB.split(' ').slice(0, 2).join(' ')}\n`);
  });
  it('refuses a blob whose type is not a key type word', () => {
    const bad = Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from('a b\nc'), Buffer.alloc(4)]);
    expect(() => knownHostsLine('x', bad)).toThrow(/unexpected host key type/);
  });
});

describe('opensshArgv', () => {
  const argv = opensshArgv(ssh, '/tmp/kh', 'CMD');
  it('pins the verified key and asks nothing', () => {
    const opts = argv.flatMap((a, i) => (argv[i - 1] === '-o' ? [a] : []));
    expect(opts).toEqual(
      expect.arrayContaining([
        'BatchMode=yes',
        'StrictHostKeyChecking=yes',
        'UserKnownHostsFile=/tmp/kh',
        'GlobalKnownHostsFile=/dev/null',
        'HostKeyAlias=holdfast-verified-node',
        'HostKeyAlgorithms=ssh-ed25519',
        'PasswordAuthentication=no',
        'IdentitiesOnly=yes',
        'ForwardAgent=no',
      ]),
    );
    expect(argv.slice(0, 2)).toEqual(['-F', '/dev/null']); // no user ssh_config
    expect(argv[argv.indexOf('-i') + 1]).toBe('/home/t/.ssh/id_ed25519');
  });
  it('ends with `-- host command`: the host cannot be read as an option', () => {
    expect(argv.slice(-3)).toEqual(['--', 'edge-7.site', 'CMD']);
    expect(argv[argv.indexOf('-p') + 1]).toBe('2222');
    expect(argv[argv.indexOf('-l') + 1]).toBe('root');
  });
  it('an agent login names the agent and no identity file', () => {
    const a = opensshArgv({ ...ssh, nativeAuth: { agent: '/run/user/1000/agent.sock' } }, '/tmp/kh', 'CMD');
    expect(a).toContain('IdentityAgent=/run/user/1000/agent.sock');
    expect(a).not.toContain('-i');
  });
});

describe('the known_hosts folder (issue #51: a killed upload left /tmp/holdfast-ssh-*/known_hosts)', () => {
  it("is under Holdfast's home, 0700, and the folders of processes that are gone are removed first", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-kh-home-'));
    // A pid that is surely gone: a process that ran and ended.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = path.join(home, 'ssh', `run-${gone}-AbC123`);
    const live = path.join(home, 'ssh', `run-${process.ppid}-XyZ789`); // the runner's parent: alive
    for (const d of [stale, live]) {
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, 'known_hosts'), 'x');
    }
    const dir = knownHostsDir(home);
    expect(path.dirname(dir)).toBe(path.join(home, 'ssh'));
    expect(path.basename(dir)).toMatch(new RegExp(`^run-${process.pid}-`));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(readdirSync(path.join(home, 'ssh')).sort()).toEqual([path.basename(dir), path.basename(live)].sort());
    rmSync(home, { recursive: true });
  });
  it('a home path ssh_config cannot carry, or no home yet, falls back to the temp dir', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-kh-"quoted"-'));
    const none = path.join(home, 'not-yet');
    for (const h of [home, none]) {
      const dir = knownHostsDir(h);
      rmSync(dir, { recursive: true });
      expect(path.dirname(dir)).toBe(os.tmpdir());
    }
    expect(existsSync(none)).toBe(false);
    rmSync(home, { recursive: true });
  });
  it('a path with a space is quoted for ssh (one file, not two)', () => {
    const a = opensshArgv(ssh, '/home/t/Library/Application Support/Holdfast/ssh/run-1-x/known_hosts', 'CMD');
    expect(a).toContain('UserKnownHostsFile="/home/t/Library/Application Support/Holdfast/ssh/run-1-x/known_hosts"');
  });
});

describe('nativeUnfit', () => {
  const fit = { sudo: false, client: '/usr/bin/ssh' };
  it('takes a direct key login', () => expect(nativeUnfit(ssh, fit)).toBeNull());
  it.each([
    [{ ...ssh }, { sudo: false, client: null }, /no OpenSSH client/],
    [{ ...ssh }, { sudo: true, client: '/usr/bin/ssh' }, /sudo/],
    [{ ...ssh, nativeAuth: null }, fit, /password or a passphrase/],
    [{ ...ssh, via: {} as never }, fit, /jump host/],
    [{ ...ssh, login: { ...ssh.login, host: '-oProxyCommand=x' } }, fit, /host name/],
    [{ ...ssh, login: { ...ssh.login, host: 'a b' } }, fit, /host name/],
    [{ ...ssh, login: { ...ssh.login, user: '-l' } }, fit, /user name/],
  ])('declines %#', (t, o, why) => expect(nativeUnfit(t, o)).toMatch(why));
});

describe('parseWriteResult', () => {
  it('reads the script line, with either hasher', () => {
    // `${d%% *}` of `openssl dgst -sha256 -r` ("<hex> *stdin") and of sha256sum ("<hex>  -").
    expect(parseWriteResult('@@sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 3\n')).toEqual({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', size: 3 });
  });
  it('takes nothing else', () => {
    expect(parseWriteResult('@@short 2\n')).toBeNull();
    expect(parseWriteResult('@@sha256 abc 3')).toBeNull();
    expect(parseWriteResult('')).toBeNull();
  });
});

describe('the remote script (real sh, openssl, sha256sum)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-openssh-script-'));
  const run = (input: Buffer, hasher: string, want: number, name = "it's $(odd) name") => {
    const f = path.join(dir, name);
    const r = spawnSync('sh', ['-c', OPENSSH_WRITE_SCRIPT, 'holdfast-upload', f, hasher, String(want)], { input });
    return { status: r.status, out: r.stdout.toString(), file: f };
  };
  const data = Buffer.from('abc');
  it.each(['openssl', 'sha256sum'])('writes stdin, then prints the file’s digest and size (%s)', (hasher) => {
    const r = run(data, hasher, 3);
    expect(r.status).toBe(0);
    expect(parseWriteResult(r.out)).toEqual({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', size: 3 });
    expect(readFileSync(r.file, 'utf8')).toBe('abc');
  });
  it('a short stream is reported, not hashed', () => {
    const r = run(Buffer.from('ab'), 'openssl', 3, 'short');
    expect(r.status).toBe(6);
    expect(r.out).toBe('@@short 2\n');
  });
  it('replaces a leftover rather than appending to it', () => {
    writeFileSync(path.join(dir, 'left'), 'old bytes, longer');
    const r = run(data, 'sha256sum', 3, 'left');
    expect(r.status).toBe(0);
    expect(readFileSync(r.file, 'utf8')).toBe('abc');
  });
  it('the command line quotes every argument: the path arrives literally', () => {
    const f = path.join(dir, "q'uote; $(touch pwned) `x`");
    const cmd = opensshWriteCommand(f, 'sha256sum', 3);
    execFileSync('sh', ['-c', cmd], { input: data, cwd: dir });
    expect(readFileSync(f, 'utf8')).toBe('abc');
    expect(() => readFileSync(path.join(dir, 'pwned'))).toThrow(/ENOENT/);
  });
});

describe('the lifeline (real sh): the client never outlives Holdfast', () => {
  const run = (argv: string[], stdin: number | 'ignore') => {
    const c = spawn('/bin/sh', ['-c', LIFELINE_SCRIPT, 'holdfast-openssh', ...argv], { stdio: [stdin, 'pipe', 'pipe', 'pipe'] });
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    const closed = new Promise<{ code: number | null; out: string }>((r) => c.on('close', (code) => r({ code, out })));
    return { lifeline: c.stdio[3] as Writable, closed };
  };
  it('hands the program the file as its stdin and returns its status', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-lifeline-'));
    writeFileSync(path.join(dir, 'in'), 'the archive bytes');
    const r = run(['sh', '-c', 'cat; exit 3'], openSync(path.join(dir, 'in'), 'r'));
    expect(await r.closed).toEqual({ code: 3, out: 'the archive bytes' });
  });
  it('stops the program when the pipe closes (a cancel, or Holdfast gone)', async () => {
    const r = run(['sleep', '600'], 'ignore');
    r.lifeline.destroy();
    expect((await r.closed).code).toBe(143); // the program ended by SIGTERM, not after 600 s
  });
});
