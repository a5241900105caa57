// Reaching nodes the way real sites allow it (issue #7): a non-root user with sudo on a node whose
// containerd socket and images dir are root-only, with and without socat; jump-host chains;
// ssh-agent, encrypted keys, passwords and keyboard-interactive; hashed, changed and unknown host
// keys; and names that must reach the node literally. Every secret used here is checked never to
// appear in an error or in CLI output.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { IndexCache } from '../../src/core/archives/scan';
import { AuditLog } from '../../src/core/audit/log';
import { HoldfastError } from '../../src/core/errors';
import { readInventory, type OpsContext } from '../../src/core/usecases/inventory';
import { removeArchiveSafely } from '../../src/core/usecases/removeArchive';
import { SessionPool } from '../../src/core/node/pool';
import { NodeSession, type OpenNodeOptions } from '../../src/core/node/session';
import type { CredentialsProvider } from '../../src/core/ssh/credentials';
import { uploadArchive } from '../../src/core/usecases/upload';
import type { NodeDef, NodeInput } from '../../src/shared/domain/nodes';
import { labNodeDef, runCli, tempHome } from './support';

const USER = labUserName('hfop');
const NOSUDO = labUserName('hfnosudo');
// Secrets: none of these may ever show up in an error, a hint or CLI output.
const PASSWORD = 'pw-S3cret "quoted" $(echo no)';
const PASSPHRASE = 'kp-Secr3t passphrase';
const WRONG = 'wrong-Secr3t-guess';
const SECRETS = [PASSWORD, PASSPHRASE, WRONG];
const seen: string[] = [];

let lab: Lab;
let home: string;
let work: string;

function record(e: unknown): HoldfastError {
  expect(e).toBeInstanceOf(HoldfastError);
  const h = e as HoldfastError;
  seen.push(h.message, h.hint ?? '', JSON.stringify(h.toInfo()), String((h.cause as Error | undefined)?.message ?? ''));
  return h;
}

async function openError(def: NodeDef, opts: OpenNodeOptions = {}): Promise<HoldfastError> {
  try {
    const s = await NodeSession.open(def, opts);
    await s.close();
  } catch (e) {
    return record(e);
  }
  throw new Error(`expected opening ${def.name} to fail`);
}

async function cli(args: string[], expectCode = 0, env: NodeJS.ProcessEnv = {}) {
  const r = await runCli(args, { HOLDFAST_HOME: home, ...env });
  seen.push(r.stdout, r.stderr);
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return r;
}

const sudoDef = (node: LabNodeHandle, over: Partial<NodeInput> = {}) => labNodeDef(lab, node, { user: USER, sudo: true, ...over });
const sha256File = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const ctx = (): OpsContext => ({ audit: new AuditLog(home), indexCache: new IndexCache(path.join(home, 'cache')) });

beforeAll(async () => {
  lab = await startLab({ nodes: ['sa', 'sb', 'j1', 'j2'], users: [{ name: USER, sudo: 'nopasswd', password: PASSWORD }, { name: NOSUDO }] });
  home = tempHome();
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-access-'));
});

afterAll(async () => {
  await lab?.stop();
});

describe('a non-root user with sudo', () => {
  it('finds the socket and images dir root-only, and cannot use them without sudo', async () => {
    const sa = lab.node('sa');
    expect(await sa.statInNode('/run/k3s/containerd/containerd.sock')).toBe('srw-rw---- root root');
    expect(await sa.statInNode('/var/lib/rancher/k3s/agent/images')).toBe('drwx------ root root');
    let failed: unknown;
    try {
      const s = await NodeSession.open(labNodeDef(lab, sa, { user: USER }));
      try {
        await s.detect();
      } finally {
        await s.close();
      }
    } catch (e) {
      failed = e;
    }
    expect(failed).toBeInstanceOf(HoldfastError);
  });

  it('lists, pins through the CLI, uploads root-owned and verified, and removes an archive', async () => {
    const sa = lab.node('sa');
    await writeImageArchive(path.join(sa.hostImagesDir, 'app.tar.zst'), { format: 'oci', compression: 'zstd', images: [{ name: 'docker.io/library/app:1.0' }] });
    await emulateK3sStart(sa);
    await cli(['node', 'add', 'sa', '--host', sa.host, '--port', String(sa.port), '--user', USER, '--sudo', '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);

    const listed = (JSON.parse((await cli(['archives', 'sa', '--json'])).stdout) as { archives: { path: string; images: string[]; imported: boolean }[] }).archives;
    expect(listed.find((a) => a.path === 'app.tar.zst')).toMatchObject({ images: ['docker.io/library/app:1.0'], imported: true });

    await cli(['pin', 'sa', '--archive', 'app.tar.zst']);
    expect(await labelsOf(sa, 'docker.io/library/app:1.0')).toMatchObject({ 'io.cri-containerd.pinned': 'pinned' });
    expect((await labelsOf(sa, 'docker.io/library/app:1.0'))['io.cattle.k3s.pinned']).toBeUndefined();

    // Upload: lands root-owned 0644, verified, nothing left in the user's staging dir or as a partial.
    const local = path.join(work, 'web.tar.gz');
    await writeImageArchive(local, { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/web:2.0' }] });
    const s = await NodeSession.open(sudoDef(sa));
    try {
      expect(s.tunnel.mode).toBe('exec');
      expect(s.files.mode).toBe('sudo');
      const up = await uploadArchive(s, local, { remoteName: 'apps/web.tar.gz' });
      expect(up).toMatchObject({ sha256: sha256File(local), alreadyPresent: false, resumedFrom: 0 });
      expect(await sa.statInNode('/var/lib/rancher/k3s/agent/images/apps/web.tar.gz')).toBe('-rw-r--r-- root root');
      expect(sha256File(path.join(sa.hostImagesDir, 'apps', 'web.tar.gz'))).toBe(up.sha256);
      expect(readdirSync(path.join(sa.hostImagesDir, 'apps'))).toEqual(['web.tar.gz']);
      expect(readdirSync(`/home/${USER}/.holdfast-staging`)).toEqual([]);
      // Same archive again: already there. A different one under the name: never overwritten.
      expect(await uploadArchive(s, local, { remoteName: 'apps/web.tar.gz' })).toMatchObject({ alreadyPresent: true, bytesSent: 0 });
      // (gzip, like the name says: an uncompressed tar is refused under a .tar.gz name before any check)
      const other = path.join(work, 'other.tar.gz');
      await writeImageArchive(other, { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/other:1' }] });
      await expect(uploadArchive(s, other, { remoteName: 'apps/web.tar.gz' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(sha256File(path.join(sa.hostImagesDir, 'apps', 'web.tar.gz'))).toBe(up.sha256);
      const inv = await readInventory(s);
      expect(inv.archives.map((a) => a.path).sort()).toEqual(['app.tar.zst', 'apps/web.tar.gz']);
    } finally {
      await s.close();
    }

    // Remove through the CLI: allowed (images durably pinned), gone from the node.
    await cli(['rm-archive', 'sa', 'app.tar.zst']);
    expect(existsSync(path.join(sa.hostImagesDir, 'app.tar.zst'))).toBe(false);
  });

  it('resumes an upload from the user\'s own staging file, and installs it root-owned and whole', async () => {
    const sa = lab.node('sa');
    const local = path.join(work, 'half.tar');
    await writeImageArchive(local, { format: 'oci', images: [{ name: 'docker.io/library/half:1', layerBytes: 6 * 1024 * 1024 }] });
    const bytes = readFileSync(local);
    const half = Math.floor(bytes.length / 2);
    // What an upload cut off halfway leaves under sudo: the first half in ~/.holdfast-staging,
    // owned by the SSH user, under the name derived from the final path.
    const remote = '/var/lib/rancher/k3s/agent/images/half.tar';
    const dir = `/home/${USER}/.holdfast-staging`;
    const partial = path.join(dir, `${createHash('sha256').update(remote).digest('hex').slice(0, 32)}.partial`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(partial, bytes.subarray(0, half), { mode: 0o600 });
    execFileSync('chown', [`${USER}:`, dir, partial]);
    const s = await NodeSession.open(sudoDef(sa));
    try {
      const notices: string[] = [];
      const up = await uploadArchive(s, local, { onNotice: (n) => notices.push(n) });
      expect(notices.filter((n) => /partial upload/.test(n))).toEqual([expect.stringMatching(/^resuming the partial upload on sa at /)]);
      expect(up).toMatchObject({ sha256: sha256File(local), resumedFrom: half, bytesSent: bytes.length - half, alreadyPresent: false });
      expect(await sa.statInNode(remote)).toBe('-rw-r--r-- root root');
      expect(sha256File(path.join(sa.hostImagesDir, 'half.tar'))).toBe(sha256File(local));
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('passes names with spaces, quotes, $(…), ; and newlines to the node literally', async () => {
    const sa = lab.node('sa');
    const name = "a b'c$(touch x);d\n\"e\" `touch y`.tar";
    const local = path.join(work, 'plain.tar');
    await writeImageArchive(local, { format: 'oci', compression: 'none', images: [{ name: 'docker.io/library/odd:1' }] });
    const s = await NodeSession.open(sudoDef(sa));
    try {
      const up = await uploadArchive(s, local, { remoteName: `odd dir;$(touch x)/${name}` });
      expect(existsSync(path.join(sa.hostImagesDir, 'odd dir;$(touch x)', name))).toBe(true);
      const inv = await readInventory(s);
      const f = inv.archives.find((a) => a.path === `odd dir;$(touch x)/${name}`);
      expect(f).toMatchObject({ images: ['docker.io/library/odd:1'] }); // read through sudo cat
      await removeArchiveSafely(s, ctx(), up.relPath, { force: true });
      expect(existsSync(path.join(sa.hostImagesDir, 'odd dir;$(touch x)', name))).toBe(false);
    } finally {
      await s.close();
    }
    for (const dir of [`/home/${USER}`, '/root', sa.hostRootHome, '/', '/tmp', process.cwd(), sa.hostImagesDir, path.join(sa.hostImagesDir, 'odd dir;$(touch x)')]) {
      expect(existsSync(path.join(dir, 'x')), `${dir}/x`).toBe(false);
      expect(existsSync(path.join(dir, 'y')), `${dir}/y`).toBe(false);
    }
  });

  it('falls back to python3, then perl, when socat is missing, and says what to install when nothing is left', async () => {
    const sb = lab.node('sb');
    await sb.hideBinary('/usr/bin/socat');
    for (const expected of ['python3', 'perl'] as const) {
      const s = await NodeSession.open(sudoDef(sb));
      try {
        expect(s.tunnel.bridge).toBe(expected);
        expect((await s.detect()).containerdVersion).toMatch(/\d+\.\d+/);
        // a large gRPC answer through the bridge
        expect(Array.isArray(await s.listBaseImages())).toBe(true);
      } finally {
        await s.close();
      }
      await sb.hideBinary(expected === 'python3' ? '/usr/bin/python3' : '/usr/bin/perl');
    }
    const err = await openError(sudoDef(sb));
    expect(err.code).toBe('CONTAINERD_UNAVAILABLE');
    expect(err.hint).toMatch(/install socat/i);
  });

  it('names the sudoers line when sudo wants a password', async () => {
    const err = await openError(labNodeDef(lab, lab.node('j1'), { user: NOSUDO, sudo: true }));
    expect(err.message).toMatch(/sudo/);
    expect(err.code).toBe('REFUSED');
    expect(err.hint).toContain(`${NOSUDO} ALL=(root) NOPASSWD: ALL`);
  });
});

describe('jump hosts', () => {
  it('reaches a node through a two-hop chain, each hop verified against its own known_hosts', async () => {
    const [j1, j2, sa] = [lab.node('j1'), lab.node('j2'), lab.node('sa')];
    await j1.configureSshd({ logLevel: 'DEBUG1' });
    await j2.configureSshd({ logLevel: 'DEBUG1' });
    // each hop has its own known_hosts file holding only its own key
    const kh = (n: LabNodeHandle) => {
      const f = path.join(work, `kh-${n.name}`);
      writeFileSync(f, n.knownHostsLine + '\n');
      return f;
    };
    const defs = new Map<string, NodeDef>([
      ['j1', labNodeDef(lab, j1, { knownHosts: kh(j1) })],
      ['j2', labNodeDef(lab, j2, { knownHosts: kh(j2), jump: 'j1' })],
    ]);
    const resolveNode = async (n: string) => {
      const d = defs.get(n);
      if (!d) throw new Error(`no node ${n}`);
      return d;
    };
    const target = labNodeDef(lab, sa, { knownHosts: kh(sa), jump: 'j2', user: USER, sudo: true });
    const s = await NodeSession.open(target, { resolveNode });
    try {
      expect((await s.detect()).containerdVersion).toMatch(/\d/);
      expect(s.ssh.hostKeyFingerprint).toBe(sa.hostKeyFingerprint);
      expect(s.ssh.via?.hostKeyFingerprint).toBe(j2.hostKeyFingerprint);
      expect(s.ssh.via?.via?.hostKeyFingerprint).toBe(j1.hostKeyFingerprint);
      expect(s.ssh.via?.via?.via).toBeUndefined();
      // The forwarding really happened on the hops: j1 opened a channel to j2, j2 one to sa.
      expect(await j1.sshdLog()).toMatch(new RegExp(`target 127\\.0\\.0\\.1 port ${j2.port}\\b`));
      expect(await j2.sshdLog()).toMatch(new RegExp(`target 127\\.0\\.0\\.1 port ${sa.port}\\b`));
    } finally {
      await s.close();
    }
    expect(s.ssh.via?.closed).toBe(true);
    expect(s.ssh.via?.via?.closed).toBe(true);

    // A hop whose key is not in its known_hosts is refused, naming the hop.
    defs.set('j1', labNodeDef(lab, j1, { knownHosts: kh(j2) }));
    const err = await openError(target, { resolveNode });
    expect(err.code).toBe('HOST_KEY_UNKNOWN');
    expect(err.message).toMatch(/^Jump host j1: /);
    expect(err.fingerprint).toBe(j1.hostKeyFingerprint);

    // A cycle is refused before any connection.
    defs.set('j1', labNodeDef(lab, j1, { knownHosts: kh(j1), jump: 'j2' }));
    const cyc = await openError(target, { resolveNode });
    expect(cyc.code).toBe('INVALID_INPUT');
    expect(cyc.message).toMatch(/cycle: sa → j2 → j1 → j2/);
  });

  it('notices a dropped hop and reconnects on the next call (SessionPool)', async () => {
    const [j1, sa] = [lab.node('j1'), lab.node('sa')];
    const defs = new Map<string, NodeDef>([
      ['j1', labNodeDef(lab, j1)],
      ['sa', labNodeDef(lab, sa, { jump: 'j1' })],
    ]);
    const pool = new SessionPool(async (n) => defs.get(n)!);
    try {
      const first = await pool.get('sa');
      await first.detect();
      // the network to the first hop goes away
      (first.ssh.via!.client as unknown as { _sock: { destroy(): void } })._sock.destroy();
      for (let i = 0; i < 100 && !first.isClosed; i++) await new Promise((r) => setTimeout(r, 20));
      expect(first.isClosed).toBe(true);
      const info = await pool.use('sa', (s) => s.detect());
      expect(info.containerdVersion).toMatch(/\d/);
      const second = await pool.get('sa');
      expect(second).not.toBe(first);
    } finally {
      await pool.closeAll();
    }
  });
});

describe('authentication', () => {
  it('uses an encrypted key held by ssh-agent (SSH_AUTH_SOCK)', async () => {
    const key = path.join(work, 'agent_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'agent', '-f', key]);
    appendFileSync(path.join(lab.dir, 'authorized_keys'), readFileSync(key + '.pub'));
    const sock = path.join(work, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    const askpass = path.join(work, 'askpass.sh');
    writeFileSync(askpass, '#!/bin/sh\nprintf "%s\\n" "$HF_TEST_PASSPHRASE"\n', { mode: 0o700 });
    const saved = process.env.SSH_AUTH_SOCK;
    try {
      for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 20));
      execFileSync('ssh-add', [key], {
        env: { ...process.env, SSH_AUTH_SOCK: sock, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0', HF_TEST_PASSPHRASE: PASSPHRASE },
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      process.env.SSH_AUTH_SOCK = sock;
      const def = labNodeDef(lab, lab.node('j2'));
      delete def.identity;
      const s = await NodeSession.open(def);
      await s.close();
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
      agent.kill('SIGTERM');
    }
  });

  it('asks the credentials provider for the passphrase of RSA, ECDSA and Ed25519 keys, again when wrong', async () => {
    for (const [type, extra] of [['rsa', ['-b', '2048', '-m', 'PEM']], ['ecdsa', ['-b', '256']], ['ed25519', []]] as const) {
      const key = path.join(work, `enc_${type}`);
      execFileSync('ssh-keygen', ['-q', '-t', type, ...extra, '-N', PASSPHRASE, '-C', type, '-f', key]);
      appendFileSync(path.join(lab.dir, 'authorized_keys'), readFileSync(key + '.pub'));
      const def = labNodeDef(lab, lab.node('j2'), { identity: key });

      const noProvider = await openError(def);
      expect(noProvider.code).toBe('AUTH_FAILED');
      expect(noProvider.message).toMatch(/encrypted and no passphrase/);

      const asked: string[] = [];
      const answers = [WRONG, PASSPHRASE];
      const credentials: CredentialsProvider = { passphrase: async (p) => (asked.push(p), answers.shift()!) };
      const s = await NodeSession.open(def, { credentials });
      expect(s.ssh.nativeAuth).toBeNull(); // the passphrase stays in this process: no OpenSSH client gets the key
      await s.close();
      expect(asked).toEqual([key, key]);

      const alwaysWrong = await openError(def, { credentials: { passphrase: async () => WRONG } });
      expect(alwaysWrong.message).toMatch(/passphrase .* is wrong/);
    }
  });

  it('logs in with a password or keyboard-interactive answers, and fails fast and clean when wrong', async () => {
    const j2 = lab.node('j2');
    await j2.configureSshd({ passwordAuthentication: true, kbdInteractiveAuthentication: true });
    const base = labNodeDef(lab, j2, { user: USER, sudo: true });
    delete base.identity;

    const asked: string[] = [];
    const s = await NodeSession.open({ ...base, auth: 'password' }, { credentials: { password: async (u, h) => (asked.push(`${u}@${h}`), PASSWORD) } });
    expect(s.ssh.nativeAuth).toBeNull();
    await s.close();
    expect(asked).toEqual([`${USER}@127.0.0.1`]);

    const prompts: string[] = [];
    const k = await NodeSession.open(
      { ...base, auth: 'keyboard-interactive' },
      { credentials: { keyboardInteractive: async (ps) => (prompts.push(...ps.map((p) => p.prompt)), ps.map(() => PASSWORD)) } },
    );
    await k.close();
    expect(prompts.join(' ')).toMatch(/password/i);

    const wrong = await openError({ ...base, auth: 'password' }, { credentials: { password: async () => WRONG } });
    expect(wrong.code).toBe('AUTH_FAILED');

    const cancelled = await openError({ ...base, auth: 'keyboard-interactive' }, { credentials: { keyboardInteractive: async () => Promise.reject(new Error(`user said no ${PASSWORD}`)) } });
    expect(cancelled.message).toMatch(/cancelled/);

    // A server asking keyboard-interactive questions of a key-only client never hangs it.
    const noAnswer = await openError({ ...base, auth: 'keyboard-interactive' }, { credentials: { password: async () => WRONG } });
    expect(noAnswer.code).toBe('AUTH_FAILED');
  });
});

describe('host keys', () => {
  it('accepts hashed known_hosts entries ([host]:port form)', async () => {
    const kh = path.join(work, 'known_hosts_hashed');
    copyFileSync(lab.knownHosts, kh);
    execFileSync('ssh-keygen', ['-H', '-f', kh], { stdio: 'ignore' });
    expect(readFileSync(kh, 'utf8')).not.toContain('127.0.0.1');
    const s = await NodeSession.open(labNodeDef(lab, lab.node('j1'), { knownHosts: kh }));
    await s.close();
  });

  it('refuses a changed key with both fingerprints and the line to check, and an unknown host in the CLI', async () => {
    const [j1, j2] = [lab.node('j1'), lab.node('j2')];
    const kh = path.join(work, 'known_hosts_changed');
    const j2Key = j2.knownHostsLine.split(' ').slice(1).join(' ');
    writeFileSync(kh, `# a comment\n[127.0.0.1]:${j1.port} ${j2Key}\n`);
    const err = await openError(labNodeDef(lab, j1, { knownHosts: kh }));
    expect(err.code).toBe('HOST_KEY_CHANGED');
    expect(err.fingerprint).toBe(j1.hostKeyFingerprint);
    expect(err.expectedFingerprint).toBe(j2.hostKeyFingerprint);
    expect(err.message).toContain(j1.hostKeyFingerprint);
    expect(err.message).toContain(j2.hostKeyFingerprint);
    expect(err.hint).toContain(`${kh} line 2`);
    expect(err.hint).toContain(`ssh-keygen -R '[127.0.0.1]:${j1.port}'`);

    const empty = path.join(work, 'known_hosts_empty');
    writeFileSync(empty, '');
    const r = await cli(['node', 'add', 'newbie', '--host', j1.host, '--port', String(j1.port), '--identity', lab.clientKey, '--known-hosts', empty], 1).catch(async () =>
      runCli(['node', 'add', 'newbie', '--host', j1.host, '--port', String(j1.port), '--identity', lab.clientKey, '--known-hosts', empty], { HOLDFAST_HOME: home }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(j1.hostKeyFingerprint);
    expect(r.stderr).toContain('--accept-new-host-key');
    expect(readFileSync(empty, 'utf8')).toBe('');
    await cli(['node', 'add', 'newbie', '--host', j1.host, '--port', String(j1.port), '--identity', lab.clientKey, '--known-hosts', empty, `--accept-new-host-key=${j1.hostKeyFingerprint}`]);
    expect(readFileSync(empty, 'utf8')).toContain(`[127.0.0.1]:${j1.port} ssh-ed25519 `);
  });
});

describe('secrets', () => {
  it('never appear in any error, hint or CLI output seen above', () => {
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});
