// The smaller faults of issue #51 (item 10), each injected on loopback against lab nodes: a
// changed host key under `prune` (the refusal's exit code, 3, as every command), a host key other
// than the verified one on the OpenSSH client's own connection (a warning, and the upload goes on
// over SFTP), and an upload killed with SIGKILL (its known_hosts folder is under Holdfast's home,
// and the next upload removes it).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { startLab, type Lab } from '../../lab/lab';
import { setLogSink, type LogRecord } from '../../src/core/log';
import { NodeSession } from '../../src/core/node/session';
import { uploadArchive } from '../../src/core/usecases/upload';
import { labNodeDef, repoRoot, runCli, sha256File, tempHome } from './support';

const MiB = 1024 * 1024;

let lab: Lab;
let local: string;

beforeAll(async () => {
  lab = await startLab({ nodes: ['fc1', 'fc2'] });
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-faultcodes-'));
});

afterAll(async () => {
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

async function archive(name: string, mib: number): Promise<string> {
  const file = path.join(local, name);
  await writeImageArchive(file, { format: 'oci', images: [{ name: `registry.local/faults/${name.replace(/[^a-z0-9]/g, '-')}:1`, layerBytes: mib * MiB }] });
  return file;
}

describe('a changed host key', () => {
  it('prune refuses with exit 3, as images does', async () => {
    const home = tempHome();
    const n = lab.node('fc1');
    const kh = path.join(home, 'known_hosts');
    writeFileSync(kh, `${n.knownHostsLine}\n`);
    const add = await runCli(['node', 'add', 'fc1', '--host', '127.0.0.1', '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', kh], { HOLDFAST_HOME: home });
    expect(add.code).toBe(0);
    // Then another key on record for fc1's address: what a replaced (or impersonated) node presents.
    writeFileSync(kh, `[127.0.0.1]:${n.port} ${lab.node('fc2').knownHostsLine.split(' ').slice(1).join(' ')}\n`);
    const images = await runCli(['images', 'fc1'], { HOLDFAST_HOME: home });
    expect(images.stderr).toMatch(/host key/i);
    expect(images.code).toBe(3);
    for (const args of [['prune', 'fc1'], ['prune', 'fc1', '--dry-run']]) {
      const r = await runCli(args, { HOLDFAST_HOME: home });
      expect(r.stdout).toMatch(/^fc1: FAILED — .*host key/im);
      expect(r.code).toBe(3);
    }
  }, 120_000);
});

describe("a host key other than the verified one on the OpenSSH client's connection", () => {
  it('is a warning and a notice; the upload goes on over SFTP and lands whole', async () => {
    const a = lab.node('fc1');
    const b = lab.node('fc2');
    // The first connection (the session's, verified) reaches fc1; every later one (the OpenSSH
    // client's) reaches fc2, whose key is another.
    let conns = 0;
    const live = new Set<net.Socket>();
    const server = net.createServer((client) => {
      const upstream = net.connect({ host: '127.0.0.1', port: conns++ === 0 ? a.port : b.port });
      for (const s of [client, upstream]) {
        live.add(s);
        s.on('error', () => undefined);
        s.on('close', () => (live.delete(s), client.destroy(), upstream.destroy()));
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const kh = path.join(tempHome(), 'known_hosts');
    writeFileSync(kh, `[127.0.0.1]:${port} ${a.knownHostsLine.split(' ').slice(1).join(' ')}\n`);
    const records: LogRecord[] = [];
    setLogSink((r) => void records.push(r), 'debug');
    const s = await NodeSession.open(labNodeDef(lab, a, { port, knownHosts: kh }));
    try {
      const file = await archive('other-key.tar', 4);
      const notices: string[] = [];
      const r = await uploadArchive(s, file, { onNotice: (t) => notices.push(t) });
      expect(conns).toBeGreaterThan(1); // the OpenSSH client did try
      expect(r.transport).toBe('sftp');
      expect(await sha256File(path.join(a.hostImagesDir, 'other-key.tar'))).toBe(await sha256File(file));
      expect(existsSync(path.join(b.hostImagesDir, '.other-key.tar.holdfast-partial'))).toBe(false);
      expect(notices).toContain("the OpenSSH client's connection to fc1 met another host key than the one verified: it sent nothing; the upload goes on over SFTP");
      const warned = records.filter((x) => x.level === 'warn' && /fell back to SFTP/.test(x.message));
      expect(warned).toHaveLength(1);
    } finally {
      setLogSink(null);
      await s.close();
      for (const x of live) x.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 120_000);
});

describe('an upload killed with SIGKILL', () => {
  it("leaves its known_hosts folder under Holdfast's home, not in /tmp, and the next upload removes it", async () => {
    const home = tempHome();
    const n = lab.node('fc2');
    const add = await runCli(['node', 'add', 'fc2', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts], { HOLDFAST_HOME: home });
    expect(add.code).toBe(0);
    const file = await archive('killed.tar', 256);
    const staging = path.join(n.hostImagesDir, '.killed.tar.holdfast-partial');
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'holdfast.mjs'), 'upload', 'fc2', file], { env: { ...process.env, HOLDFAST_HOME: home }, stdio: 'ignore' });
    const ended = new Promise<void>((r) => child.on('close', () => r()));
    // Killed once the OpenSSH client is writing on the node.
    for (let i = 0; i < 3000 && !(existsSync(staging) && statSync(staging).size > 0); i++) await new Promise((r) => setTimeout(r, 20));
    expect(statSync(staging).size).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await ended;
    const left = readdirSync(path.join(home, 'ssh'));
    expect(left).toEqual([expect.stringMatching(new RegExp(`^run-${child.pid}-`))]);
    expect(existsSync(path.join(home, 'ssh', left[0]!, 'known_hosts'))).toBe(true);

    // The same command again resumes (over SFTP) and, first, removes what the killed run left.
    const again = await runCli(['upload', 'fc2', file], { HOLDFAST_HOME: home });
    expect(again.code).toBe(0);
    expect(readdirSync(path.join(home, 'ssh'))).toEqual([]);
    expect(await sha256File(path.join(n.hostImagesDir, 'killed.tar'))).toBe(await sha256File(file));
  }, 300_000);
});
