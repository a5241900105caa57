// The guided air-gap import over several lab nodes with k3s's watcher emulated: inspect,
// upload, wait for k3s, durable pins, safe removal — per-node results, failures isolated,
// safe to run again.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, listImages, repositoryOf, startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import { AuditLog } from '../../src/core/audit/log';
import { readLocalArchive } from '../../src/core/usecases/import/localArchive';
import { importToNode } from '../../src/core/usecases/import/run';
import { NodeSession } from '../../src/core/node/session';
import type { AuditEntry } from '../../src/shared/domain/audit';
import { labDistro, labNodeDef, runCli, tempHome } from './support';

// The nodes' distro ($HOLDFAST_LAB_DISTRO: k3s, or RKE2 in the integration-rke2 project).
const D = labDistro();

let lab: Lab;
let home: string;
let watchers: K3sWatcher[] = [];
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-import-'));

beforeAll(async () => {
  lab = await startLab({ nodes: ['i1', 'i2', 'i3', 'i4'] });
  home = tempHome();
  for (const n of lab.nodes) {
    const r = await runCli(
      ['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts],
      { HOLDFAST_HOME: home },
    );
    expect(r.code).toBe(0);
  }
  watchers = [startK3sWatcher(lab.node('i1')), startK3sWatcher(lab.node('i2'))]; // i3: k3s is down
  // i4: a k3s that adds the name@sha256 references (PR #13221) seconds after labelling the names
  await lab.node('i4').installDistroBinary(D.distro, D.release('v1.35.1+k3s1'));
  slow = startK3sWatcher(lab.node('i4'), { retagDelayMs: 3000 });
  watchers.push(slow);
});

let slow: K3sWatcher;

/** Waits (bounded) until `fn` holds; a wait for the emulated k3s, never a timing assertion. */
async function until(what: string, fn: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every reference containerd holds for an image (tag, digest refs, CRI's record), by target digest. */
async function refsOfImage(n: LabNodeHandle, digest: string) {
  return (await listImages(n)).filter((i) => i.digest === digest);
}

afterAll(async () => {
  for (const w of watchers) await w.stop();
  await lab?.stop();
});

describe('holdfast import', () => {
  it('waits until k3s has added every reference, pins, verifies them all, and only then says ok (issue #16)', async () => {
    const n = lab.node('i4');
    const file = path.join(work, 'raced.tar.gz');
    const { images } = await writeImageArchive(file, {
      format: 'oci',
      compression: 'gzip',
      images: [{ name: 'registry.local/site/raced:1', platforms: ['linux/amd64', 'linux/arm64'] }, { name: 'registry.local/site/helper:2' }],
    });
    const honoured = n.containerdLine !== '1.6';
    const r = await runCli(['import', 'i4', file, '--pin', ...(honoured ? ['--remove-archive'] : [])], { HOLDFAST_HOME: home }, 120_000);
    expect(r.stderr).not.toContain('FAILED');
    expect(r.code).toBe(0);
    // (on 1.6 the archive stays: the line then ends with what its pins become, as below)
    expect(r.stdout).toMatch(/^i4: ok — uploaded and imported, \d+ references pinned (durably )?and verified \(2 images, 6 references\)/m);
    // k3s is done with the archive (its watcher returned), so this is the final state
    await until('k3s to finish raced.tar.gz', () => slow.imported.some((i) => i.archive.endsWith('/raced.tar.gz')) || slow.failed.length > 0);
    expect(slow.failed).toEqual([]);
    for (const img of images) {
      const refs = await refsOfImage(n, img.digest);
      // the tag, the digest reference k3s added after its labels, and CRI's own record
      expect(refs.map((x) => x.name).sort()).toEqual([img.name, `${repositoryOf(img.name)}@${img.digest}`, img.configDigest].sort());
      for (const x of refs) {
        expect({ ref: x.name, cri: x.labels['io.cri-containerd.pinned'], k3s: x.labels[D.label] }).toEqual({ ref: x.name, cri: 'pinned', k3s: undefined });
      }
      expect(await criPinned(n, img.name, honoured)).toBe(honoured);
    }
    // the CLI agrees: nothing loses its pin, per reference or per image
    const table = await runCli(['images', 'i4'], { HOLDFAST_HOME: home });
    expect(table.stdout).not.toMatch(/LOSES PIN|own pin|will lose/);
    // and k3s's next start changes nothing for kubelet
    await emulateK3sStart(n);
    for (const img of images) for (const x of await refsOfImage(n, img.digest)) expect(x.labels['io.cri-containerd.pinned']).toBe('pinned');
  });

  it('imports to two nodes in parallel, pins durably, removes the archive; again is a no-op', async () => {
    const file = path.join(work, 'bundle.tar.zst');
    const { images } = await writeImageArchive(file, {
      format: 'oci',
      compression: 'zstd',
      images: [{ name: 'registry.local/site/app:3', platforms: ['linux/amd64', 'linux/arm64'] }, { name: 'registry.local/site/sidecar:1' }],
    });
    // containerd 1.6 has no CRI pinning: there the pins are made and verified, but the archive is
    // what brings the images back after kubelet's GC, so it is not removed (the one protection model).
    const honoured = lab.node('i1').containerdLine !== '1.6';
    const r = await runCli(['import', 'i1', 'i2', file, '--pin', '--remove-archive'], { HOLDFAST_HOME: home }, 120_000);
    expect(r.stderr).toContain('oci archive, zstd');
    for (const name of ['i1', 'i2']) {
      if (honoured) expect(r.stdout).toMatch(new RegExp(`^${name}: ok — uploaded and imported, \\d+ references pinned durably and verified \\(2 images, 6 references\\), archive removed$`, 'm'));
      else expect(r.stdout).toMatch(new RegExp(`^${name}: FAILED — refusing to remove bundle\\.tar\\.zst: .*no CRI image pinning`, 'm'));
    }
    expect(r.code).toBe(honoured ? 0 : 3);
    for (const name of ['i1', 'i2']) {
      const n = lab.node(name);
      expect(readdirSync(n.hostImagesDir)).toEqual(honoured ? [] : ['bundle.tar.zst']);
      for (const img of images) {
        for (const ref of await refsOfImage(n, img.digest)) {
          expect({ ref: ref.name, cri: ref.labels['io.cri-containerd.pinned'], k3s: ref.labels[D.label] }).toEqual({ ref: ref.name, cri: 'pinned', k3s: undefined });
        }
      }
      const log = JSON.parse((await runCli(['log', name, '--json'], { HOLDFAST_HOME: home })).stdout) as AuditEntry[];
      expect(log.map((e) => e.action)).toEqual(honoured ? ['rm-archive', 'pin'] : ['pin']);
    }
    const again = await runCli(['import', 'i1', 'i2', file, '--pin', '--remove-archive'], { HOLDFAST_HOME: home }, 120_000);
    expect(again.code).toBe(honoured ? 0 : 3);
    if (honoured) expect(again.stdout).toContain('i1: ok — already imported and durably pinned');
    else expect(again.stdout).toMatch(/^i1: FAILED — refusing to remove bundle\.tar\.zst/m);
  });

  it('pins again when k3s relabels an image after Holdfast pinned it, and returns only once the pins hold', async () => {
    const n = lab.node('i2');
    const file = path.join(work, 'relabel.tar');
    const { images: [img] } = await writeImageArchive(file, { format: 'docker', images: [{ name: 'registry.local/site/relabel:1' }] });
    // k3s writes its labels with the whole-map mask: a write of its own can undo a pin made a moment
    // earlier. Here it does so once, as soon as Holdfast's pin is on the tag.
    let relabelled = false;
    const k3sAgain = (async () => {
      await until('Holdfast to pin relabel:1', async () => (await labelsOf(n, img!.name).catch(() => ({}) as Record<string, string>))['io.holdfast.pinned-by'] !== undefined);
      await n.ctr(['images', 'label', img!.name, `${D.label}=pinned`]);
      relabelled = true;
    })();
    const s = await NodeSession.open(labNodeDef(lab, n));
    try {
      const result = await importToNode(s, { audit: new AuditLog(home) }, await readLocalArchive(file), { pin: true, removeArchive: false, settleMs: 4000 });
      await k3sAgain;
      expect(relabelled).toBe(true);
      expect(result.verified).toEqual({ images: 1, refs: 3 });
    } finally {
      await s.close();
    }
    for (const x of await refsOfImage(n, img!.digest)) expect({ ref: x.name, cri: x.labels['io.cri-containerd.pinned'], k3s: x.labels[D.label] }).toEqual({ ref: x.name, cri: 'pinned', k3s: undefined });
    // the audit log has both pins: the first, and the one that took the tag back from k3s
    const log = JSON.parse((await runCli(['log', 'i2', '--json'], { HOLDFAST_HOME: home })).stdout) as AuditEntry[];
    const pins = log.filter((e) => e.action === 'pin' && e.changes?.some((c) => c.ref === img!.name));
    expect(pins).toHaveLength(2);
    expect(pins[0]!.changes!.find((c) => c.ref === img!.name)!.before[D.label]).toBe('pinned');
  });

  it('refuses a corrupt archive before any byte leaves the laptop', async () => {
    const bad = path.join(work, 'broken.tar.gz');
    writeFileSync(bad, Buffer.alloc(4096, 7));
    const r = await runCli(['import', 'i1', bad, '--pin'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/broken\.tar\.gz was refused: /);
    // (on 1.6 the first test's archive stays: nothing but the archive protects its images there)
    expect(readdirSync(lab.node('i1').hostImagesDir, { recursive: true }).filter((f) => String(f).includes('broken'))).toEqual([]);
    const xz = path.join(work, 'bundle.tar.xz');
    writeFileSync(xz, 'x');
    const u = await runCli(['upload', 'i1', xz], { HOLDFAST_HOME: home });
    expect(u.code).toBe(3);
    expect(u.stderr).toContain('does not end in a suffix k3s/RKE2 imports');
  });

  it('reports a node where k3s does not import, keeps the others\' work, and resumes on a re-run', async () => {
    const file = path.join(work, 'tools.tar.gz');
    const { images } = await writeImageArchive(file, { format: 'docker', compression: 'gzip', images: [{ name: 'docker.io/library/tools:5' }] });
    // --timeout bounds the wait for k3s on both nodes: i3 (no k3s) must run into it, i1's k3s
    // watcher must import well within it even on a loaded 2-core machine.
    const r = await runCli(['import', 'i1', 'i3', file, '--pin', '--timeout', '10'], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code).toBe(1);
    // tag + digest ref + CRI's own sha256:<id> record
    // The archive stays in the images dir: the line ends with what the next start makes of its
    // pins, in the words images and inspect give, never "durably" (issue #49).
    const keptLine = (node: string, head: string) =>
      new RegExp(`^${node}: ok — ${head}, 3 references pinned and verified \\(1 image, 3 references\\)\\. Still pinned, but .+, so the pin becomes ${D.name}-managed again: remove tools\\.tar\\.gz from the images dir to keep it durable\\.$`, 'm');
    expect(r.stdout).toMatch(keptLine('i1', 'uploaded and imported'));
    expect(r.stdout).toMatch(new RegExp(`^i3: FAILED — ${D.name} did not import tools\\.tar\\.gz on i3 within 10 s`, 'm'));
    expect(r.stderr).toContain('1 of 2 nodes failed');
    expect((await labelsOf(lab.node('i1'), images[0]!.name))['io.cri-containerd.pinned']).toBe('pinned');
    // The archive is on i3, complete and verified; once k3s runs, the same command finishes.
    expect(existsSync(path.join(lab.node('i3').hostImagesDir, 'tools.tar.gz'))).toBe(true);
    await emulateK3sStart(lab.node('i3')); // k3s comes back: it imports what is in the images dir
    watchers.push(startK3sWatcher(lab.node('i3')));
    const again = await runCli(['import', 'i3', file, '--pin'], { HOLDFAST_HOME: home }, 120_000);
    expect(again.stdout).toMatch(keptLine('i3', 'imported \\(archive was already there\\)'));
    expect(again.code).toBe(0);
  });
});
