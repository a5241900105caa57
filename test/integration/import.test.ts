// The guided air-gap import over several lab nodes with k3s's watcher emulated: inspect,
// upload, wait for k3s, durable pins, safe removal — per-node results, failures isolated,
// safe to run again.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab } from '../../lab';
import type { AuditEntry } from '../../src/shared/domain';
import { runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let watchers: K3sWatcher[] = [];
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-import-'));

beforeAll(async () => {
  lab = await startLab({ nodes: ['i1', 'i2', 'i3'] });
  home = tempHome();
  for (const n of lab.nodes) {
    const r = await runCli(
      ['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts],
      { HOLDFAST_HOME: home },
    );
    expect(r.code).toBe(0);
  }
  watchers = [startK3sWatcher(lab.node('i1')), startK3sWatcher(lab.node('i2'))]; // i3: k3s is down
});

afterAll(async () => {
  for (const w of watchers) await w.stop();
  await lab?.stop();
});

describe('holdfast import', () => {
  it('imports to two nodes in parallel, pins durably, removes the archive; again is a no-op', async () => {
    const file = path.join(work, 'bundle.tar.zst');
    const { images } = await writeImageArchive(file, {
      format: 'oci',
      compression: 'zstd',
      images: [{ name: 'registry.local/site/app:3', platforms: ['linux/amd64', 'linux/arm64'] }, { name: 'registry.local/site/sidecar:1' }],
    });
    const r = await runCli(['import', 'i1', 'i2', file, '--pin', '--remove-archive'], { HOLDFAST_HOME: home }, 120_000);
    expect(r.stderr).toContain('oci archive, zstd');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^i1: ok — uploaded and imported, \d+ references pinned durably, archive removed$/m);
    expect(r.stdout).toMatch(/^i2: ok — uploaded and imported, \d+ references pinned durably, archive removed$/m);
    for (const name of ['i1', 'i2']) {
      const n = lab.node(name);
      expect(readdirSync(n.hostImagesDir)).toEqual([]);
      for (const img of images) {
        const labels = await labelsOf(n, img.name);
        expect(labels['io.cri-containerd.pinned']).toBe('pinned');
        expect(labels['io.cattle.k3s.pinned']).toBeUndefined();
      }
      const log = JSON.parse((await runCli(['log', name, '--json'], { HOLDFAST_HOME: home })).stdout) as AuditEntry[];
      expect(log.map((e) => e.action)).toEqual(['rm-archive', 'pin']);
    }
    const again = await runCli(['import', 'i1', 'i2', file, '--pin', '--remove-archive'], { HOLDFAST_HOME: home }, 120_000);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('i1: ok — already imported and durably pinned');
  });

  it('refuses a corrupt archive before any byte leaves the laptop', async () => {
    const bad = path.join(work, 'broken.tar.gz');
    writeFileSync(bad, Buffer.alloc(4096, 7));
    const r = await runCli(['import', 'i1', bad, '--pin'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/broken\.tar\.gz was refused: /);
    expect(readdirSync(lab.node('i1').hostImagesDir)).toEqual([]);
    const xz = path.join(work, 'bundle.tar.xz');
    writeFileSync(xz, 'x');
    const u = await runCli(['upload', 'i1', xz], { HOLDFAST_HOME: home });
    expect(u.code).toBe(3);
    expect(u.stderr).toContain('does not end in a suffix k3s imports');
  });

  it('reports a node where k3s does not import, keeps the others\' work, and resumes on a re-run', async () => {
    const file = path.join(work, 'tools.tar.gz');
    const { images } = await writeImageArchive(file, { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/tools:5' }] });
    const r = await runCli(['import', 'i1', 'i3', file, '--pin', '--timeout', '4'], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code).toBe(1);
    // tag + digest ref + CRI's own sha256:<id> record
    expect(r.stdout).toMatch(/^i1: ok — uploaded and imported, 3 references pinned durably$/m);
    expect(r.stdout).toMatch(/^i3: FAILED — k3s did not import tools\.tar\.gz on i3 within 4 s/m);
    expect(r.stderr).toContain('1 of 2 nodes failed');
    expect((await labelsOf(lab.node('i1'), images[0]!.name))['io.cri-containerd.pinned']).toBe('pinned');
    // The archive is on i3, complete and verified; once k3s runs, the same command finishes.
    expect(existsSync(path.join(lab.node('i3').hostImagesDir, 'tools.tar.gz'))).toBe(true);
    await emulateK3sStart(lab.node('i3')); // k3s comes back: it imports what is in the images dir
    watchers.push(startK3sWatcher(lab.node('i3')));
    const again = await runCli(['import', 'i3', file, '--pin'], { HOLDFAST_HOME: home }, 120_000);
    expect(again.stdout).toMatch(/^i3: ok — imported \(archive was already there\), 2 references pinned durably$/m);
    expect(again.code).toBe(0);
  });
});
