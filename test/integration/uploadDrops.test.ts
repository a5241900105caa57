// A link that drops under an upload (issue #51, items 1 and 10): whatever the moment, the upload
// ends — the CLI with the connection's exit code, never 0 — and says "resume from N" with the N
// the node really holds. Faults through a loopback proxy of this test that cuts every connection
// at once (a dropped link), or by killing the node's sftp-server under a live connection.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { startLab, type Lab } from '../../lab/lab';
import type { LabNodeHandle } from '../../lab/node';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import { uploadArchive } from '../../src/core/usecases/upload';
import { formatBytes } from '../../src/shared/format';
import { labNodeDef, runCli, sha256File, tempHome } from './support';

const MiB = 1024 * 1024;

let lab: Lab;
let local: string;

beforeAll(async () => {
  lab = await startLab({ nodes: ['dr1', 'dr2', 'dr3'] });
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-drops-'));
});

afterAll(async () => {
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

interface Link {
  port: number;
  /** Decides, at each chunk a client sends, whether the link drops now. */
  dropWhen: ((c: Conn) => boolean) | null;
  /** Called at each chunk a client sends. */
  onChunk: ((c: Conn) => void) | null;
  drops: number;
  /** Every connection through the link, at once, as a dropped link does. */
  drop(): void;
  close(): Promise<void>;
}

/** One connection through the link: its client's SSH banner (ssh2's or OpenSSH's), its bytes so far. */
interface Conn {
  banner: string;
  sent: number;
  /** Its socket to sshd (the local port finds sshd's end of it). */
  upstream: net.Socket;
}

const isOpenssh = (c: Conn) => c.banner.startsWith('SSH-2.0-OpenSSH');
const isSsh2 = (c: Conn) => c.banner.startsWith('SSH-2.0-ssh2js');

/** A loopback TCP proxy to a node's sshd; after a drop it carries new connections whole. */
async function link(target: number): Promise<Link> {
  const live = new Set<net.Socket>();
  const state: Link = {
    port: 0,
    dropWhen: null,
    onChunk: null,
    drops: 0,
    drop() {
      state.drops++;
      state.dropWhen = null;
      for (const s of live) s.destroy();
    },
    close: async () => undefined,
  };
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: target });
    live.add(client);
    live.add(upstream);
    const c: Conn = { banner: '', sent: 0, upstream };
    client.on('data', (d: Buffer) => {
      if (c.sent === 0) c.banner = d.toString('latin1').split('\r\n')[0]!;
      c.sent += d.length;
      if (state.dropWhen?.(c)) return state.drop();
      state.onChunk?.(c);
      if (!upstream.write(d)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.pipe(client);
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        live.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as net.AddressInfo).port;
  state.close = () =>
    new Promise<void>((r) => {
      for (const s of live) s.destroy();
      server.close(() => r());
    });
  return state;
}

/** A known_hosts file naming the node's key under the proxy's address. */
function knownHostsFor(n: LabNodeHandle, port: number): string {
  const kh = path.join(tempHome(), 'known_hosts');
  writeFileSync(kh, `[127.0.0.1]:${port} ${n.knownHostsLine.split(' ').slice(1).join(' ')}\n`);
  return kh;
}

/** A file's size once two reads 200 ms apart agree (sshd hands the node's writer what it had buffered). */
async function settledSize(file: string): Promise<number> {
  let last = await stat(file).then((s) => s.size, () => 0);
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = await stat(file).then((s) => s.size, () => 0);
    if (now === last) return now;
    last = now;
  }
}

async function archive(name: string, mib: number): Promise<string> {
  const file = path.join(local, name);
  await writeImageArchive(file, { format: 'oci', images: [{ name: `registry.local/drops/${name.replace(/[^a-z0-9]/g, '-')}:1`, layerBytes: mib * MiB }] });
  return file;
}

/** The byte a failed upload says the next run resumes from. */
const resumeByte = (stderr: string): number | null => {
  const m = /run it again to resume from (?:byte |[^(]*\(byte )(\d+)/.exec(stderr);
  return m ? Number(m[1]) : null;
};
/** How it says it: in MiB, the byte in brackets. */
const RESUME = /dropped during the upload; run it again to resume from (?:the start|\d+(?:\.\d)? [KMG]iB) \(byte \d+\)/;

describe('holdfast upload over a link that drops', () => {
  // The OpenSSH client carries a fresh upload's bytes on a second connection (upload/openssh.ts):
  // the link drops while it shakes hands, and while the bytes flow.
  const moments = [
    { when: "during the OpenSSH client's handshake", bytes: 1 },
    { when: "while the OpenSSH client's bytes flow", bytes: 4 * MiB },
  ];

  it.each(moments)('dropped $when: exit 1, nothing on stdout, "resume from" what the node holds; the next run resumes', async ({ bytes }) => {
    const n = lab.node('dr1');
    const name = `cut-${bytes}.tar`;
    const file = await archive(name, 48);
    const proxy = await link(n.port);
    const home = tempHome();
    try {
      const add = await runCli(['node', 'add', 'dr1', '--host', '127.0.0.1', '--port', String(proxy.port), '--identity', lab.clientKey, '--known-hosts', knownHostsFor(n, proxy.port)], { HOLDFAST_HOME: home });
      expect(add.code).toBe(0);
      proxy.dropWhen = (c) => isOpenssh(c) && c.sent >= bytes;
      const r = await runCli(['upload', 'dr1', file], { HOLDFAST_HOME: home });
      expect(proxy.drops).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(1);
      const staging = path.join(n.hostImagesDir, `.${name}.holdfast-partial`);
      const held = await settledSize(staging);
      expect(resumeByte(r.stderr)).toBe(held);
      expect(r.stderr).toMatch(RESUME);
      await expect(stat(path.join(n.hostImagesDir, name))).rejects.toThrow(/ENOENT/);

      const again = await runCli(['upload', 'dr1', file], { HOLDFAST_HOME: home });
      expect(again.stderr).not.toMatch(/holdfast:/);
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(held > 0 ? /^dr1: uploaded .*resumed from/ : /^dr1: uploaded /);
      expect(await sha256File(path.join(n.hostImagesDir, name))).toBe(await sha256File(file));
    } finally {
      await proxy.close();
    }
  }, 300_000);
});

describe('uploadArchive over a link that drops', () => {
  it('dropped once a resumed SFTP upload has every byte acknowledged: it settles, UNREACHABLE, resume from the whole file', async () => {
    const n = lab.node('dr2');
    const file = await archive('resumed.tar', 24);
    const bytes = await readFile(file);
    const staging = path.join(n.hostImagesDir, '.resumed.tar.holdfast-partial');
    await writeFile(staging, bytes.subarray(0, 8 * MiB));
    const proxy = await link(n.port);
    const def = labNodeDef(lab, n, { port: proxy.port, knownHosts: knownHostsFor(n, proxy.port) });
    const s = await NodeSession.open(def);
    const fresh: NodeSession[] = [];
    try {
      const err = await uploadArchive(s, file, {
        transport: 'sftp',
        onProgress: (p) => {
          if (p.phase === 'uploading' && p.bytesDone === p.bytesTotal && proxy.drops === 0) proxy.drop();
        },
        reopen: async () => {
          const f = await NodeSession.open(def);
          fresh.push(f);
          return f;
        },
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(proxy.drops).toBe(1);
      expect(err).toBeInstanceOf(HoldfastError);
      expect((err as HoldfastError).code).toBe('UNREACHABLE');
      expect((err as HoldfastError).message).toBe(`the connection to dr2 dropped during the upload; run it again to resume from ${formatBytes(bytes.length)} (byte ${bytes.length})`);
      expect(await settledSize(staging)).toBe(bytes.length);
    } finally {
      for (const f of [s, ...fresh]) await f.close().catch(() => undefined);
      await proxy.close();
    }
  }, 300_000);
});

/** The pids of sshd's per-connection processes for the TCP connection from local port `from`, and every descendant. */
function sshdTree(nodePort: number, from: number): number[] {
  const out = execFileSync('ss', ['-Htnp', 'state', 'established', `( sport = :${nodePort} and dport = :${from} )`], { encoding: 'utf8' });
  const roots = [...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
  const all = new Set<number>();
  const walk = (pid: number) => {
    if (all.has(pid)) return;
    all.add(pid);
    let kids = '';
    try {
      kids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
    } catch {
      return; // none
    }
    for (const k of kids.split('\n').filter(Boolean)) walk(Number(k));
  };
  for (const r of roots) walk(r);
  return [...all];
}

describe('the SFTP channel alone cut (the node\'s sftp-server killed)', () => {
  it('exits with the connection code (1), not the safety-check refusal (3), and says what the node holds', async () => {
    const n = lab.node('dr3');
    const name = 'sftp-cut.tar';
    const file = await archive(name, 48);
    const proxy = await link(n.port);
    const home = tempHome();
    try {
      const add = await runCli(['node', 'add', 'dr3', '--host', '127.0.0.1', '--port', String(proxy.port), '--identity', lab.clientKey, '--known-hosts', knownHostsFor(n, proxy.port)], { HOLDFAST_HOME: home });
      expect(add.code).toBe(0);
      let killed: number[] = [];
      proxy.onChunk = (c) => {
        if (!isSsh2(c) || c.sent < 8 * MiB || killed.length) return;
        // This connection's sftp-server, found through sshd's end of it, and only it.
        killed = sshdTree(n.port, c.upstream.localPort!).filter((pid) => {
          try {
            return /sftp-server/.test(execFileSync('cat', [`/proc/${pid}/comm`], { encoding: 'utf8' }));
          } catch {
            return false;
          }
        });
        for (const pid of killed) process.kill(pid, 'SIGKILL');
      };
      const r = await runCli(['upload', 'dr3', file], { HOLDFAST_HOME: home, HOLDFAST_OPENSSH: 'off' });
      expect(killed).toHaveLength(1);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(1);
      const held = await settledSize(path.join(n.hostImagesDir, `.${name}.holdfast-partial`));
      expect(resumeByte(r.stderr)).toBe(held);
      expect(r.stderr).toMatch(RESUME);
    } finally {
      await proxy.close();
    }
  }, 300_000);
});
