// Issue #11 over a real node: what sits in a node's images dir and what a node prints back can
// no longer exhaust the laptop. Planted bombs are refused naming their limits while the other
// archives and the images still list, and each costs one read (failures are cached like indexes);
// a same-size, same-mtime replacement is read again (over SFTP and through sudo); a command that
// prints without end (a fake sha256sum, find, df bind-mounted inside the node) is killed at its
// limit. Memory is checked against the process's peak RSS.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { dockerTagBomb, ociIndexBomb, zstdWindowBomb } from '../../lab/hostile';
import { IndexCache, scanImagesDir, type ScannedFile } from '../../src/core/archives/scan';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import type { NodeDef } from '../../src/shared/domain/nodes';
import { labNodeDef, runCli, tempHome } from './support';

const USER = labUserName('hflim');
const MiB = 1024 * 1024;
let lab: Lab;
let node: LabNodeHandle;
let work: string;
let home: string;

/**
 * Memory a step costs, from the kernel's high-water mark of the process's RSS: how far the peak
 * rose above both the RSS at the start and any earlier peak (so an earlier test's peak is not
 * charged to this one; a regression costs gigabytes, far above any earlier peak).
 */
function memoryMark(): () => number {
  const base = Math.max(process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
  return () => Math.max(0, process.resourceUsage().maxRSS * 1024 - base);
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['lm1'], users: [{ name: USER, sudo: 'nopasswd' }] });
  node = lab.node('lm1');
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-limits-'));
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function withSession<T>(def: NodeDef, fn: (s: NodeSession) => Promise<T>): Promise<T> {
  const s = await NodeSession.open(def);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const byPath = (files: ScannedFile[]) => new Map(files.map((f) => [f.path, f]));

describe('hostile archives planted in the images dir', () => {
  beforeAll(async () => {
    await writeImageArchive(path.join(node.hostImagesDir, 'good.tar'), { format: 'docker', images: [{ name: 'registry.local/lim/good:1' }] });
    writeFileSync(path.join(node.hostImagesDir, 'tags.tar'), await dockerTagBomb(40_000, 40_000));
    writeFileSync(path.join(node.hostImagesDir, 'nested.tar'), await ociIndexBomb(5, 40));
    writeFileSync(path.join(node.hostImagesDir, 'window.tar.zst'), zstdWindowBomb());
  });

  it('each is refused naming its limit, the good archive still lists, in bounded memory; a re-scan reads none of them', async () => {
    const cache = new IndexCache(path.join(work, 'cache-planted'));
    await withSession(labNodeDef(lab, node), async (s) => {
      const reads: string[] = [];
      const grown = memoryMark();
      const first = byPath(await scanImagesDir(s.files, s.def.imagesDir, { nodeKey: 'lm1', cache, onRead: (f) => reads.push(f) }));
      expect(grown()).toBeLessThan(256 * MiB);
      expect(reads.sort()).toEqual(['good.tar', 'nested.tar', 'tags.tar', 'window.tar.zst']);
      expect(first.get('good.tar')?.index?.images.map((i) => i.name)).toEqual(['registry.local/lim/good:1']);
      expect(first.get('tags.tar')?.error).toContain('too large: manifest.json names more than 10,000 images (40,000 by entry 1), over the limit archive.references (10,000)');
      expect(first.get('nested.tar')?.error).toContain('over the limit archive.expandedEntries (250,000)');
      expect(first.get('window.tar.zst')?.error).toContain('k3s cannot import it: its zstd frame declares a 1.9 GiB window');

      // The verdicts are cached by the same key as indexes: the planted files cost one read.
      const again: string[] = [];
      const second = byPath(await scanImagesDir(s.files, s.def.imagesDir, { nodeKey: 'lm1', cache, onRead: (f) => again.push(f) }));
      expect(again).toEqual([]);
      expect(second.get('tags.tar')?.error).toBe(first.get('tags.tar')?.error);
      expect(second.get('good.tar')?.index?.images.map((i) => i.name)).toEqual(['registry.local/lim/good:1']);
    });
  });

  it('holdfast archives and holdfast images still answer for the node', async () => {
    const add = await runCli(['node', 'add', 'lm1', '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts], { HOLDFAST_HOME: home });
    expect(add.stderr).toBe('');
    const archives = await runCli(['archives', 'lm1', '--json'], { HOLDFAST_HOME: home });
    expect(archives.stderr).toBe('');
    expect(archives.code).toBe(0);
    const listed = (JSON.parse(archives.stdout) as { archives: { path: string; images: string[]; error?: string }[] }).archives;
    expect(listed.find((a) => a.path === 'good.tar')?.images).toEqual(['registry.local/lim/good:1']);
    expect(listed.find((a) => a.path === 'tags.tar')?.error).toContain('over the limit archive.references');
    const images = await runCli(['images', 'lm1', '--json'], { HOLDFAST_HOME: home });
    expect(images.code).toBe(0);
    expect(Array.isArray(JSON.parse(images.stdout))).toBe(true);
  });
});

describe('a same-size, same-mtime replacement is read again', () => {
  let a: Buffer;
  let b: Buffer;
  beforeAll(async () => {
    // Same layer (same seed, 300 KiB), names of the same length: only manifest.json at the end
    // of the tar differs, so the first 64 KiB are identical too.
    a = (await buildImageArchive({ format: 'docker', images: [{ name: 'registry.local/lim/aaa:1', seed: 'same', layerBytes: 300 * 1024 }] })).tar;
    b = (await buildImageArchive({ format: 'docker', images: [{ name: 'registry.local/lim/bbb:1', seed: 'same', layerBytes: 300 * 1024 }] })).tar;
    expect(b.length).toBe(a.length);
    expect(b.subarray(0, 64 * 1024).equals(a.subarray(0, 64 * 1024))).toBe(true);
  });

  for (const mode of ['sftp', 'sudo'] as const) {
    it(`over ${mode}`, async () => {
      const def = mode === 'sftp' ? labNodeDef(lab, node) : labNodeDef(lab, node, { user: USER, sudo: true });
      const file = path.join(node.hostImagesDir, `swap-${mode}.tar`);
      const when = new Date('2026-07-01T12:00:00Z');
      const cache = new IndexCache(path.join(work, `cache-${mode}`));
      const names = (files: ScannedFile[]) => files.find((f) => f.path === `swap-${mode}.tar`)?.index?.images.map((i) => i.name);
      await withSession(def, async (s) => {
        writeFileSync(file, a);
        utimesSync(file, when, when);
        expect(names(await scanImagesDir(s.files, s.def.imagesDir, { nodeKey: 'lm1', cache }))).toEqual(['registry.local/lim/aaa:1']);
        // Replaced in place (same inode), size and mtime kept, as `cp -p` or `touch -r` leave it.
        writeFileSync(file, b);
        utimesSync(file, when, when);
        const reads: string[] = [];
        expect(names(await scanImagesDir(s.files, s.def.imagesDir, { nodeKey: 'lm1', cache, onRead: (f) => reads.push(f) }))).toEqual(['registry.local/lim/bbb:1']);
        expect(reads).toContain(`swap-${mode}.tar`);
        // Unchanged since: served from the cache.
        const none: string[] = [];
        await scanImagesDir(s.files, s.def.imagesDir, { nodeKey: 'lm1', cache, onRead: (f) => none.push(f) });
        expect(none).not.toContain(`swap-${mode}.tar`);
      });
      rmSync(file);
    });
  }
});

describe('a node printing without end', () => {
  const MARK = 'holdfast-endless-output';
  let stub: string;
  beforeAll(() => {
    stub = path.join(work, 'endless.sh');
    writeFileSync(stub, `#!/bin/sh\nexec yes ${MARK}\n`);
    chmodSync(stub, 0o755);
    chmodSync(work, 0o755); // the sudo user's commands run it too
  });

  /** Runs fn with `binary` inside the node replaced by the endless stub. */
  async function faking<T>(binary: string, fn: () => Promise<T>): Promise<T> {
    await node.execInNode(['mount', '--bind', stub, binary]);
    try {
      return await fn();
    } finally {
      await node.execInNode(['umount', binary]);
    }
  }

  /** Whether the stub still runs anywhere (the lab shares the host's process table). */
  const running = (): boolean => {
    try {
      execFileSync('pgrep', ['-f', `yes ${MARK}`]);
      return true;
    } catch {
      return false;
    }
  };
  const stopStub = (): void => {
    if (running()) execFileSync('pkill', ['-f', `yes ${MARK}`]);
  };
  async function gone(): Promise<boolean> {
    // The kill is asynchronous on the node's side; bounded polling, the outcome is what counts.
    for (let i = 0; i < 100 && running(); i++) await new Promise((r) => setTimeout(r, 100));
    return !running();
  }

  it('sha256sum (over SFTP access): killed at remote.commandOutputBytes, REFUSED naming it', async () => {
    const grown = memoryMark();
    const e = await faking('/usr/bin/sha256sum', () =>
      withSession(labNodeDef(lab, node), (s) => s.files.sha256(`${s.def.imagesDir}/good.tar`).then(
        () => null,
        (x: unknown) => x,
      )),
    );
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).code).toBe('REFUSED');
    expect((e as HoldfastError).message).toMatch(/^sha256sum on .+ printed more than 1 MiB on stdout, so it was killed: over the limit remote\.commandOutputBytes \(1 MiB\)\.$/);
    expect(await gone()).toBe(true);
    expect(grown()).toBeLessThan(128 * MiB);
  });

  it('sudo find listing the images dir: killed at remote.listingOutputBytes', async () => {
    const grown = memoryMark();
    const e = await faking('/usr/bin/find', () =>
      withSession(labNodeDef(lab, node, { user: USER, sudo: true }), (s) => s.files.listFiles(s.def.imagesDir).then(
        () => null,
        (x: unknown) => x,
      )),
    );
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).message).toMatch(/^sudo -n find on .+ printed more than 64 MiB on stdout, so it was killed: over the limit remote\.listingOutputBytes \(64 MiB\)\.$/);
    // Known limit (open): under sudo (Debian's use_pty) the root-owned command is out of reach of
    // the session's KILL and keeps running on the node after Holdfast has stopped reading it; the
    // laptop's memory stays bounded, which is what this test guards. Stop the stub by hand.
    stopStub();
    expect(grown()).toBeLessThan(256 * MiB);
  });

  it('sudo df for the free space: no answer (null) instead of unbounded memory', async () => {
    const grown = memoryMark();
    const free = await faking('/usr/bin/df', () => withSession(labNodeDef(lab, node, { user: USER, sudo: true }), (s) => s.files.freeSpace(s.def.imagesDir)));
    expect(free).toBeNull();
    stopStub(); // the same known limit as above, under sudo
    expect(grown()).toBeLessThan(128 * MiB);
  });

  it('the node works normally again afterwards', async () => {
    const hex = await withSession(labNodeDef(lab, node), (s) => s.files.sha256(`${s.def.imagesDir}/good.tar`));
    expect(hex).toBe(execFileSync('sha256sum', [path.join(node.hostImagesDir, 'good.tar')]).toString().split(' ')[0]);
    expect(readFileSync(path.join(node.hostImagesDir, 'good.tar')).length).toBeGreaterThan(0);
  });
});
