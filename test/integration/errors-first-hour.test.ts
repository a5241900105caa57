// The errors a technician meets in the first hour (issue #33), each provoked on lab nodes through
// the real CLI, each naming the real cause and what to do, found before anything slow runs:
// a text file under an archive's name; an images dir the SSH user may not write (refused before a
// byte is sent, on the default OpenSSH path too); rm-archive given the absolute path; import's
// node names and options checked before the archive is read; Ctrl-C while connecting (nothing
// was written, so no partial file is claimed); and ~/.ssh/id_* tried as OpenSSH tries them when
// no identity file and no agent are set.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { repoRoot, runCli, tempHome, type CliResult } from './support';

const NOSUDO = labUserName('hffirst');
const IMAGES_DIR = '/var/lib/rancher/k3s/agent/images';

let lab: Lab;
let home: string;
let work: string;

async function cli(args: string[], expectCode = 0, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const r = await runCli(args, { HOLDFAST_HOME: home, ...env });
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return r;
}

const addArgs = (name: string, n: LabNodeHandle, extra: string[] = []) => ['node', 'add', name, '--host', n.host, '--port', String(n.port), '--known-hosts', lab.knownHosts, ...extra];

/** What an upload left in a node's images dir (host side), dotfiles (partial uploads) included. */
const imagesDirEntries = (n: LabNodeHandle) => readdirSync(n.hostImagesDir, { recursive: true }) as string[];

beforeAll(async () => {
  // With a user, every node's images dir is root-only (0700), as on a real k3s node.
  lab = await startLab({ nodes: ['fh1', 'fh2'], users: [{ name: NOSUDO }] });
  home = tempHome();
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-first-hour-'));
  chmodSync(work, 0o755);
  await cli(addArgs('fh2', lab.node('fh2'), ['--identity', lab.clientKey]));
});

afterAll(async () => {
  await lab?.stop();
});

describe('a text file named like an archive', () => {
  it('is "not an image archive: … starts with text", not "truncated … copy it again"; nothing is sent', async () => {
    const file = path.join(work, 'notes.tar');
    writeFileSync(file, 'hello world\nthese are my notes\n');
    const r = await cli(['upload', 'fh2', file], 3);
    expect(r.stderr).toContain('holdfast: notes.tar was refused: not an image archive: it is not a tar archive: it starts with text ("hello world")');
    expect(r.stderr).toContain('Check that this is the file you meant');
    expect(r.stderr).not.toMatch(/truncated|copy it again/);
    const gz = path.join(work, 'page.tar.gz');
    writeFileSync(gz, '<!DOCTYPE html>\n<html><body>Sign in to download</body></html>\n');
    const i = await cli(['import', 'fh2', gz], 3);
    expect(i.stderr).toContain('holdfast: page.tar.gz was refused: not an image archive: it is not gzip data: it starts with text ("<!DOCTYPE html>")');
    expect(imagesDirEntries(lab.node('fh2')).filter((f) => /notes|page/.test(f))).toEqual([]);
  });
});

describe('an images dir the SSH user may not write', () => {
  const MESSAGE = `${NOSUDO} may not write in the images dir ${IMAGES_DIR} on fh1ns: nothing was sent`;
  let archive: string;

  beforeAll(async () => {
    const fh1 = lab.node('fh1');
    // A site where the user may reach containerd (its socket's group) but not the images dir.
    await fh1.execInNode(['chmod', '0666', '/run/k3s/containerd/containerd.sock']);
    await cli(addArgs('fh1ns', fh1, ['--user', NOSUDO, '--identity', lab.clientKey]));
    archive = path.join(work, 'app.tar.gz');
    await writeImageArchive(archive, { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/first-app:1.0' }] });
  });

  it('root-only (0700): upload and import say who may not write where, and how to get past it, before any byte', async () => {
    expect(await lab.node('fh1').statInNode(IMAGES_DIR)).toBe('drwx------ root root');
    const up = await cli(['upload', 'fh1ns', archive], 3);
    expect(up.stderr).toContain(`holdfast: ${MESSAGE} — Reach the images dir through sudo (the node's sudo option, --sudo on the command line;`);
    expect(up.stderr).not.toMatch(/free space|network|uploading/);
    const imp = await cli(['import', 'fh1ns', archive], 3);
    expect(imp.stdout).toContain(`fh1ns: FAILED — ${MESSAGE} (Reach the images dir through sudo`);
    expect(imp.stderr).not.toMatch(/Permission denied|uploading/);
    expect(imagesDirEntries(lab.node('fh1'))).toEqual([]);
  });

  it('root-owned but readable (0755), on the default OpenSSH path: the same refusal, not "check the free space and the network"', async () => {
    const fh1 = lab.node('fh1');
    await fh1.execInNode(['chmod', '0755', IMAGES_DIR]);
    const up = await cli(['upload', 'fh1ns', archive], 3, { HOLDFAST_OPENSSH: '' });
    expect(up.stderr).toContain(`holdfast: ${MESSAGE}`);
    expect(up.stderr).not.toMatch(/free space|network|uploading/);
    const imp = await cli(['import', 'fh1ns', archive], 3);
    expect(imp.stdout).toContain(`fh1ns: FAILED — ${MESSAGE}`);
    expect(imagesDirEntries(fh1)).toEqual([]);

    // What needs no write still works: the same archive already in place (put there by root).
    await cli(addArgs('fh1', fh1, ['--identity', lab.clientKey]));
    await cli(['upload', 'fh1', archive]);
    const again = await cli(['upload', 'fh1ns', archive]);
    expect(again.stdout).toMatch(/^fh1ns: app\.tar\.gz is already there \(sha256 [0-9a-f]{64}\)/);
  });
});

describe('rm-archive and pin --archive with the absolute path', () => {
  it('inside the images dir means the same file as its relative name; outside, the error names the images dir', async () => {
    const fh2 = lab.node('fh2');
    await writeImageArchive(path.join(fh2.hostImagesDir, 'rm-me.tar'), { format: 'oci', images: [{ name: 'docker.io/library/rm-me:1.0' }] });
    await emulateK3sStart(fh2);
    // pin --archive takes the full path on the node too
    await cli(['pin', 'fh2', '--archive', `${IMAGES_DIR}/rm-me.tar`]);
    expect(await labelsOf(fh2, 'docker.io/library/rm-me:1.0')).toMatchObject({ 'io.cri-containerd.pinned': 'pinned' });

    const dry = await cli(['rm-archive', 'fh2', `${IMAGES_DIR}/rm-me.tar`, '--dry-run']);
    expect(dry.stdout.trim()).toBe('rm-me.tar can be removed safely');
    const rm = await cli(['rm-archive', 'fh2', `${IMAGES_DIR}//rm-me.tar`]);
    expect(rm.stdout).toMatch(/^removed rm-me\.tar \(/);
    expect(existsSync(path.join(fh2.hostImagesDir, 'rm-me.tar'))).toBe(false);

    for (const outside of ['/tmp/rm-me.tar', `${IMAGES_DIR}/../rm-me.tar`, IMAGES_DIR]) {
      const r = await cli(['rm-archive', 'fh2', outside], 2);
      expect(r.stderr).toContain(`holdfast: ${outside} is not in the images dir of fh2 (${IMAGES_DIR}) — Give a path inside ${IMAGES_DIR}, absolute or relative to it`);
      expect(r.stderr).not.toContain('Invalid input');
    }
    const pinOutside = await cli(['pin', 'fh2', '--archive', '/tmp/rm-me.tar'], 2);
    expect(pinOutside.stderr).toContain(`holdfast: /tmp/rm-me.tar is not in the images dir of fh2 (${IMAGES_DIR})`);
  });
});

describe('import checks what it was given before it reads the archive', () => {
  it('an unknown node, a bad option, a missing or unreadable file: said at once, and no "inspecting" line', async () => {
    // A file the inspection would refuse: if it were read first, its refusal would be the error.
    const bad = path.join(work, 'unread.tar');
    writeFileSync(bad, 'not an archive at all\n');
    const unknown = await cli(['import', 'fh2', 'nosuch', bad], 1);
    expect(unknown.stderr).toContain('holdfast: no node named "nosuch"');
    const parallel = await cli(['import', 'fh2', bad, '--parallel', '0'], 2);
    expect(parallel.stderr).toContain("error: option '--parallel <n>' argument '0' is invalid. It wants a whole number ≥ 1.");
    const timeout = await cli(['import', 'fh2', bad, '--timeout', 'abc'], 2);
    expect(timeout.stderr).toContain("error: option '--timeout <seconds>' argument 'abc' is invalid. It wants a number of seconds > 0.");
    const rule = await cli(['import', 'fh2', bad, '--remove-archive'], 2);
    expect(rule.stderr).toContain('holdfast: removing the archive needs its pins made durable first');
    const missing = await cli(['import', 'fh2', path.join(work, 'missing.tar')], 1);
    expect(missing.stderr).toContain(`holdfast: no such file: ${path.join(work, 'missing.tar')}`);
    for (const r of [unknown, parallel, timeout, rule, missing]) expect(r.stderr).not.toMatch(/inspecting|was refused/);

    // Unreadable to the user running Holdfast: refused before a byte of it is read.
    const userHome = path.join(work, 'user-home');
    mkdirSync(userHome);
    chownSync(userHome, lab.users[0]!.uid, lab.users[0]!.uid);
    const secret = path.join(work, 'secret.tar');
    copyFileSync(bad, secret);
    chmodSync(secret, 0o600);
    const asUser = (args: string[]) =>
      new Promise<CliResult>((resolve) => {
        const env = { PATH: process.env.PATH ?? '', HOME: userHome, HOLDFAST_HOME: path.join(userHome, 'hf') };
        const c = spawn('runuser', ['-u', NOSUDO, '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, path.join(repoRoot, 'bin', 'holdfast.mjs'), ...args]);
        let stdout = '';
        let stderr = '';
        c.stdout.on('data', (d) => (stdout += d));
        c.stderr.on('data', (d) => (stderr += d));
        c.on('close', (code) => resolve({ code, stdout, stderr, ms: 0 }));
      });
    expect((await asUser(['node', 'add', 'fh2', '--host', '127.0.0.1', '--port', String(lab.node('fh2').port), '--no-check'])).code).toBe(0);
    const unreadable = await asUser(['import', 'fh2', secret]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`holdfast: cannot read ${secret}: permission denied`);
  });
});

/** A loopback TCP proxy that accepts connections but forwards nothing until release(). */
async function holdingProxy(target: number): Promise<{ port: number; release(): void; close(): Promise<void> }> {
  const live = new Set<net.Socket>();
  const waiting: (() => void)[] = [];
  let released = false;
  const server = net.createServer((client) => {
    live.add(client);
    client.pause();
    const forward = () => {
      const upstream = net.connect({ host: '127.0.0.1', port: target });
      live.add(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      for (const s of [client, upstream]) {
        s.on('error', () => undefined);
        s.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
    };
    if (released) forward();
    else waiting.push(forward);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    release: () => {
      released = true;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of live) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('Ctrl-C while connecting', () => {
  it('says nothing was written (no partial file is claimed), and none is left on the node', async () => {
    const fh2 = lab.node('fh2');
    const proxy = await holdingProxy(fh2.port);
    try {
      const kh = path.join(work, 'held_known_hosts');
      writeFileSync(kh, `[127.0.0.1]:${proxy.port} ${fh2.knownHostsLine.split(' ').slice(1).join(' ')}\n`);
      await cli(['node', 'add', 'held', '--host', '127.0.0.1', '--port', String(proxy.port), '--identity', lab.clientKey, '--known-hosts', kh, '--no-check']);
      const file = path.join(work, 'held.tar');
      await writeImageArchive(file, { format: 'oci', images: [{ name: 'docker.io/library/held:1.0', layerBytes: 4 * 1024 * 1024 }] });

      const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'holdfast.mjs'), 'upload', 'held', file], { env: { ...process.env, HOLDFAST_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      const seen = (re: RegExp) =>
        new Promise<void>((resolve, reject) => {
          const check = () => (re.test(stderr) ? resolve() : undefined);
          child.stderr.on('data', (d) => {
            stderr += d;
            check();
          });
          child.on('close', () => reject(new Error(`holdfast exited before ${re}:\n${stderr}`)));
          check();
        });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // The connection is held at the TCP level: the upload waits in "connecting…".
      await seen(/held: connecting…/);
      child.kill('SIGINT');
      await seen(/holdfast: cancelling/);
      proxy.release();
      expect(await exited).toBe(1);
      expect(stderr).toContain('holdfast: The upload of held.tar to held was cancelled before any byte of it was written on held.');
      expect(stderr).not.toContain('partial file is kept');
      expect(imagesDirEntries(fh2).filter((f) => f.includes('held'))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('no identity file and no ssh-agent', () => {
  it('tries ~/.ssh/id_* in the order ssh does: an unauthorised id_rsa, then the lab key as id_ed25519, which logs in', async () => {
    const fh2 = lab.node('fh2');
    const userHome = mkdtempSync(path.join(os.tmpdir(), 'hf-keys-'));
    mkdirSync(path.join(userHome, '.ssh'), { mode: 0o700 });
    copyFileSync(lab.clientKey, path.join(userHome, '.ssh', 'id_ed25519'));
    chmodSync(path.join(userHome, '.ssh', 'id_ed25519'), 0o600);
    // Another key first in ssh's order, authorised nowhere: refused, then the next one is tried.
    await runProgram('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-C', 'not-authorised', '-f', path.join(userHome, '.ssh', 'id_rsa')]);
    const env = { HOME: userHome, SSH_AUTH_SOCK: '' };
    await fh2.configureSshd({ logLevel: 'VERBOSE' });
    const logBefore = (await fh2.sshdLog()).length;

    const added = await cli(['node', 'add', 'bykeys', '--host', fh2.host, '--port', String(fh2.port), '--known-hosts', lab.knownHosts], 0, env);
    expect(added.stdout).toMatch(/^added bykeys: containerd /);
    // sshd saw the RSA key offered (and refused) before the Ed25519 key it accepted.
    const log = (await fh2.sshdLog()).slice(logBefore);
    const rsa = log.search(/(Failed|Postponed) publickey for root .* (RSA|ssh-rsa)/);
    const ed = log.search(/Accepted publickey for root .* ED25519/);
    expect(rsa, log).toBeGreaterThanOrEqual(0);
    expect(ed, log).toBeGreaterThan(rsa);

    const file = path.join(work, 'bykeys.tar');
    await writeImageArchive(file, { format: 'docker', images: [{ name: 'docker.io/library/bykeys:1.0' }] });
    const up = await cli(['upload', 'bykeys', file], 0, env);
    expect(up.stdout).toMatch(/^bykeys: uploaded bykeys\.tar \(/);
    expect(existsSync(path.join(fh2.hostImagesDir, 'bykeys.tar'))).toBe(true);
  });

  it('an encrypted key the node accepts, with no terminal to ask its passphrase on, is passed over, and the error says so', async () => {
    const fh2 = lab.node('fh2');
    const userHome = mkdtempSync(path.join(os.tmpdir(), 'hf-keys-'));
    mkdirSync(path.join(userHome, '.ssh'), { mode: 0o700 });
    // The lab's key, encrypted: the node accepts it, so its passphrase is needed (and only then).
    const key = path.join(userHome, '.ssh', 'id_ed25519');
    copyFileSync(lab.clientKey, key);
    chmodSync(key, 0o600);
    await runProgram('ssh-keygen', ['-q', '-p', '-N', 'first-hour passphrase', '-f', key]);
    const env = { HOME: userHome, SSH_AUTH_SOCK: '' };
    const r = await cli(['node', 'add', 'locked', '--host', fh2.host, '--port', String(fh2.port), '--known-hosts', lab.knownHosts], 1, env);
    expect(r.stderr).toContain(`holdfast: Authentication failed for user root at 127.0.0.1:${fh2.port}: tried publickey (${key}); passed over ${key}: its passphrase was not given.`);
    expect(r.stderr).toContain('run the command on a terminal to be asked for it, or load the key into ssh-agent (ssh-add)');
    expect(r.stderr).not.toContain('first-hour passphrase');

    const none = mkdtempSync(path.join(os.tmpdir(), 'hf-keys-'));
    const nothing = await cli(['node', 'add', 'nokeys', '--host', fh2.host, '--port', String(fh2.port), '--known-hosts', lab.knownHosts], 1, { HOME: none, SSH_AUTH_SOCK: '' });
    expect(nothing.stderr).toContain(
      `holdfast: No way to authenticate as root@127.0.0.1: no identity file is set, no ssh-agent is running (SSH_AUTH_SOCK is not set), and no default key can be used: none of id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk, id_xmss, id_dsa is in ${none}/.ssh.`,
    );
  });
});

function runProgram(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}
