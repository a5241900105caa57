import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, readlink, readdir, writeFile, access } from 'node:fs/promises';
import { run, CommandError } from '../../lab/exec.ts';
import { startLab, K3S_SOCKET, K3S_IMAGES_DIR, type Lab } from '../../lab/index.ts';
import { ssh } from './helpers.ts';

describe('lab nodes', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ nodes: ['a', 'b'] });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('starts and describes every node', async () => {
    expect(lab.nodes.map((n) => n.name)).toEqual(['a', 'b']);
    expect(lab.dir.length).toBeLessThan(40);
    for (const n of lab.nodes) {
      expect(n.host).toBe('127.0.0.1');
      expect(n.user).toBe('root');
      expect(n.hostSocket.length).toBeLessThan(100);
      expect(n.hostSocket).toBe(`${n.root}/run-k3s/containerd/containerd.sock`);
      expect(n.hostImagesDir).toBe(`${n.root}/rancher/k3s/agent/images`);
      expect(n.knownHostsLine).toMatch(new RegExp(`^\\[127\\.0\\.0\\.1\\]:${n.port} ssh-ed25519 AAAA\\S+$`));
      const fp = await run(['ssh-keygen', '-lf', `${n.root}/ssh_host_ed25519_key.pub`]);
      expect(fp.split(' ')[1]).toBe(n.hostKeyFingerprint);
      expect(n.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    }
    const kh = await readFile(lab.knownHosts, 'utf8');
    expect(kh.trim().split('\n')).toEqual(lab.nodes.map((n) => n.knownHostsLine));
    expect(lab.node('b')).toBe(lab.nodes[1]);
    expect(() => lab.node('zz')).toThrow();
  });

  it('each node sees k3s paths of its own over ssh (strict host key checking)', async () => {
    const [a, b] = lab.nodes as [typeof lab.nodes[0], typeof lab.nodes[0]];
    await writeFile(`${a.hostImagesDir}/marker.txt`, 'node a\n');
    await writeFile(`${b.hostImagesDir}/marker.txt`, 'node b\n');
    expect(await ssh(lab, a, ['cat', `${K3S_IMAGES_DIR}/marker.txt`])).toBe('node a\n');
    expect(await ssh(lab, b, ['cat', `${K3S_IMAGES_DIR}/marker.txt`])).toBe('node b\n');
    // the socket exists at the real k3s path inside, and is the node's own containerd
    expect(await ssh(lab, a, ['test', '-S', K3S_SOCKET, '&&', 'echo', 'sock'])).toBe('sock\n');
    await a.ctr(['images', 'ls']);
    const inside = await ssh(lab, a, ['ctr', '-a', K3S_SOCKET, 'version']);
    expect(inside).toContain('Server:');
    // the host has none of it
    await expect(access(K3S_SOCKET)).rejects.toThrow();
    await expect(access(`${K3S_IMAGES_DIR}/marker.txt`)).rejects.toThrow();
  });

  it('sftp subsystem and streamlocal forwarding are available', async () => {
    const a = lab.nodes[0]!;
    // ssh -L <local unix socket>:<node's containerd socket>, then ctr through it
    const { spawn } = await import('node:child_process');
    const local = `${lab.dir}/fwd.sock`;
    const argv = [
      'ssh', '-N', '-i', lab.clientKey, '-p', String(a.port), '-o', `UserKnownHostsFile=${lab.knownHosts}`,
      '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes',
      '-L', `${local}:${K3S_SOCKET}`, 'root@127.0.0.1',
    ];
    const fwd = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
    try {
      let version = '';
      for (let i = 0; i < 100 && !version; i++) {
        version = await run(['ctr', '--connect-timeout', '1s', '-a', local, 'version']).catch(() => '');
        if (!version) await new Promise((r) => setTimeout(r, 50));
      }
      expect(version).toContain('Server:');
    } finally {
      fwd.kill('SIGTERM');
    }
    const out = await run(
      [
        'sftp', '-b', '-', '-i', lab.clientKey, '-P', String(a.port),
        '-o', `UserKnownHostsFile=${lab.knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes',
        'root@127.0.0.1',
      ],
      { input: `ls ${K3S_IMAGES_DIR}\n`, timeoutMs: 20_000 },
    );
    expect(out).toContain('marker.txt');
  });

  it('containerd can be stopped and started again in the same namespace', async () => {
    const a = lab.nodes[0]!;
    const nsBefore = await ssh(lab, a, ['readlink', '/proc/self/ns/mnt']);
    await a.stopContainerd();
    await expect(a.ctr(['images', 'ls'])).rejects.toBeInstanceOf(CommandError);
    await a.startContainerd();
    expect(await a.ctr(['images', 'ls', '-q'])).toBe('');
    expect(await ssh(lab, a, ['readlink', '/proc/self/ns/mnt'])).toBe(nsBefore);
    expect(await ssh(lab, a, ['test', '-S', K3S_SOCKET, '&&', 'echo', 'sock'])).toBe('sock\n');
  });

  it('rotateHostKey keeps the port and makes ssh detect a changed host key', async () => {
    const b = lab.nodes[1]!;
    const { port, hostKeyFingerprint: oldFp, knownHostsLine: oldLine } = b;
    await b.rotateHostKey();
    expect(b.port).toBe(port);
    expect(b.hostKeyFingerprint).not.toBe(oldFp);
    expect(b.knownHostsLine).not.toBe(oldLine);
    // the lab's known_hosts still lists the old key
    const err = await ssh(lab, b, ['true']).catch((e: CommandError) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as CommandError).stderr).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    await lab.refreshKnownHosts();
    expect(await ssh(lab, b, ['echo', 'ok'])).toBe('ok\n');
  });
});

describe('lab stop', () => {
  it('kills every process of the node and leaves nothing mounted on the host', async () => {
    const lab = await startLab({ nodes: 1 });
    const n = lab.nodes[0]!;
    // a lingering ssh session (sessions setsid away from sshd's process group)
    const { spawn } = await import('node:child_process');
    const { sshArgv } = await import('./helpers.ts');
    const lingering = spawn(sshArgv(lab, n, ['sleep', '300'])[0]!, sshArgv(lab, n, ['sleep', '300']).slice(1), {
      stdio: 'ignore',
    });
    const nsOf = async (pid: string): Promise<string | undefined> => readlink(`/proc/${pid}/ns/mnt`).catch(() => undefined);
    const hostNs = await nsOf('self');
    const nodeNs = (await ssh(lab, n, ['readlink', '/proc/self/ns/mnt'])).trim();
    expect(nodeNs).not.toBe(hostNs);
    // wait until the remote sleep runs
    for (let i = 0; i < 100; i++) {
      const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
      const comms = await Promise.all(
        pids.map(async (p) => ((await nsOf(p)) === nodeNs ? (await readFile(`/proc/${p}/comm`, 'utf8').catch(() => '')).trim() : '')),
      );
      if (comms.includes('sleep') && comms.filter((c) => c === 'sleep').length >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await lab.stop();
    const left: string[] = [];
    for (const p of (await readdir('/proc')).filter((x) => /^\d+$/.test(x))) {
      if ((await nsOf(p)) === nodeNs) left.push(p);
    }
    expect(left).toEqual([]);
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(lab.dir);
    expect(mounts).not.toMatch(/ \/run\/k3s /);
    await expect(access(lab.dir)).rejects.toThrow(); // own temp dir removed
    lingering.kill('SIGKILL');
  });
});
