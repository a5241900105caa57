// Issue #51 items 5 and 7 on real lab nodes: `import --direct` writes to local disk only the
// blobs an image uses (a junk member, compressed past the expansion-ratio check, fits a home on a
// small tmpfs), and never takes that disk under direct.spoolFreeBytes, naming the spool; and one archive gets one verdict — a descriptor
// lying about its blob's size is refused alike by upload, import and --direct, and a docker-save
// layer that does not match its config's diff ID is refused on a node that already holds the
// config's snapshot as on a fresh one, never called verified.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, startLab, type Lab, type LabNodeHandle } from '../../lab';
import { dockerDiffIdLie, ociDeclaredSizeLie, withJunkMember } from '../../lab/hostile';
import { packTar, prng } from '../../lab/tar';
import { addLabNode, runCli, tempHome } from './support';

const MiB = 1024 * 1024;
let lab: Lab;
let fresh: LabNodeHandle;
let holder: LabNodeHandle;
let home: string;
let work: string;
const mounts: string[] = [];
const cli = (args: string[], h = home) => runCli(args, { HOLDFAST_HOME: h }, 300_000);
/** The CLI with its home and its temporary directory both on the tmpfs `h` (the spool lived in TMPDIR before #51). */
const cliOn = (args: string[], h: string) => runCli(args, { HOLDFAST_HOME: h, TMPDIR: h }, 300_000);

/** A home on a tmpfs of `size` bytes, with the fresh node added. */
async function homeOnTmpfs(size: number): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-tmpfs-home-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  mounts.push(dir);
  await addLabNode(lab, fresh, dir);
  return dir;
}

/** Files left in a spool directory (the spool is removed when the run ends). */
const spoolLeft = (h: string): string[] => {
  try {
    return readdirSync(path.join(h, 'spool'), { recursive: true }).map(String);
  } catch {
    return [];
  }
};

const images = async (n: LabNodeHandle): Promise<string> => n.ctr(['images', 'ls', '-q']);

beforeAll(async () => {
  lab = await startLab({ nodes: ['f1', 'f2'] });
  fresh = lab.node('f1');
  holder = lab.node('f2');
  home = tempHome();
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-direct-faults-'));
  await addLabNode(lab, fresh, home);
  await addLabNode(lab, holder, home);
}, 300_000);

afterAll(async () => {
  for (const m of mounts) {
    try {
      execFileSync('umount', [m]);
      rmSync(m, { recursive: true, force: true });
    } catch {
      // reported by the tests that use it
    }
  }
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('one verdict for one archive (#51 item 7)', () => {
  it('a layer declared 1 TiB for a small blob: upload, import and import --direct refuse it alike, nothing reaches the node', async () => {
    const file = path.join(work, 'lie.tar');
    writeFileSync(file, await ociDeclaredSizeLie('docker.io/library/size-lie:1'));
    const runs = [await cli(['upload', 'f1', file]), await cli(['import', 'f1', file, '--pin']), await cli(['import', 'f1', file, '--direct'])];
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/lie\.tar was refused: corrupt: blob sha256:[a-f0-9]{64} is \d+ bytes, but a descriptor says 1099511627776/);
      expect(r.stderr).toMatch(/Nothing was sent\./);
    }
    // The same words from each path.
    const said = runs.map((r) => /lie\.tar was refused: [^\n]*/.exec(r.stderr)?.[0]);
    expect(new Set(said).size).toBe(1);
    expect(readdirSync(fresh.hostImagesDir).filter((f) => f.includes('lie'))).toEqual([]);
    expect(await images(fresh)).not.toContain('size-lie');
  });

  it('a docker-save layer that is not its config\'s diff ID: refused on a fresh node and on one holding the snapshot, never "verified"', async () => {
    const { good, bad } = await dockerDiffIdLie('docker.io/library/diffid-good:1', 'docker.io/library/diffid-bad:1');
    const goodFile = path.join(work, 'diffid-good.tar');
    const badFile = path.join(work, 'diffid-bad.tar');
    writeFileSync(goodFile, good);
    writeFileSync(badFile, bad);

    const onFresh = await cli(['import', 'f1', badFile, '--direct']);
    expect(onFresh.code).not.toBe(0);
    expect(onFresh.stderr).toMatch(/unpacks to sha256:[a-f0-9]{64}, but the image's config says sha256:[a-f0-9]{64}/);
    expect(await images(fresh)).not.toContain('diffid-bad');

    // f2 unpacks the good image: the snapshot the bad config names (the same diff ID) is there.
    const ok = await cli(['import', 'f2', goodFile, '--direct']);
    expect(ok.code, ok.stderr).toBe(0);
    const onHolder = await cli(['import', 'f2', badFile, '--direct']);
    expect(onHolder.stdout).not.toMatch(/f2: ok/);
    expect(onHolder.code).toBe(onFresh.code);
    expect(onHolder.stderr).toMatch(/unpacks to sha256:[a-f0-9]{64}, but the image's config says sha256:[a-f0-9]{64}/);
    expect(await images(holder)).not.toContain('diffid-bad');
  });
});

describe('local disk bounded by what the images use (#51 item 5)', () => {
  it('a .tar.lz4 with a 192 MiB junk member (under the 1000:1 ratio check) fits a home on a 160 MiB tmpfs', async () => {
    // 160 MiB: room for the image's blobs above direct.spoolFreeBytes (64 MiB), not for the junk.
    const h = await homeOnTmpfs(160 * MiB);
    const { tar } = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/junk-carrier:1', layerBytes: 256 * 1024 }] });
    const file = path.join(work, 'junk.tar.lz4');
    writeFileSync(file, execFileSync('lz4', ['-q', '-c'], { input: await withJunkMember(tar, 192 * MiB), maxBuffer: 64 * MiB }));
    const r = await cliOn(['import', 'f1', file, '--direct'], h);
    // Today's code spooled the junk too: the tmpfs filled ("ENOSPC") before anything was sent.
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^f1: ok — sent .* pinned durably, verified$/m);
    expect(spoolLeft(h)).toEqual([]);
  });

  it('a disk short of room: refused before the blob is written, naming the spool and the limit; nothing reaches the node', async () => {
    const h = await homeOnTmpfs(66 * MiB);
    // An image whose layer (incompressible) is larger than the disk the spool is on.
    const layer = await packTar([{ name: 'hf/big.bin', data: prng('full-disk', 6 * MiB) }]);
    const diffId = 'sha256:' + createHash('sha256').update(layer).digest('hex');
    const config = JSON.stringify({ os: 'linux', architecture: 'amd64', rootfs: { type: 'layers', diff_ids: [diffId] } });
    const file = path.join(work, 'full.tar');
    writeFileSync(
      file,
      await packTar([
        { name: 'c.json', data: config },
        { name: 'l/layer.tar', data: layer },
        { name: 'manifest.json', data: JSON.stringify([{ Config: 'c.json', RepoTags: ['docker.io/library/too-big:1'], Layers: ['l/layer.tar'] }]) },
      ]),
    );
    const r = await cliOn(['import', 'f1', file, '--direct'], h);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`spooling l/layer\\.tar \\([\\d.]+ MiB\\) in ${path.join(h, 'spool')}/spool-\\w+ would leave under the limit direct\\.spoolFreeBytes \\(64 MiB\\) free on its disk`));
    expect(r.stderr).toMatch(/set HOLDFAST_HOME to a directory on a disk with room/);
    expect(spoolLeft(h)).toEqual([]);
    expect(await images(fresh)).not.toContain('too-big');
  });
});
