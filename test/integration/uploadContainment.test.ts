// Uploads cannot leave the images dir through a symlinked folder (issue #11, item 4): the folder
// written into is resolved on the node and compared with the images dir's realpath before
// anything is looked at, just before the open and before the rename — as root over SFTP and as a
// sudo user (whose bytes root installs). Links that stay inside, and an images dir that is itself
// a symlink (a data-dir on another disk), keep working.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { labUserName, startLab, type Lab } from '../../lab/lab';
import { K3S_IMAGES_DIR, type LabNodeHandle } from '../../lab/node';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import { uploadArchive, type UploadOptions } from '../../src/core/usecases/upload';
import { labNodeDef } from './support';

const USER = labUserName('hfup');
const MiB = 1024 * 1024;
let lab: Lab;
let local: string;
let small: string;
let big: string;
const sessions: NodeSession[] = [];

beforeAll(async () => {
  lab = await startLab({ nodes: ['uc1', 'uc2'], users: [{ name: USER, sudo: 'nopasswd' }] });
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-contain-'));
  small = path.join(local, 'app.tar');
  await writeImageArchive(small, { format: 'oci', images: [{ name: 'registry.local/contain/app:1', layerBytes: 64 * 1024 }] });
  big = path.join(local, 'big.tar');
  await writeImageArchive(big, { format: 'oci', images: [{ name: 'registry.local/contain/big:1', layerBytes: 24 * MiB }] });
});

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

type Mode = 'root (SFTP)' | 'sudo user';
async function open(node: LabNodeHandle, mode: Mode): Promise<NodeSession> {
  const s = await NodeSession.open(labNodeDef(lab, node, mode === 'sudo user' ? { user: USER, sudo: true } : {}));
  sessions.push(s);
  return s;
}

/** A folder outside the images dir, as both the host and the node see it (the lab root is not rebound). */
function outsideDir(node: LabNodeHandle, name: string): string {
  const d = path.join(node.root, name);
  mkdirSync(d, { recursive: true });
  return d;
}

/** Every entry under dir (files, dirs, links), recursively, relative to it. */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

async function refused(p: Promise<unknown>): Promise<HoldfastError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HoldfastError);
  return e as HoldfastError;
}

const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const staging = (home: string) => path.join(home, '.holdfast-staging');

describe.each([
  ['root (SFTP)', 'uc1'],
  ['sudo user', 'uc2'],
] as const)('as %s', (mode, nodeName) => {
  const node = () => lab.node(nodeName);

  it('refuses a symlinked folder that leads outside, writing nothing anywhere', async () => {
    const n = node();
    const outside = outsideDir(n, `outside-${mode === 'sudo user' ? 'sudo' : 'root'}`);
    symlinkSync(outside, path.join(n.hostImagesDir, 'escape'));
    const s = await open(n, mode);
    for (const remoteName of ['escape/app.tar', 'escape/deeper/app.tar']) {
      const err = await refused(uploadArchive(s, small, { remoteName }));
      expect(err.code).toBe('REFUSED');
      expect(err.message).toContain(`resolves to ${outside}`);
      expect(err.message).toContain('outside the images dir');
    }
    expect(tree(outside)).toEqual([]);
    // Not even the sudo user's own staging area got a byte.
    if (mode === 'sudo user') expect(existsSync(staging(`/home/${USER}`)) ? tree(staging(`/home/${USER}`)) : []).toEqual([]);
  });

  it('takes a symlinked folder that stays inside the images dir', async () => {
    const n = node();
    mkdirSync(path.join(n.hostImagesDir, 'real'), { recursive: true });
    symlinkSync(`${K3S_IMAGES_DIR}/real`, path.join(n.hostImagesDir, 'alias'));
    const s = await open(n, mode);
    const r = await uploadArchive(s, small, { remoteName: 'alias/app.tar' });
    expect(r.alreadyPresent).toBe(false);
    expect(sha(path.join(n.hostImagesDir, 'real', 'app.tar'))).toBe(r.sha256);
  });

  // While the bytes are in flight (caught before the copy is verified), and after the
  // verification, right before the rename (caught by the last check).
  it.each(['uploading', 'renaming'] as const)('refuses when the folder is swapped for an outside link while %s', async (phase) => {
    const n = node();
    const outside = outsideDir(n, `swapped-${phase}-${mode === 'sudo user' ? 'sudo' : 'root'}`);
    const folder = path.join(n.hostImagesDir, `swap-${phase}`);
    mkdirSync(folder);
    const s = await open(n, mode);
    let swapped = false;
    const onProgress: UploadOptions['onProgress'] = (p) => {
      if (swapped || p.phase !== phase || (phase === 'uploading' && p.bytesDone === 0)) return;
      // Synchronously, inside the upload: the folder moves away, a link to outside takes its name.
      renameSync(folder, `${folder}-moved`);
      symlinkSync(outside, folder);
      swapped = true;
    };
    const err = await refused(uploadArchive(s, big, { remoteName: `swap-${phase}/big.tar`, onProgress }));
    expect(swapped).toBe(true);
    expect(err.code).toBe('REFUSED');
    expect(err.message).toContain(`resolves to ${outside}`);
    expect(err.message).toContain(phase === 'uploading' ? 'during the upload' : 'before the rename');
    // Nothing landed outside, and nothing k3s would import appeared anywhere.
    expect(tree(outside)).toEqual([]);
    expect(tree(`${folder}-moved`).filter((f) => !f.endsWith('.holdfast-partial'))).toEqual([]);
  });
});

describe('an images dir that is itself a symlink (data-dir on another disk)', () => {
  it('uploads into it: containment compares real paths', async () => {
    const n = lab.node('uc1');
    // /var/lib/rancher/k3s/agent/images → images-elsewhere, inside the node.
    renameSync(n.hostImagesDir, `${n.hostImagesDir}-elsewhere`);
    symlinkSync(`${K3S_IMAGES_DIR}-elsewhere`, n.hostImagesDir);
    const s = await open(n, 'root (SFTP)');
    const r = await uploadArchive(s, small, { remoteName: 'moved.tar' });
    expect(r.remotePath).toBe(`${K3S_IMAGES_DIR}/moved.tar`);
    expect(sha(path.join(`${n.hostImagesDir}-elsewhere`, 'moved.tar'))).toBe(r.sha256);
  });
});
