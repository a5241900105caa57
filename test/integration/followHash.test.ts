// The node-side hash of a file while it is written (upload/followHash.ts), in both of its modes,
// against a lab node's real sshd and shell: the digest is the file's, a follow given up half-way
// gives no digest (never a digest of a part), and nothing it started outlives it on the node.
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../lab/lab';
import { SshNodeSession } from '../../src/core/node/session';
import { startFollowHash, type FollowMode } from '../../src/core/usecases/upload/followHash';
import { labNodeDef } from './support';

const MiB = 1024 * 1024;
const DIR = '/var/lib/rancher/k3s/agent/images';
let lab: Lab;
let s: SshNodeSession;

beforeAll(async () => {
  lab = await startLab({ nodes: ['fh'] });
  s = await SshNodeSession.open(labNodeDef(lab, lab.node('fh')));
});

afterAll(async () => {
  await s?.close().catch(() => undefined);
  await lab?.stop();
});

const call = <T>(fn: (cb: (err: Error | null | undefined, v: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

/** Opens `path` on the node for writing; returns a writer of chunks in order and a closer. */
async function remoteFile(path: string) {
  const sftp = await s.ssh.sftp();
  const handle = await call<Buffer>((cb) => sftp.open(path, 'w', cb));
  let pos = 0;
  return {
    write: async (buf: Buffer) => {
      await call<void>((cb) => sftp.write(handle, buf, 0, buf.length, pos, (err) => cb(err, undefined)));
      pos += buf.length;
    },
    close: () => call<void>((cb) => sftp.close(handle, (err) => cb(err, undefined))),
  };
}

/** Processes whose command line names `path` (the lab shares the host's process table). */
function runningFor(path: string): string[] {
  try {
    return execFileSync('pgrep', ['-a', '-f', '--', path], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function noneLeftFor(path: string): Promise<string[]> {
  // The script has exited when `result` settles; what it killed may take a moment to go.
  for (let i = 0; i < 100 && runningFor(path).length; i++) await new Promise((r) => setTimeout(r, 50));
  return runningFor(path);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(['auto', 'head'] satisfies FollowMode[])('hashing a file as it is written, mode %s', (mode) => {
  // This machine's tail is GNU's: auto picks pid mode; head is what a busybox node gets.
  const expectedMode = mode === 'auto' ? 'pid' : 'head';

  it('gives the digest of the whole file, written in pieces while followed, and leaves nothing running', async () => {
    const path = `${DIR}/.follow-${mode}-whole.bin`;
    const data = randomBytes(24 * MiB + 12_345);
    const f = await remoteFile(path);
    const hasher = (await s.hashTools()).hasher ?? 'sha256sum';
    const follow = await startFollowHash(s.ssh, path, data.length, hasher, mode);
    for (let off = 0; off < data.length; off += MiB) await f.write(data.subarray(off, off + MiB));
    follow.sent();
    expect(await follow.result).toBe(sha256(data));
    expect(follow.mode()).toBe(expectedMode);
    await f.close();
    expect(await noneLeftFor(path)).toEqual([]);
  });

  it('sent() before the script said its mode (the file already complete) still ends in the digest', async () => {
    const path = `${DIR}/.follow-${mode}-early.bin`;
    const data = randomBytes(3 * MiB);
    const f = await remoteFile(path);
    await f.write(data);
    await f.close();
    const follow = await startFollowHash(s.ssh, path, data.length, 'sha256sum', mode);
    follow.sent();
    expect(follow.mode()).toBeNull();
    expect(await follow.result).toBe(sha256(data));
    expect(await noneLeftFor(path)).toEqual([]);
  });

  it('given up at once, 200 times: every run ends, with no digest, and nothing is left running', async () => {
    // A race, so tried many times: in head mode a give-up that killed tail before it opened the
    // FIFO left head waiting for a writer forever (5 runs in 200 hung under load).
    const path = `${DIR}/.follow-${mode}-at-once.bin`;
    const data = randomBytes(64 * 1024);
    const f = await remoteFile(path);
    await f.write(data);
    for (let i = 0; i < 200; i++) {
      const follow = await startFollowHash(s.ssh, path, 2 * data.length, 'sha256sum', mode);
      follow.stop();
      expect(await follow.result).toBeNull();
    }
    await f.close();
    expect(await noneLeftFor(path)).toEqual([]);
  });

  it('given up half-way, it gives no digest (not one of the part) and leaves nothing running', async () => {
    const path = `${DIR}/.follow-${mode}-half.bin`;
    const data = randomBytes(8 * MiB);
    const f = await remoteFile(path);
    const follow = await startFollowHash(s.ssh, path, data.length, 'sha256sum', mode);
    await f.write(data.subarray(0, 4 * MiB));
    // The node has hashed some of it by now; what comes back must still be "no verdict".
    while (follow.mode() === null) await new Promise((r) => setTimeout(r, 20));
    follow.stop();
    expect(await follow.result).toBeNull();
    await f.close();
    expect(await noneLeftFor(path)).toEqual([]);
  });
});
