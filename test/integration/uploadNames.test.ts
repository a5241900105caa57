// Issue #16 item 3: the names Holdfast puts archives under. `upload --as` takes only a name k3s
// imports the archive under (a suffix k3s takes, a compression that matches the bytes, no hidden
// or escaping path); rm-archive can take back whatever an older Holdfast put there (non-archives
// with --force, logged); and a new build never goes under an existing archive's name, where k3s
// might never import it.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive, labelsOf, startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import type { AuditEntry } from '../../src/shared/domain/audit';
import { runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let n: LabNodeHandle;
let watcher: K3sWatcher;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-names-'));
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 120_000);

beforeAll(async () => {
  lab = await startLab({ nodes: ['u1'] });
  home = tempHome();
  n = lab.node('u1');
  const r = await cli(['node', 'add', 'u1', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);
  expect(r.code).toBe(0);
  watcher = startK3sWatcher(n);
});

afterAll(async () => {
  await watcher?.stop();
  await lab?.stop();
});

describe('upload --as', () => {
  it('refuses names k3s would not import this archive under, before a byte is sent', async () => {
    const plain = path.join(work, 'plain.tar');
    await writeImageArchive(plain, { format: 'docker', images: [{ name: 'registry.local/names/plain:1' }] });
    const gz = path.join(work, 'packed.tar.gz');
    await writeImageArchive(gz, { format: 'oci', compression: 'gzip', images: [{ name: 'registry.local/names/packed:1' }] });

    const txt = await cli(['upload', 'u1', gz, '--as', 'x.txt']);
    expect(txt.code).toBe(3);
    expect(txt.stderr).toMatch(/x\.txt is not a name k3s imports this archive under: k3s reads a \.txt file as a list of image references to pull/);
    expect(txt.stderr).toContain('--as x.tar.gz');

    const xz = await cli(['upload', 'u1', gz, '--as', 'y.tar.xz']);
    expect(xz.code).toBe(3);
    expect(xz.stderr).toMatch(/k3s ignores it/);

    const lie = await cli(['upload', 'u1', plain, '--as', 'z.tar.gz']);
    expect(lie.code).toBe(3);
    expect(lie.stderr).toMatch(/the name says gzip, but the archive is an uncompressed tar/);
    expect(lie.stderr).toContain('--as z.tar');

    const hidden = await cli(['upload', 'u1', gz, '--as', '.packed.tar.gz']);
    expect(hidden.code).toBe(3);
    for (const escape of ['../packed.tar.gz', '/tmp/packed.tar.gz', 'a/../../packed.tar.gz']) {
      const r = await cli(['upload', 'u1', gz, '--as', escape]);
      expect({ escape, code: r.code }).toEqual({ escape, code: 2 });
    }
    // nothing reached the node, not even a staging file
    expect(readdirSync(n.hostImagesDir)).toEqual([]);

    const ok = await cli(['upload', 'u1', gz, '--as', 'apps/packed.tgz']);
    expect(ok.stderr).not.toContain('not a name');
    expect(ok.code).toBe(0);
    expect(existsSync(path.join(n.hostImagesDir, 'apps', 'packed.tgz'))).toBe(true);
  }, 300_000);
});

describe('rm-archive takes back what Holdfast put there', () => {
  it('removes a non-archive only with --force, logged with its SHA-256; never k3s\'s import cache', async () => {
    // What an older Holdfast let `upload --as` write.
    const { tar: tarBytes } = await buildImageArchive({ format: 'docker', images: [{ name: 'registry.local/names/old:1' }] });
    writeFileSync(path.join(n.hostImagesDir, 'x.txt'), tarBytes);
    writeFileSync(path.join(n.hostImagesDir, 'y.tar.xz'), tarBytes);
    writeFileSync(path.join(n.hostImagesDir, 'z.tar.gz'), tarBytes);
    writeFileSync(path.join(n.hostImagesDir, '.cache.json'), '');

    for (const f of ['x.txt', 'y.tar.xz', 'z.tar.gz']) {
      const refused = await cli(['rm-archive', 'u1', f]);
      expect({ f, code: refused.code }).toEqual({ f, code: 3 });
      expect(existsSync(path.join(n.hostImagesDir, f))).toBe(true);
      const forced = await cli(['rm-archive', 'u1', f, '--force']);
      expect({ f, code: forced.code, out: forced.stdout }).toEqual({ f, code: 0, out: expect.stringMatching(new RegExp(`^removed ${f.replace(/\./g, '\\.')} .*FORCED, logged`)) });
      expect(existsSync(path.join(n.hostImagesDir, f))).toBe(false);
    }
    expect((await cli(['rm-archive', 'u1', 'x.txt'])).code).toBe(1); // gone: not found
    const cache = await cli(['rm-archive', 'u1', '.cache.json', '--force']);
    expect(cache.code).toBe(3);
    expect(cache.stderr).toContain("k3s's own import cache");
    expect(existsSync(path.join(n.hostImagesDir, '.cache.json'))).toBe(true);

    const log = JSON.parse((await cli(['log', 'u1', '--json'])).stdout) as AuditEntry[];
    const removed = log.filter((e) => e.action === 'rm-archive');
    expect(removed.map((e) => [e.archive!.path, e.forced])).toEqual([
      ['z.tar.gz', true],
      ['y.tar.xz', true],
      ['x.txt', true],
    ]);
    for (const e of removed) expect(e.archive!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(removed.find((e) => e.archive!.path === 'x.txt')!.note).toMatch(/not an image archive/);
  }, 300_000);
});

describe('a new build under an existing archive\'s name', () => {
  it('upload refuses and says why k3s may never import it; import puts it under a fresh name and imports it', async () => {
    const v1 = path.join(work, 'v1', 'app.tar');
    const v2 = path.join(work, 'v2', 'app.tar');
    await writeImageArchive(v1, { format: 'docker', images: [{ name: 'registry.local/names/app:1' }] });
    const { images: [img2] } = await writeImageArchive(v2, { format: 'docker', images: [{ name: 'registry.local/names/app:2', layerBytes: 4096 }] });
    expect((await cli(['upload', 'u1', v1])).code).toBe(0);

    const again = await cli(['upload', 'u1', v2]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a different file.*Holdfast never overwrites an archive on a node/);
    expect(again.stderr).toMatch(/keeps its record of the name/);

    const imported = await cli(['import', 'u1', v2, '--pin']);
    expect(imported.code).toBe(0);
    const fresh = readdirSync(n.hostImagesDir).find((f) => /^app\.[0-9a-f]{12}\.tar$/.test(f));
    expect(fresh).toBeDefined();
    expect(imported.stdout).toMatch(new RegExp(`^u1: ok — uploaded and imported as ${fresh!.replace(/\./g, '\\.')}, \\d+ references pinned durably and verified`, 'm'));
    expect(imported.stderr).toMatch(/note: u1: app\.tar on the node is another file/);
    expect((await labelsOf(n, img2!.name))['io.cri-containerd.pinned']).toBe('pinned');
  }, 300_000);
});
