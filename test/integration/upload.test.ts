// uploadArchive against lab nodes (real OpenSSH sftp-server, real containerd, k3s's watcher
// emulated): byte-identical copies, k3s never sees a half-written archive, resume after a
// dropped connection or a cancel, refusal on a too-small disk, idempotence, no overwrite.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open as openFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive, type ArchiveCompression } from '../../lab/fixtures';
import { listImages, startK3sWatcher } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import type { LabNodeHandle } from '../../lab/node';
import { ARCHIVE_SUFFIXES, classifyImagesDirPath, COMPRESSION_BY_SUFFIX } from '../../src/shared/archiveSuffixes';
import { HoldfastError } from '../../src/core/errors';
import { SshNodeSession } from '../../src/core/node/session';
import { isAbortError, uploadArchive, type UploadProgress } from '../../src/core/usecases/upload';
import { formatBytes } from '../../src/shared/format';
import { labNodeDef, sha256File } from './support';

const MiB = 1024 * 1024;
let lab: Lab;
let local: string;
const sessions: SshNodeSession[] = [];

beforeAll(async () => {
  lab = await startLab({ nodes: ['up1', 'up2', 'tiny'] });
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-upload-'));
});

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

async function open(node: LabNodeHandle): Promise<SshNodeSession> {
  const s = await SshNodeSession.open(labNodeDef(lab, node));
  sessions.push(s);
  return s;
}

const made = new Map<string, Promise<string>>();

/**
 * An image archive of about `mib` MiB (one incompressible layer). Large ones are made once per
 * spec and copied under each name (making 320 MiB takes seconds).
 */
async function archive(name: string, opts: { mib?: number; compression?: ArchiveCompression; image?: string } = {}): Promise<string> {
  const file = path.join(local, name);
  if ((opts.mib ?? 1) >= 100 && opts.image) {
    const key = JSON.stringify([opts.mib, opts.compression ?? 'none', opts.image]);
    let src = made.get(key);
    if (!src) {
      const at = path.join(local, `.made-${made.size}`);
      src = writeImageArchive(at, { format: 'oci', compression: opts.compression ?? 'none', images: [{ name: opts.image, layerBytes: Math.round(opts.mib! * MiB) }] }).then(() => at);
      made.set(key, src);
    }
    await copyFile(await src, file);
    return file;
  }
  await writeImageArchive(file, {
    format: 'oci',
    compression: opts.compression ?? 'none',
    images: [{ name: opts.image ?? `registry.local/upload/${name.replace(/[^a-z0-9]/g, '-')}:1`, layerBytes: Math.round((opts.mib ?? 1) * MiB) }],
  });
  return file;
}

/** Every file under dir, recursively, relative to it. */
async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(path.join(d, e.name), path.posix.join(rel, e.name));
      else out.push(path.posix.join(rel, e.name));
    }
  };
  await walk(dir, '');
  return out.sort();
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A file's size once it stopped growing (two reads 200 ms apart agree). */
async function settled(file: string): Promise<number> {
  let last = (await stat(file)).size;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = (await stat(file)).size;
    if (now === last) return now;
    last = now;
  }
}

/** Simulates a network drop: the TCP socket under the SSH connection goes away. */
function dropConnection(s: SshNodeSession): void {
  (s.ssh.client as unknown as { _sock: Socket })._sock.destroy();
}

describe('uploadArchive', () => {
  it('uploads to two nodes in parallel, byte-identical, into a subdirectory it creates', async () => {
    const file = await archive('pair.tar.zst', { mib: 6, compression: 'zstd' });
    const want = await sha256File(file);
    const [s1, s2] = await Promise.all([open(lab.node('up1')), open(lab.node('up2'))]);
    const results = await Promise.all([s1, s2].map((s) => uploadArchive(s, file, { remoteName: 'apps/pair.tar.zst' })));
    for (const [i, node] of [lab.node('up1'), lab.node('up2')].entries()) {
      const r = results[i]!;
      expect(r).toEqual({
        remotePath: '/var/lib/rancher/k3s/agent/images/apps/pair.tar.zst',
        relPath: 'apps/pair.tar.zst',
        sha256: want,
        bytesSent: (await stat(file)).size,
        resumedFrom: 0,
        alreadyPresent: false,
        // The machine's OpenSSH client carried the bytes; the node hashed its file once written.
        nodeHash: 'after-sending',
        transport: 'openssh',
      });
      expect(await sha256File(path.join(node.hostImagesDir, 'apps', 'pair.tar.zst'))).toBe(want);
      expect(await readdir(path.join(node.hostImagesDir, 'apps'))).toEqual(['pair.tar.zst']); // staging name gone
    }
  });

  it('every compression k3s supports uploads and is imported by the k3s watcher', async () => {
    const node = lab.node('up2');
    const s = await open(node);
    const watcher = startK3sWatcher(node);
    try {
      const names: string[] = [];
      for (const suffix of ARCHIVE_SUFFIXES) {
        const image = `registry.local/upload/codec${suffix.replace(/\./g, '-')}:1`;
        names.push(image);
        const file = await archive(`codec${suffix}`, { compression: COMPRESSION_BY_SUFFIX[suffix], image, mib: 0.25 });
        const r = await uploadArchive(s, file);
        expect(r.relPath).toBe(`codec${suffix}`);
        expect(await sha256File(path.join(node.hostImagesDir, `codec${suffix}`))).toBe(r.sha256);
      }
      await until('all codecs imported', async () => {
        const have = new Set((await listImages(node)).map((i) => i.name));
        return names.every((n) => have.has(n));
      });
      expect(watcher.failed).toEqual([]);
    } finally {
      await watcher.stop();
    }
  });

  // Both carriers of the bytes: SFTP on the ssh2 connection, and the machine's OpenSSH client
  // (a file large enough for its quarter-second progress to see the upload mid-way).
  const carriers = [
    { transport: 'sftp', mib: 64 },
    { transport: 'auto', mib: 320 },
  ] as const;

  it.each(carriers)('a dropped connection fails clearly, keeps the partial under the ignored name, and the next run resumes ($transport)', async ({ transport, mib }) => {
    const node = lab.node('up1');
    const file = await archive(`big-${transport}.tar`, { mib, image: 'registry.local/upload/large:1' });
    const size = (await stat(file)).size;
    const s = await open(node);
    let dropped = false;
    const err = await uploadArchive(s, file, {
      transport,
      onProgress: (p) => {
        if (!dropped && p.phase === 'uploading' && p.bytesDone > 0.3 * p.bytesTotal) {
          dropped = true;
          dropConnection(s);
        }
      },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(dropped).toBe(true);
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).code).toBe('UNREACHABLE');
    expect((err as HoldfastError).message).toMatch(/^the connection to up1 dropped during the upload; run it again to resume from \d+(\.\d)? [KMG]iB \(byte \d+\)$/);
    const resumeAt = Number(/byte (\d+)/.exec((err as HoldfastError).message)![1]);
    expect(resumeAt).toBeGreaterThan(0.3 * size);

    const staging = path.join(node.hostImagesDir, `.big-${transport}.tar.holdfast-partial`);
    expect(classifyImagesDirPath(staging).kind).toBe('ignored');
    const partial = await settled(staging); // sshd hands the node's writer what it had buffered
    expect(partial).toBeGreaterThanOrEqual(resumeAt);
    expect(partial).toBeLessThan(size);
    await expect(stat(path.join(node.hostImagesDir, `big-${transport}.tar`))).rejects.toThrow(/ENOENT/);

    const again = await uploadArchive(await open(node), file);
    expect(again.resumedFrom).toBe(partial);
    expect(again.nodeHash).toMatch(/^while-sending:/); // the kept prefix and the rest, in one pass
    expect(again.transport).toBe('sftp'); // a resume writes at an offset: SFTP
    expect(again.bytesSent).toBe(size - partial);
    expect(again.alreadyPresent).toBe(false);
    expect(await sha256File(path.join(node.hostImagesDir, `big-${transport}.tar`))).toBe(await sha256File(file));
    await expect(stat(staging)).rejects.toThrow(/ENOENT/);
  });

  it.each(carriers)('a cancel (AbortSignal) stops with an AbortError, keeps the partial, and the next run resumes ($transport)', async ({ transport, mib }) => {
    const node = lab.node('up2');
    const file = await archive(`cancel-${transport}.tar`, { mib: transport === 'sftp' ? 48 : mib, image: 'registry.local/upload/large:1' });
    const size = (await stat(file)).size;
    const s = await open(node);
    const ac = new AbortController();
    const err = await uploadArchive(s, file, {
      transport,
      signal: ac.signal,
      onProgress: (p) => {
        if (p.phase === 'uploading' && p.bytesDone > 0.2 * p.bytesTotal) ac.abort();
      },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
    expect((err as Error).message).toMatch(/cancelled after \d+(\.\d)? [KMG]?i?B of \d+(\.\d)? [KMG]iB; the partial file is kept/);
    const partial = (await stat(path.join(node.hostImagesDir, `.cancel-${transport}.tar.holdfast-partial`))).size;
    expect((err as Error).message).toContain(`cancelled after ${formatBytes(partial)} of ${formatBytes(size)};`);
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(size);
    expect(s.isClosed).toBe(false); // a cancel does not hurt the session

    const again = await uploadArchive(s, file);
    expect(again.resumedFrom).toBe(partial);
    expect(await sha256File(path.join(node.hostImagesDir, `cancel-${transport}.tar`))).toBe(await sha256File(file));
  });

  it('over SFTP the node hashes while sending with the fastest hasher the probe found, and a byte corrupted on the node is caught before the rename', async () => {
    const node = lab.node('up2');
    const s = await open(node);
    // The lab node is this machine: the probe names what its shell finds.
    const tools = await s.hashTools();
    const which = (p: string) => process.env.PATH!.split(':').some((d) => existsSync(path.join(d, p)));
    expect(tools).toEqual({ hasher: which('openssl') ? 'openssl' : which('sha256sum') ? 'sha256sum' : null, follow: true });

    const file = await archive('corrupt.tar', { mib: 8 });
    const size = (await stat(file)).size;
    // One byte of one SFTP write is flipped on its way to the node, after the laptop hashed it:
    // the node's file differs from the local one by that byte.
    const sftp = await s.ssh.sftp();
    const write = sftp.write.bind(sftp);
    let flipped = false;
    sftp.write = ((h: Buffer, buf: Buffer, off: number, len: number, pos: number, cb: (err?: Error | null) => void) => {
      if (!flipped && pos + len > size / 2) {
        flipped = true;
        const copy = Buffer.from(buf.subarray(off, off + len));
        copy[len - 1]! ^= 0xff;
        return write(h, copy, 0, len, pos, cb);
      }
      return write(h, buf, off, len, pos, cb);
    }) as typeof sftp.write;
    const phases: string[] = [];
    const err = await uploadArchive(s, file, { transport: 'sftp', onProgress: (p) => void (phases.at(-1) !== p.phase && phases.push(p.phase)) }).then(
      () => null,
      (e: unknown) => e,
    );
    sftp.write = write;
    expect(flipped).toBe(true);
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).code).toBe('INTERNAL');
    expect((err as HoldfastError).message).toMatch(/^The copy of corrupt\.tar on up2 does not match the local file \(sha256 [0-9a-f]{64} on the node, [0-9a-f]{64} here\); it was removed and nothing was installed\.$/);
    expect(phases).not.toContain('renaming');
    await expect(stat(path.join(node.hostImagesDir, 'corrupt.tar'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(node.hostImagesDir, '.corrupt.tar.holdfast-partial'))).rejects.toThrow(/ENOENT/);

    // Unpatched, the same upload goes through and is verified while sending.
    const ok = await uploadArchive(s, file, { transport: 'sftp' });
    expect(ok.nodeHash).toBe(`while-sending:${tools.hasher}`);
    expect(await sha256File(path.join(node.hostImagesDir, 'corrupt.tar'))).toBe(await sha256File(file));
  });

  it('a staging file that does not match the local prefix is discarded and the upload starts over', async () => {
    const node = lab.node('up1');
    const file = await archive('stale.tar', { mib: 2 });
    await writeFile(path.join(node.hostImagesDir, '.stale.tar.holdfast-partial'), Buffer.alloc(100_000, 7));
    const r = await uploadArchive(await open(node), file);
    expect(r.resumedFrom).toBe(0);
    expect(await sha256File(path.join(node.hostImagesDir, 'stale.tar'))).toBe(await sha256File(file));
  });

  it('a staging file still growing when the next run looks (the dropped run\'s writer finishing) is resumed, not started over', async () => {
    const node = lab.node('up2');
    const file = await archive('growing.tar', { mib: 16 });
    const bytes = await readFile(file);
    const staging = path.join(node.hostImagesDir, '.growing.tar.holdfast-partial');
    // As after a cut link: the node holds the first 4 MiB, and the old connection's sftp-server
    // goes on writing what it had received, 2 MiB more in 32 KiB writes at their offsets (as
    // sftp-server does), while the next run starts.
    const first = 4 * MiB;
    const late = 2 * MiB;
    await writeFile(staging, bytes.subarray(0, first));
    const writer = (async () => {
      const fh = await openFile(staging, 'r+');
      try {
        for (let at = first; at < first + late; at += 32 * 1024) {
          await fh.write(bytes, at, 32 * 1024, at);
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await fh.close();
      }
    })();
    const notices: string[] = [];
    const r = await uploadArchive(await open(node), file, { transport: 'sftp', onNotice: (n) => notices.push(n) });
    await writer;
    expect(notices.filter((n) => /starting over/.test(n))).toEqual([]);
    expect(notices).toContain(`resuming the partial upload on up2 at ${formatBytes(first + late)} of ${formatBytes(bytes.length)}: it matches the local file's first ${formatBytes(first + late)}`);
    expect(r.resumedFrom).toBe(first + late);
    expect(r.bytesSent).toBe(bytes.length - first - late);
    expect(await sha256File(path.join(node.hostImagesDir, 'growing.tar'))).toBe(await sha256File(file));
  });

  it('refuses before writing a byte when the images dir is too small', async () => {
    const node = lab.node('tiny');
    await node.limitImagesDir(8 * MiB);
    const file = await archive('huge.tar', { mib: 32 });
    const s = await open(node);
    const err = await uploadArchive(s, file).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).code).toBe('REFUSED');
    expect((err as HoldfastError).message).toMatch(
      /^not enough free space in \/var\/lib\/rancher\/k3s\/agent\/images on tiny: [\d.]+ MiB free, [\d.]+ MiB needed/,
    );
    // The host-side dir no longer shows the node's images dir: look over SSH.
    const ls = await s.ssh.exec(['ls', '-A', '--', '/var/lib/rancher/k3s/agent/images']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toBe('');
  });

  it.each([
    { transport: 'sftp', mib: 96, name: 'watched.tar.gz', compression: 'gzip' },
    { transport: 'auto', mib: 320, name: 'watched-native.tar', compression: 'none' },
  ] as const)('k3s never sees a half-written archive: supported names only ever appear at full size ($transport)', async ({ transport, mib, name, compression }) => {
    const node = lab.node('up1');
    const image = transport === 'auto' ? 'registry.local/upload/large:1' : 'registry.local/upload/watched:1';
    const file = await archive(name, { mib, compression, image });
    const size = (await stat(file)).size;
    const s = await open(node);
    const watcher = startK3sWatcher(node);
    const seen: { rel: string; size: number }[] = [];
    let polls = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        for (const rel of await listTree(node.hostImagesDir)) {
          if (classifyImagesDirPath(rel).kind === 'ignored') continue;
          const st = await stat(path.join(node.hostImagesDir, rel)).catch(() => null);
          if (st) seen.push({ rel, size: st.size });
        }
        polls++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let partialSeen = false;
    try {
      const r = await uploadArchive(s, file, {
        transport,
        onProgress: (p: UploadProgress) => {
          if (p.phase === 'uploading' && p.bytesDone > 0 && p.bytesDone < p.bytesTotal) partialSeen = true;
        },
      });
      expect(r.transport).toBe(transport === 'auto' ? 'openssh' : 'sftp');
      await until(`the watcher to import ${name}`, async () => watcher.imported.some((i) => i.archive.endsWith(`/${name}`)));
    } finally {
      polling = false;
      await poller;
      await watcher.stop();
    }
    expect(partialSeen).toBe(true); // the upload took long enough to be observed mid-way
    expect(polls).toBeGreaterThan(5);
    expect(seen.some((x) => x.rel === name)).toBe(true);
    for (const x of seen) {
      const final = x.rel === name ? size : (await stat(path.join(node.hostImagesDir, x.rel))).size;
      expect(x, 'a supported archive name was visible before it was complete').toEqual({ rel: x.rel, size: final });
    }
    expect(watcher.failed).toEqual([]);
    expect((await listImages(node)).map((i) => i.name)).toContain(image);
  });

  it('is idempotent for the same archive and never overwrites a different one', async () => {
    const node = lab.node('up2');
    const s = await open(node);
    const file = await archive('same.tar', { mib: 1 });
    const first = await uploadArchive(s, file);
    expect(first.alreadyPresent).toBe(false);
    const again = await uploadArchive(s, file);
    expect(again).toEqual({ ...first, bytesSent: 0, alreadyPresent: true, nodeHash: 'earlier', transport: null });

    // Same size, one byte different: the hash tells them apart.
    const flipped = path.join(local, 'flipped', 'same.tar');
    const bytes = await readFile(file);
    const at = bytes.length - 2000;
    bytes[at] = bytes[at]! ^ 0xff;
    await rm(path.dirname(flipped), { recursive: true, force: true });
    await mkdir(path.dirname(flipped), { recursive: true });
    await writeFile(flipped, bytes);
    const e1 = await uploadArchive(s, flipped).then(() => null, (e: unknown) => e);
    expect((e1 as HoldfastError).code).toBe('CONFLICT');
    expect((e1 as HoldfastError).message).toMatch(/already holds a different file of the same size.*never overwrites/);

    // Different size.
    const other = await archive('other.tar', { mib: 2 });
    const e2 = await uploadArchive(s, other, { remoteName: 'same.tar' }).then(() => null, (e: unknown) => e);
    expect((e2 as HoldfastError).code).toBe('CONFLICT');
    expect(await sha256File(path.join(node.hostImagesDir, 'same.tar'))).toBe(first.sha256);
    expect((await readdir(node.hostImagesDir)).filter((n) => n.includes('holdfast-partial'))).toEqual([]);
  });

  it('refuses to install a local file that does not have the expected SHA-256', async () => {
    const node = lab.node('up2');
    const file = await archive('expect.tar', { mib: 1 });
    const err = await uploadArchive(await open(node), file, { expectedSha256: 'sha256:' + '0'.repeat(64) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as HoldfastError).code).toBe('INVALID_INPUT');
    await expect(stat(path.join(node.hostImagesDir, 'expect.tar'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(node.hostImagesDir, '.expect.tar.holdfast-partial'))).rejects.toThrow(/ENOENT/);
    const ok = await uploadArchive(await open(node), file, { expectedSha256: await sha256File(file) });
    expect(ok.sha256).toBe(await sha256File(file));
  });
});
