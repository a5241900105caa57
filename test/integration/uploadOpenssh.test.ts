// Uploads through the machine's OpenSSH client (upload/openssh.ts) against a lab node's real
// sshd: it talks only to the host key the ssh2 connection verified, a client that cannot log in
// or is missing leaves the upload to SFTP, and a byte changed on the way is caught before the
// rename. (The k3s-visibility, drop, cancel and resume tests of upload.test.ts run both ways.)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { startLab, type Lab } from '../../lab/lab';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import { uploadArchive } from '../../src/core/usecases/upload';
import { NativeUnavailable, sendWithOpenssh } from '../../src/core/usecases/upload/openssh';
import { labNodeDef } from './support';

let lab: Lab;
let work: string;
let session: NodeSession;
const saved = process.env.HOLDFAST_OPENSSH;

beforeAll(async () => {
  lab = await startLab({ nodes: ['os1'] });
  work = await mkdtemp(path.join(os.tmpdir(), 'hf-upload-openssh-'));
  session = await NodeSession.open(labNodeDef(lab, lab.node('os1')));
});

afterEach(() => {
  if (saved === undefined) delete process.env.HOLDFAST_OPENSSH;
  else process.env.HOLDFAST_OPENSSH = saved;
});

afterAll(async () => {
  await session?.close();
  await lab?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function archive(name: string): Promise<string> {
  const file = path.join(work, name);
  await writeImageArchive(file, { format: 'oci', images: [{ name: `registry.local/openssh/${name.replace(/[^a-z0-9]/g, '-')}:1`, layerBytes: 3 * 1024 * 1024 }] });
  return file;
}

/** An ssh2-style public key blob from an OpenSSH .pub line. */
const blobOf = (pubLine: string) => Buffer.from(pubLine.trim().split(/\s+/)[1]!, 'base64');

describe('uploads through the OpenSSH client', () => {
  it('is the default: the bytes on the node are the file, verified by the node, under the final name only', async () => {
    const file = await archive('plain.tar');
    const r = await uploadArchive(session, file);
    expect(r).toMatchObject({ transport: 'openssh', nodeHash: 'after-sending', resumedFrom: 0, alreadyPresent: false });
    const onNode = readFileSync(path.join(lab.node('os1').hostImagesDir, 'plain.tar'));
    expect(sha256(onNode)).toBe(sha256(readFileSync(file)));
    expect(r.sha256).toBe(sha256(onNode));
    expect((await readdir(lab.node('os1').hostImagesDir)).filter((n) => n.includes('holdfast-partial'))).toEqual([]);
  });

  it('refuses any host key but the one the ssh2 connection verified, before a byte is written', async () => {
    const other = path.join(work, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const remotePath = `${session.def.imagesDir}/.impostor.holdfast-partial`;
    const err = await sendWithOpenssh({
      client: '/usr/bin/ssh',
      target: { ssh: { ...pick(session), hostKey: blobOf(readFileSync(other + '.pub', 'utf8')) }, hasher: 'sha256sum' },
      localPath: await archive('impostor.tar'),
      size: (await stat(path.join(work, 'impostor.tar'))).size,
      remotePath,
    }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(NativeUnavailable);
    expect((err as Error).message).toMatch(/host key/i);
    await expect(stat(path.join(lab.node('os1').hostImagesDir, '.impostor.holdfast-partial'))).rejects.toThrow(/ENOENT/);
  });

  it('a client that cannot log in, or none at all, leaves the upload to SFTP', async () => {
    // An identity the node does not accept: ssh exits 255 before the remote command runs.
    const stranger = path.join(work, 'stranger');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const refused = await sendWithOpenssh({
      client: '/usr/bin/ssh',
      target: { ssh: { ...pick(session), nativeAuth: { identity: stranger } }, hasher: 'sha256sum' },
      localPath: await archive('stranger.tar'),
      size: (await stat(path.join(work, 'stranger.tar'))).size,
      remotePath: `${session.def.imagesDir}/.stranger.holdfast-partial`,
    }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(NativeUnavailable);
    expect((refused as Error).message).toMatch(/Permission denied/);

    // The same through uploadArchive, with a client that always fails that way: SFTP carries it.
    const failing = path.join(work, 'ssh-refuses');
    writeFileSync(failing, '#!/bin/sh\necho "root@127.0.0.1: Permission denied (publickey)." >&2\nexit 255\n');
    chmodSync(failing, 0o755);
    process.env.HOLDFAST_OPENSSH = failing;
    const viaFallback = await uploadArchive(session, await archive('fallback.tar'));
    expect(viaFallback.transport).toBe('sftp');
    expect(sha256(readFileSync(path.join(lab.node('os1').hostImagesDir, 'fallback.tar')))).toBe(sha256(readFileSync(path.join(work, 'fallback.tar'))));

    for (const setting of ['off', path.join(work, 'no-such-ssh')]) {
      process.env.HOLDFAST_OPENSSH = setting;
      const r = await uploadArchive(session, await archive(`none-${path.basename(setting)}.tar`));
      expect(r.transport).toBe('sftp');
    }
  });

  it('a byte changed on its way to the node is caught before the rename, and nothing is installed', async () => {
    // A client that flips one byte of what it reads, then hands the rest to the real ssh.
    const flipping = path.join(work, 'ssh-flips');
    writeFileSync(
      flipping,
      [
        `#!${process.execPath}`,
        "const { spawn } = require('node:child_process');",
        "const c = spawn('/usr/bin/ssh', process.argv.slice(2), { stdio: ['pipe', 'inherit', 'inherit'] });",
        'let at = 0; let done = false;',
        "process.stdin.on('data', (b) => { if (!done && at + b.length > 1000000) { b = Buffer.from(b); b[1000000 - at] ^= 0xff; done = true; } at += b.length; c.stdin.write(b); });",
        "process.stdin.on('end', () => c.stdin.end());",
        "c.on('exit', (code) => process.exit(code ?? 1));",
      ].join('\n'),
    );
    chmodSync(flipping, 0o755);
    process.env.HOLDFAST_OPENSSH = flipping;
    const file = await archive('flipped.tar');
    const err = await uploadArchive(session, file).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).code).toBe('INTERNAL');
    expect((err as HoldfastError).message).toMatch(/^The copy of flipped\.tar on os1 does not match the local file \(sha256 [0-9a-f]{64} on the node, [0-9a-f]{64} here\); it was removed and nothing was installed\.$/);
    await expect(stat(path.join(lab.node('os1').hostImagesDir, 'flipped.tar'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(lab.node('os1').hostImagesDir, '.flipped.tar.holdfast-partial'))).rejects.toThrow(/ENOENT/);
  });
});

function pick(s: NodeSession) {
  return { hostKey: s.ssh.hostKey, login: s.ssh.login, nativeAuth: s.ssh.nativeAuth, via: s.ssh.via };
}
