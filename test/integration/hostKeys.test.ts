// First contact trusts only the key the user checked (issue #11, item 2): --accept-new-host-key
// takes the fingerprint, once per new host of a jump chain; the bare flag shows each fingerprint
// and asks on a terminal, and refuses without one naming the exact flag. And a host whose
// known_hosts entry is its ECDSA key (as OpenSSH often wrote it) connects, as with OpenSSH,
// although the server also has an ed25519 key.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { NodeSession } from '../../src/core/node/session';
import { shellQuote } from '../../src/core/ssh/quote';
import { labNodeDef, repoRoot, runCli, tempHome, type CliResult } from './support';

let lab: Lab;

beforeAll(async () => {
  lab = await startLab({ nodes: ['hk1', 'hk2', 'hk3'] });
});

afterAll(async () => {
  await lab?.stop();
});

const addArgs = (name: string, n: LabNodeHandle, kh: string, more: string[] = []) => [
  'node', 'add', name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', kh, ...more,
];

function emptyKnownHosts(): { home: string; kh: string } {
  const home = tempHome();
  const kh = path.join(home, 'known_hosts');
  writeFileSync(kh, '');
  return { home, kh };
}

const nodeNames = async (home: string) => (JSON.parse((await runCli(['node', 'ls', '--json'], { HOLDFAST_HOME: home })).stdout) as { name: string }[]).map((n) => n.name);

/**
 * Runs the CLI on a real pseudo-terminal (util-linux `script`), answering each "[y/N]" question
 * with the next answer. The output is what the terminal showed.
 */
function runCliOnTty(args: string[], env: NodeJS.ProcessEnv, answers: string[]): Promise<CliResult & { asked: number }> {
  const started = Date.now();
  const command = shellQuote([process.execPath, path.join(repoRoot, 'bin', 'holdfast.mjs'), ...args]);
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let asked = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const questions = out.split('[y/N]').length - 1;
      while (asked < questions) {
        child.stdin.write(`${answers[asked] ?? ''}\r`);
        asked++;
      }
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out, stderr: err, ms: Date.now() - started, asked });
    });
  });
}

describe('--accept-new-host-key with the fingerprint the user checked', () => {
  it('records the key only when it has the given fingerprint', async () => {
    const n = lab.node('hk1');
    const other = lab.node('hk2');
    const { home, kh } = emptyKnownHosts();

    const wrong = await runCli(addArgs('hk1', n, kh, [`--accept-new-host-key=${other.hostKeyFingerprint}`]), { HOLDFAST_HOME: home });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain(n.hostKeyFingerprint);
    expect(wrong.stderr).toContain('not the fingerprint you accepted');
    expect(readFileSync(kh, 'utf8')).toBe('');
    expect(await nodeNames(home)).toEqual([]);

    // The form of the hint works as written (bare digest, without "SHA256:", is taken too).
    const ok = await runCli(addArgs('hk1', n, kh, ['--accept-new-host-key', n.hostKeyFingerprint.slice('SHA256:'.length)]), { HOLDFAST_HOME: home });
    expect(ok.stderr).toBe(`recording host key ssh-ed25519 ${n.hostKeyFingerprint} of 127.0.0.1:${n.port} in ${kh}\n`);
    expect(ok.code).toBe(0);
    expect(readFileSync(kh, 'utf8')).toBe(`${n.knownHostsLine}\n`);
    expect(await nodeNames(home)).toEqual(['hk1']);
  });

  it('refuses a value that is not a fingerprint as a usage error', async () => {
    const { home, kh } = emptyKnownHosts();
    // `--accept-new-host-key hk1` would otherwise swallow the node name as the fingerprint.
    const r = await runCli(['node', 'add', '--accept-new-host-key', 'hk1', '--host', '127.0.0.1', '--known-hosts', kh, '--no-check'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SHA256');
    expect(await nodeNames(home)).toEqual([]);
  });

  it('bare, without a terminal: records nothing and names the exact flag to pass (exit 3)', async () => {
    const n = lab.node('hk1');
    const { home, kh } = emptyKnownHosts();
    const r = await runCli(addArgs('hk1', n, kh, ['--accept-new-host-key']), { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no terminal to confirm it on');
    expect(r.stderr).toContain(`--accept-new-host-key=${n.hostKeyFingerprint}`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(kh, 'utf8')).toBe('');
    expect(await nodeNames(home)).toEqual([]);

    // Exactly that flag, pasted, works.
    const flag = /(--accept-new-host-key=SHA256:[A-Za-z0-9+/]+)/.exec(r.stderr)![1]!;
    const again = await runCli(addArgs('hk1', n, kh, [flag]), { HOLDFAST_HOME: home });
    expect(again.code).toBe(0);
    expect(readFileSync(kh, 'utf8')).toBe(`${n.knownHostsLine}\n`);
  });

  it('bare, on a terminal: shows the fingerprint and records only on "y"', async () => {
    const n = lab.node('hk1');
    const { home, kh } = emptyKnownHosts();

    const no = await runCliOnTty(addArgs('hk1', n, kh, ['--accept-new-host-key']), { HOLDFAST_HOME: home }, ['n']);
    expect(no.asked).toBe(1);
    expect(no.stdout).toContain(n.hostKeyFingerprint);
    expect(no.code).toBe(3);
    expect(readFileSync(kh, 'utf8')).toBe('');
    expect(await nodeNames(home)).toEqual([]);

    // Enter alone is "no" too.
    const enter = await runCliOnTty(addArgs('hk1', n, kh, ['--accept-new-host-key']), { HOLDFAST_HOME: home }, ['']);
    expect(enter.code).toBe(3);
    expect(readFileSync(kh, 'utf8')).toBe('');

    const yes = await runCliOnTty(addArgs('hk1', n, kh, ['--accept-new-host-key']), { HOLDFAST_HOME: home }, ['y']);
    expect(yes.asked).toBe(1);
    expect(yes.code).toBe(0);
    expect(readFileSync(kh, 'utf8')).toBe(`${n.knownHostsLine}\n`);
    expect(await nodeNames(home)).toEqual(['hk1']);
  });
});

describe('jump chains: one fingerprint per new hop', () => {
  // hk2 is reached through hk1; both are new to the known_hosts file.
  async function chainHome(): Promise<{ home: string; kh: string }> {
    const { home, kh } = emptyKnownHosts();
    const r = await runCli(addArgs('bastion', lab.node('hk1'), kh, ['--no-check']), { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    return { home, kh };
  }
  const [bastion, inner] = [() => lab.node('hk1'), () => lab.node('hk2')];

  it('the node\'s fingerprint alone does not accept the jump host: refused at the hop, which the hint names', async () => {
    const { home, kh } = await chainHome();
    const r = await runCli(addArgs('inner', inner(), kh, ['--jump', 'bastion', `--accept-new-host-key=${inner().hostKeyFingerprint}`]), { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^holdfast: Jump host bastion: /);
    expect(r.stderr).toContain(`--accept-new-host-key=${bastion().hostKeyFingerprint} for bastion`);
    expect(readFileSync(kh, 'utf8')).toBe('');
    expect(await nodeNames(home)).toEqual(['bastion']);
  });

  it('each flag records exactly its hop\'s key, in any order', async () => {
    const { home, kh } = await chainHome();
    const r = await runCli(
      addArgs('inner', inner(), kh, ['--jump', 'bastion', `--accept-new-host-key=${inner().hostKeyFingerprint}`, `--accept-new-host-key=${bastion().hostKeyFingerprint}`]),
      { HOLDFAST_HOME: home },
    );
    // Each recorded key is named with its hop.
    expect(r.stderr.trim().split('\n')).toEqual([
      `recording host key ssh-ed25519 ${bastion().hostKeyFingerprint} of jump host bastion (127.0.0.1:${bastion().port}) in ${kh}`,
      `recording host key ssh-ed25519 ${inner().hostKeyFingerprint} of 127.0.0.1:${inner().port} in ${kh}`,
    ]);
    expect(r.code).toBe(0);
    expect(readFileSync(kh, 'utf8').trim().split('\n').sort()).toEqual([bastion().knownHostsLine, inner().knownHostsLine].sort());
    expect(await nodeNames(home)).toEqual(['bastion', 'inner']);
  });

  it('bare on a terminal: asks once per new hop, naming the jump host', async () => {
    const { home, kh } = await chainHome();
    // "y" for the jump host, "n" for the node: the jump host's key is recorded, the node's not.
    const r = await runCliOnTty(addArgs('inner', inner(), kh, ['--jump', 'bastion', '--accept-new-host-key']), { HOLDFAST_HOME: home }, ['y', 'n']);
    expect(r.asked).toBe(2);
    expect(r.stdout).toContain('jump host bastion');
    expect(r.stdout).toContain(bastion().hostKeyFingerprint);
    expect(r.stdout).toContain(inner().hostKeyFingerprint);
    expect(r.code).toBe(3);
    expect(readFileSync(kh, 'utf8')).toBe(`${bastion().knownHostsLine}\n`);
    expect(await nodeNames(home)).toEqual(['bastion']);
  });

  it('the app\'s "trust this key" (one fingerprint) works for a jump host too', async () => {
    const { kh } = emptyKnownHosts();
    const hop = labNodeDef(lab, bastion(), { name: 'bastion', knownHosts: kh });
    const node = labNodeDef(lab, inner(), { name: 'inner', knownHosts: kh, jump: 'bastion' });
    const resolveNode = async () => hop;
    const s1 = await NodeSession.open(node, { resolveNode, acceptNewHostKey: bastion().hostKeyFingerprint }).then(
      (s) => s.close().then(() => 'connected'),
      (e: { code?: string; fingerprint?: string }) => `${e.code} ${e.fingerprint}`,
    );
    // The hop was recorded; the node itself, with another key, was not.
    expect(s1).toBe(`HOST_KEY_UNKNOWN ${inner().hostKeyFingerprint}`);
    expect(readFileSync(kh, 'utf8')).toBe(`${bastion().knownHostsLine}\n`);
  });
});

describe('host key algorithms follow known_hosts', () => {
  it('connects to a node with ed25519 and ECDSA keys whose known_hosts holds the ECDSA key, as OpenSSH does', async () => {
    const n = lab.node('hk3');
    const ecdsa = await n.addHostKey('ecdsa');
    const { home, kh } = emptyKnownHosts();
    writeFileSync(kh, `${ecdsa.knownHostsLine}\n`);

    // OpenSSH itself, strict, with only that file: connects.
    const ssh = await promisify(execFile)('ssh', [
      '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${kh}`, '-o', 'GlobalKnownHostsFile=/dev/null',
      '-i', lab.clientKey, '-p', String(n.port), 'root@127.0.0.1', 'true',
    ]);
    expect(ssh.stderr).not.toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED/);

    const s = await NodeSession.open(labNodeDef(lab, n, { knownHosts: kh }));
    try {
      expect(s.ssh.hostKeyFingerprint).toBe(ecdsa.fingerprint);
    } finally {
      await s.close();
    }
    // The CLI too, and the file is left as it was.
    const r = await runCli(addArgs('hk3', n, kh), { HOLDFAST_HOME: home });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(kh, 'utf8')).toBe(`${ecdsa.knownHostsLine}\n`);

    // A hashed entry (ssh-keygen -H) is read the same way.
    await promisify(execFile)('ssh-keygen', ['-H', '-f', kh]);
    expect(existsSync(`${kh}.old`)).toBe(true);
    const hashed = await NodeSession.open(labNodeDef(lab, n, { knownHosts: kh }));
    expect(hashed.ssh.hostKeyFingerprint).toBe(ecdsa.fingerprint);
    await hashed.close();

    // With the ed25519 entry on record instead, the ed25519 key is the one presented.
    writeFileSync(kh, `${n.knownHostsLine}\n`);
    const ed = await NodeSession.open(labNodeDef(lab, n, { knownHosts: kh }));
    expect(ed.ssh.hostKeyFingerprint).toBe(n.hostKeyFingerprint);
    await ed.close();
  });
});

describe('a node whose host key changed, trusted again from the CLI (#49)', () => {
  it('every hint names a command that works; node edit --accept-new-host-key compares and records the key', async () => {
    const [n, other] = [lab.node('hk1'), lab.node('hk2')];
    const { home, kh } = emptyKnownHosts();
    // On record for hk1's address: another key (the node was reinstalled, say).
    writeFileSync(kh, `[127.0.0.1]:${n.port} ${other.knownHostsLine.split(' ').slice(1).join(' ')}\n`);
    expect((await runCli(addArgs('hk1', n, kh, ['--no-check']), { HOLDFAST_HOME: home })).code).toBe(0);
    const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home });
    const trustCommand = (stderr: string) => /holdfast (node edit \S+ --accept-new-host-key=\S+?)\.?(?:\s|$)/.exec(stderr)?.[1]?.split(' ');

    // Changed: refused, naming the entry to remove and then the command that trusts the new key.
    const changed = await cli(['images', 'hk1']);
    expect(changed.code).toBe(3);
    expect(changed.stderr).toContain(`has changed: it now presents ssh-ed25519 ${n.hostKeyFingerprint}`);
    expect(trustCommand(changed.stderr)).toEqual(['node', 'edit', 'hk1', `--accept-new-host-key=${n.hostKeyFingerprint}`]);
    // The flag does not override a changed key: the old entry goes first, as the hint says.
    const early = await cli(['node', 'edit', 'hk1', `--accept-new-host-key=${n.hostKeyFingerprint}`]);
    expect(early.code).toBe(3);
    expect(early.stderr).toContain('has changed');
    expect(early.stderr).not.toContain('nothing to change');
    const removal = /\((ssh-keygen -R [^)]+)\)/.exec(changed.stderr)![1]!;
    await promisify(execFile)('sh', ['-c', removal]);
    expect(readFileSync(kh, 'utf8')).not.toContain(`:${n.port}]`);

    // Unknown now: `images` takes no --accept-new-host-key, so its hint names node edit.
    const unknown = await cli(['images', 'hk1']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).not.toMatch(/re-run with|--accept-new-host-key=\S+ for/);
    const command = trustCommand(unknown.stderr)!;
    expect(command).toEqual(['node', 'edit', 'hk1', `--accept-new-host-key=${n.hostKeyFingerprint}`]);
    // The fleet commands name it too, on the node's line.
    const archive = path.join(home, 'app.tar');
    await writeImageArchive(archive, { format: 'oci', images: [{ name: 'docker.io/library/hk-app:1.0' }] });
    for (const args of [['inspect', 'hk1'], ['prune', 'hk1', '--dry-run'], ['import', 'hk1', archive]]) {
      const r = await cli(args);
      expect(`${r.stdout}${r.stderr}`.replace(/\s+/g, ' '), args[0]).toContain(`To trust it: holdfast node edit hk1 --accept-new-host-key=${n.hostKeyFingerprint}`);
    }

    // Another fingerprint than the node offers: refused, nothing recorded.
    const wrong = await cli(['node', 'edit', 'hk1', `--accept-new-host-key=${other.hostKeyFingerprint}`]);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain(n.hostKeyFingerprint);
    expect(readFileSync(kh, 'utf8')).not.toContain(`:${n.port}]`);

    // The command of the hint, as printed: connects, compares, records.
    const ok = await cli(command);
    expect(ok.stderr).toBe(`recording host key ssh-ed25519 ${n.hostKeyFingerprint} of 127.0.0.1:${n.port} in ${kh}\n`);
    expect(ok.stdout.trim()).toBe('hk1: host key recorded; nothing else to change (checked)');
    expect(ok.code).toBe(0);
    expect(readFileSync(kh, 'utf8')).toContain(n.knownHostsLine);
    expect((await cli(['images', 'hk1'])).code).toBe(0);

    // On record now: the right fingerprint says so; another one is refused, nothing saved.
    const again = await cli(command);
    expect(again.stdout.trim()).toBe(`hk1: host key ${n.hostKeyFingerprint} already on record; nothing else to change (checked)`);
    const mismatch = await cli(['node', 'edit', 'hk1', '--group', 'g', `--accept-new-host-key=${other.hostKeyFingerprint}`]);
    expect(mismatch.code).toBe(3);
    expect(mismatch.stderr).toContain(`hk1 offers host key ${n.hostKeyFingerprint}, already on record, not the fingerprint you gave`);
    expect((JSON.parse((await cli(['node', 'ls', '--json'])).stdout) as { group?: string }[])[0]!.group).toBeUndefined();
  });
});
