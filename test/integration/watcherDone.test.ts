// Issue #49, item 3: containerd restarts while an import waits for k3s, so k3s's watcher's one
// try at the archive fails, and it never tries the unchanged file again (docs/k3s-facts.md, "The
// file watcher"). Running the import again then waits in vain: it must say so and what helps (a
// k3s start, or --direct), and that remedy must work. Real lab containerd, k3s's watcher emulated.
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab } from '../../lab';
import { commandLine } from '../../src/cli/commandLine';
import { addLabNode, runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let watcher: K3sWatcher | undefined;
// A local path with a space: the suggested command quotes it.
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-watcher done-'));

beforeAll(async () => {
  lab = await startLab({ nodes: ['wd1'] });
  home = tempHome();
  await addLabNode(lab, lab.node('wd1'), home);
});

afterAll(async () => {
  await watcher?.stop();
  await lab?.stop();
});

/** Waits (bounded) until `fn` holds: a wait for the lab, never a timing assertion. */
async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('an import whose archive k3s\'s watcher gave up on', () => {
  it('says running it again does not help and what does; a k3s start then lets it finish', async () => {
    const n = lab.node('wd1');
    const file = path.join(work, 'cut.tar');
    await writeImageArchive(file, { format: 'docker', images: [{ name: 'docker.io/site/cut:1' }] });
    const onNode = path.join(n.hostImagesDir, 'cut.tar');
    // The watcher waits 4 s (k3s: 2 s) before its try, so containerd is surely down by then.
    watcher = startK3sWatcher(n, { settleMs: 4_000 });

    // 1. The import uploads the archive and waits for k3s; containerd stops as soon as the archive
    //    is in place, k3s's watcher tries and fails, then containerd comes back.
    const first = runCli(['import', n.name, file, '--pin', '--timeout', '20'], { HOLDFAST_HOME: home }, 120_000);
    await until('the archive in place', () => existsSync(onNode));
    await n.stopContainerd();
    await until("k3s's watcher to try the archive", () => watcher!.failed.length > 0);
    await n.startContainerd();
    const one = await first;
    expect(one.code).not.toBe(0);
    expect(watcher.imported).toEqual([]);

    // 2. The same import again: the archive is there, unchanged; k3s's watcher will not take it.
    const again = await runCli(['import', n.name, file, '--pin', '--timeout', '8'], { HOLDFAST_HOME: home }, 120_000);
    const said = `${again.stdout}${again.stderr}`;
    expect(again.code, said).not.toBe(0);
    expect(again.stdout).toContain('wd1: FAILED — k3s will not import cut.tar on wd1 by itself: it was there before this run, unchanged');
    expect(again.stdout).toContain(`restart k3s on wd1, whose start imports cut.tar, then run this import again; or, without k3s: ${commandLine(['import', 'wd1', file, '--direct'])}, then holdfast rm-archive wd1 cut.tar`);
    expect(said).not.toMatch(/run the import again to resume|Run the same command again to retry/);
    expect(said).toContain('Do what each failed line says');
    expect((await listImages(n)).filter((i) => i.name.startsWith('docker.io/site/cut'))).toEqual([]);
    expect(statSync(onNode).size).toBe(statSync(file).size);
    expect(watcher.imported).toEqual([]);

    // 3. What it said helps: a k3s start imports the archive, and the same import then finishes.
    await emulateK3sStart(n);
    const done = await runCli(['import', n.name, file, '--pin', '--timeout', '30'], { HOLDFAST_HOME: home }, 120_000);
    expect(done.code, `${done.stdout}${done.stderr}`).toBe(0);
    expect(done.stdout).toContain('wd1: ok — imported (archive was already there)');
    const labels = await labelsOf(n, 'docker.io/site/cut:1');
    expect(labels['io.cri-containerd.pinned']).toBe('pinned');
    expect(labels['io.cattle.k3s.pinned']).toBeUndefined();
  }, 300_000);
});
