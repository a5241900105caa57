// Two access errors that pointed the wrong way (issue #33), each provoked on lab nodes through the
// real CLI: a login without sudo on a root-only (0700) images dir read "Permission denied" on every
// read of the images dir (archives, images' archive lookup, inspect, prune); a login without sudo
// that may not open containerd's root-only socket read "containerd is not answering". Each now
// names who may not do what, where, and the way past it — and that way is shown to work.
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { runCli, tempHome, type CliResult } from './support';

const NOSUDO = labUserName('hfeanos');
const SUDOER = labUserName('hfeasu');
const NOLOGIN = labUserName('hfeanl');
const IMAGES_DIR = '/var/lib/rancher/k3s/agent/images';
const SOCKET = '/run/k3s/containerd/containerd.sock';

let lab: Lab;
let home: string;

async function cli(args: string[], expectCode = 0): Promise<CliResult> {
  const r = await runCli(args, { HOLDFAST_HOME: home });
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return r;
}

const nodeNames = async () => (JSON.parse((await cli(['node', 'ls', '--json'])).stdout) as { name: string }[]).map((n) => n.name);

/** A command line as sh splits it into words (quotes undone), for running a suggested command as printed. */
const shellWords = (line: string): string[] => execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);

const addArgs = (name: string, n: LabNodeHandle, extra: string[] = []) => ['node', 'add', name, '--host', n.host, '--port', String(n.port), '--known-hosts', lab.knownHosts, '--identity', lab.clientKey, ...extra];

beforeAll(async () => {
  // With users, every node's images dir is root-only (0700), as on a real k3s node.
  lab = await startLab({ nodes: ['ea1', 'ea2'], users: [{ name: NOSUDO }, { name: SUDOER, sudo: 'nopasswd' }, { name: NOLOGIN, sudo: 'nopasswd' }] });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
});

describe('a containerd socket the login may not open', () => {
  it('says the socket is there but the user may not open it, and how to get past it; a missing socket keeps its own message', async () => {
    const ea1 = lab.node('ea1');
    // As on k3s: the socket is root's, and only root's group may connect.
    await ea1.execInNode(['chmod', '0660', SOCKET]);
    expect(await ea1.statInNode(SOCKET)).toBe('srw-rw---- root root');

    const r = await cli(addArgs('ea1ns', ea1, ['--user', NOSUDO]), 3);
    // ea1ns was never saved: the way past it is the same node add with --sudo, not node edit (#49).
    expect(r.stderr).toContain(
      `holdfast: ${NOSUDO} may not open the containerd socket ${SOCKET} on ea1ns: it is there (srw-rw---- root:root), but only root and the group root may connect — Reach containerd through the node's sudo option (the user needs password-less sudo), which opens the socket as root, or connect as root. To use sudo: holdfast node add ea1ns --host 127.0.0.1 --port ${ea1.port} --user ${NOSUDO} --identity ${lab.clientKey} --known-hosts ${lab.knownHosts} --sudo`,
    );
    expect(r.stderr).not.toMatch(/not answering|no unix socket|node edit/);
    expect(await nodeNames()).toEqual([]);

    // No socket at all: containerd is not running there (or the path is wrong), said as such.
    const missing = await cli(addArgs('ea1gone', ea1, ['--user', NOSUDO, '--socket', '/run/k3s/containerd/gone.sock']), 1);
    expect(missing.stderr).toContain('holdfast: There is no unix socket at /run/k3s/containerd/gone.sock on the node (or this user may not see it)');
    expect(missing.stderr).not.toContain('may not open');
    expect(missing.stderr).toContain("a non-root user needs the node's sudo option. To use sudo: holdfast node add ea1gone ");

    // The way out the hint names, run as printed (every value quoted as a shell reads it): the
    // same arguments plus --sudo. The tunnel runs through sudo and containerd answers.
    const refused = await cli(addArgs('ea1su', ea1, ['--user', SUDOER, '--group', 'site a']), 3);
    const again = /To use sudo: holdfast (node add .* --sudo)$/m.exec(refused.stderr)?.[1];
    expect(again).toContain(`--group 'site a' --sudo`);
    await cli(shellWords(again!));
    expect(await nodeNames()).toEqual(['ea1su']);

    // Saved (unchecked), the same refusal after any command names node edit.
    await cli(addArgs('ea1ns', ea1, ['--user', NOSUDO, '--no-check']));
    const saved = await cli(['images', 'ea1ns'], 3);
    expect(saved.stderr).toContain(`may connect — Reach containerd through the node's sudo option`);
    expect(saved.stderr.trim()).toMatch(/ To use sudo: holdfast node edit ea1ns --sudo$/);
    const images = await cli(['images', 'ea1su']);
    expect(images.stderr).not.toMatch(/may not|not answering/);
  });
});

describe('a login whose shell refuses commands', () => {
  it('names the nologin shell and the fix, not "probe exited with a signal: Could not chdir" (#49)', async () => {
    const ea1 = lab.node('ea1');
    // As a system account often is: nologin, and a home directory that does not exist.
    const usermod = (args: string[]) => promisify(execFile)('usermod', [...args, NOLOGIN]);
    await usermod(['--shell', '/usr/sbin/nologin', '--home', '/nonexistent']);
    try {
      expect(await ea1.statInNode(SOCKET)).toBe('srw-rw---- root root');
      for (const extra of [[], ['--sudo']]) {
        const r = await runCli(addArgs('ea1nl', ea1, ['--user', NOLOGIN, ...extra]), { HOLDFAST_HOME: home });
        expect(r.code).toBe(3);
        expect(r.stderr.trim()).toBe(
          `holdfast: The login shell of ${NOLOGIN} on ea1nl refuses to run commands (nologin: "This account is currently not available."), and sshd runs every command through it. — ` +
            `Give ${NOLOGIN} a shell that runs commands (on the node: usermod -s /bin/sh ${NOLOGIN}), or log in as another user. Its home directory /nonexistent is missing too (harmless by itself).`,
        );
      }
      expect(await nodeNames()).not.toContain('ea1nl');
      // The fix the hint names works: with a shell (and its home back), the same login gets in.
      await usermod(['--shell', '/bin/sh', '--home', `/home/${NOLOGIN}`]);
      await cli(addArgs('ea1nl', ea1, ['--user', NOLOGIN, '--sudo']));
    } finally {
      // stop() removes the user and its home: give it back the home the lab made.
      await usermod(['--shell', '/bin/sh', '--home', `/home/${NOLOGIN}`]);
    }
  });
});

describe('a root-only images dir the login may not read', () => {
  it('archives, images, inspect and prune say who may not read which dir, and the way out, not "Permission denied"', async () => {
    const ea2 = lab.node('ea2');
    // A site where the user may reach containerd (the socket is open to all) but not the images dir.
    await ea2.execInNode(['chmod', '0666', SOCKET]);
    expect(await ea2.statInNode(IMAGES_DIR)).toBe('drwx------ root root');
    await writeImageArchive(path.join(ea2.hostImagesDir, 'app.tar'), { format: 'oci', images: [{ name: 'docker.io/library/ea-app:1.0' }] });
    await cli(addArgs('ea2ns', ea2, ['--user', NOSUDO]));

    const MESSAGE = `${NOSUDO} may not read the images dir ${IMAGES_DIR} on ea2ns`;
    const HINT = "Reach the images dir through sudo (the node's sudo option: holdfast node edit ea2ns --sudo; the user needs password-less sudo), or connect as a user who may read it, such as root.";
    const archives = await cli(['archives', 'ea2ns'], 3);
    expect(archives.stderr).toContain(`holdfast: ${MESSAGE} — ${HINT}`);
    for (const args of [['images', 'ea2ns'], ['inspect', 'ea2ns'], ['prune', 'ea2ns', '--dry-run']]) {
      const r = await runCli(args, { HOLDFAST_HOME: home });
      expect(`${r.stdout}${r.stderr}`, args.join(' ')).toContain(MESSAGE);
      expect(`${r.stdout}${r.stderr}`, args.join(' ')).not.toMatch(/Permission denied/i);
      expect(r.code, args.join(' ')).not.toBe(0);
      // The way out goes with it, wherever the message is shown (prune's per-node line too).
      expect(`${r.stdout}${r.stderr}`.replace(/\s+/g, ' '), args.join(' ')).toContain(HINT);
      // The node answered: it is refused, not "unreachable".
      if (args[0] === 'inspect') {
        expect(r.stdout).toMatch(/ea2ns\s+-\s+REFUSED/);
        expect(r.stdout).not.toMatch(/UNREACHABLE/);
        expect(r.stderr).toContain('1 of 1 node not inspected: ea2ns');
      }
    }

    // The way out the hint names: the node's sudo option (a user who may use it).
    await cli(['node', 'edit', 'ea2ns', '--user', SUDOER, '--sudo']);
    const listed = await cli(['archives', 'ea2ns']);
    expect(listed.stdout).toContain('app.tar');
  });
});
