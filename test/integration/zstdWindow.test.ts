// An archive k3s cannot import (a zstd window over its 32 MiB) is refused by `holdfast upload` and
// `holdfast import` before anything reaches the node: no file in the images dir, not even a
// partial, and no SSH connection at all. The same archive already on a node is listed as one k3s
// cannot import. The samples are made by the real zstd CLI from a pipe (so the frame declares
// 2^N as its window).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../lab/fixtures';
import { startLab, type Lab } from '../../lab/lab';
import type { LabNodeHandle } from '../../lab/node';
import { readArchiveIndex } from '../../src/core/archives/format/readIndex';
import { NodeSession } from '../../src/core/node/session';
import { addLabNode, labNodeDef, runCli, tempHome } from './support';

let lab: Lab;
let node: LabNodeHandle;
let home: string;
let work: string;
let long27: string;
let long25: string;

/** Every file under dir, recursively (dotfiles and partial uploads included). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

const logins = async (): Promise<number> => ((await node.sshdLog()).match(/Accepted publickey/g) ?? []).length;

beforeAll(async () => {
  lab = await startLab({ nodes: ['zw1'] });
  node = lab.node('zw1');
  home = tempHome();
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-zw-'));
  const { tar } = await buildImageArchive({ format: 'oci', images: [{ name: 'registry.local/zw/app:1', layerBytes: 256 * 1024 }] });
  long27 = path.join(work, 'app-long27.tar.zst');
  long25 = path.join(work, 'app-long25.tar.zst');
  writeFileSync(long27, execFileSync('zstd', ['-q', '-c', '--long=27', '-'], { input: tar }));
  writeFileSync(long25, execFileSync('zstd', ['-q', '-c', '--long=25', '-'], { input: tar }));
  await addLabNode(lab, node, home, { name: 'zw1' });
});

afterAll(async () => {
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('holdfast upload / import of an archive k3s cannot import', () => {
  it('upload: refused with exit 3, the window, the limit and the fix; nothing reaches the node', async () => {
    const before = { files: tree(node.hostImagesDir), logins: await logins() };
    const r = await runCli(['upload', 'zw1', long27], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'app-long27.tar.zst was refused: unsupported: k3s cannot import it: its zstd frame declares a 128 MiB window, and k3s decodes zstd with a window of at most 32 MiB',
    );
    expect(r.stderr).toContain('Nothing was sent. Recompress it with a window of at most 32 MiB');
    expect(r.stderr).toContain('zstd -d -c --long=31 app-long27.tar.zst | zstd -T0 -19 --long=25 -o app-long27.w25.tar.zst');
    expect(tree(node.hostImagesDir)).toEqual(before.files);
    expect(await logins()).toBe(before.logins);
  });

  it('import: refused the same way before any node is contacted', async () => {
    const before = { files: tree(node.hostImagesDir), logins: await logins() };
    const r = await runCli(['import', 'zw1', long27, '--pin'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('k3s cannot import it: its zstd frame declares a 128 MiB window');
    expect(tree(node.hostImagesDir)).toEqual(before.files);
    expect(await logins()).toBe(before.logins);
  });

  it('the same archive at the accepted boundary (--long=25, a 32 MiB window) uploads', async () => {
    const before = await logins();
    const r = await runCli(['upload', 'zw1', long25], { HOLDFAST_HOME: home });
    // stderr carries the progress lines (not a terminal: plain lines); no error among them
    expect(r.stderr).not.toMatch(/^holdfast: |refused|k3s cannot import/im);
    expect(r.stderr).toContain('zw1: verifying (sha256 on the node)');
    expect(r.code).toBe(0);
    // The login count the refusals above kept still is the one a real upload moves.
    expect(await logins()).toBeGreaterThan(before);
    expect(readFileSync(path.join(node.hostImagesDir, 'app-long25.tar.zst')).equals(readFileSync(long25))).toBe(true);
  });
});

describe('an archive k3s cannot import, already in the images dir', () => {
  beforeAll(() => {
    // Put there by hand, as a technician would have done.
    writeFileSync(path.join(node.hostImagesDir, 'by-hand.tar.zst'), readFileSync(long27));
  });

  it('holdfast archives marks it as one k3s cannot import', async () => {
    const r = await runCli(['archives', 'zw1', '--json'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    const listed = (JSON.parse(r.stdout) as { archives: { path: string; error?: string; safeToRemove: boolean; images: string[] }[] }).archives;
    const a = listed.find((x) => x.path === 'by-hand.tar.zst');
    expect(a?.error).toMatch(/k3s cannot import it: its zstd frame declares a 128 MiB window/);
    expect(listed.find((x) => x.path === 'app-long25.tar.zst')).toMatchObject({ images: ['registry.local/zw/app:1'] });
  });

  it("read over the node's SFTP with unimportable: 'describe', its index says why k3s imports nothing", async () => {
    const s = await NodeSession.open(labNodeDef(lab, node));
    try {
      const abs = `${s.def.imagesDir}/by-hand.tar.zst`;
      const st = await s.files.stat(abs);
      const index = await readArchiveIndex(s.files.readStream(abs, { size: st!.size }), { compression: 'zstd', unimportable: 'describe' });
      expect(index.images).toEqual([]);
      expect(index.k3sCannotImport).toMatchObject({ cause: 'zstd-window', windowBytes: 128 * 1024 * 1024, limitBytes: 32 * 1024 * 1024, frame: 1, offset: 0 });
    } finally {
      await s.close();
    }
  });
});
