// Chaos (issue #11, item 5): faults injected into real lab nodes while Holdfast works, then the
// same command run again — nothing lost, nothing half-applied, nothing half-visible to k3s.
//   - the SSH connection cut mid-upload, 10 times (a loopback proxy of this test closes the TCP
//     connection after a set number of bytes), each run resuming the last;
//   - containerd stopped mid-pin (`holdfast pin --all-k3s` on many references) and mid-import;
//   - another client writing labels on the same images all through a pin;
//   - many Holdfast processes (CLI) and the app's service adding nodes to one $HOLDFAST_HOME.
// Every case is bounded in count and time and prints one line with its figures.
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { emulateK3sStart, listImages, startK3sWatcher } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import type { LabNodeHandle } from '../../lab/node';
import { classifyImagesDirPath } from '../../src/shared/archiveSuffixes';
import { AuditLog } from '../../src/core/audit/log';
import { NodeStore } from '../../src/core/config/nodes';
import { GrpcContainerdClient } from '../../src/core/containerd/client';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import { PROVENANCE } from '../../src/shared/domain/labels';
import { createHandlers } from '../../src/core/service';
import { uploadArchive } from '../../src/core/usecases/upload';
import { addLabNode, labNodeDef, runCli, sha256File, tempHome, type CliResult } from './support';
import { cuttingProxy } from './cuttingProxy';

const MiB = 1024 * 1024;
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

let lab: Lab;
let local: string;

beforeAll(async () => {
  lab = await startLab({ nodes: ['cx-up', 'cx-pin', 'cx-imp', 'cx-lbl'] });
  local = await mkdtemp(path.join(os.tmpdir(), 'hf-chaos-'));
});

afterAll(async () => {
  await lab?.stop();
  if (local) await rm(local, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every file under dir whose name k3s would import (a supported archive, a .txt list), with its size. */
function importableFiles(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
    const abs = path.join(dir, rel);
    let st;
    try {
      st = statSync(abs);
    } catch {
      continue; // renamed meanwhile
    }
    if (st.isFile() && classifyImagesDirPath(rel.split(path.sep).join('/')).kind !== 'ignored') out.set(rel, st.size);
  }
  return out;
}

describe('the SSH connection cut mid-upload, 10 times', () => {
  it('each run resumes the last; the archive ends byte-identical and k3s never sees a partial one', async () => {
    const n = lab.node('cx-up');
    const file = path.join(local, 'chaos.tar');
    await writeImageArchive(file, { format: 'oci', images: [{ name: 'registry.local/chaos/big:1', layerBytes: 40 * MiB }] });
    const size = statSync(file).size;
    const want = await sha256File(file);
    const proxy = await cuttingProxy(n.port);
    // The node's host key, under the proxy's address.
    const kh = path.join(tempHome(), 'known_hosts');
    writeFileSync(kh, `[127.0.0.1]:${proxy.port} ${n.knownHostsLine.split(' ').slice(1).join(' ')}\n`);
    const def = labNodeDef(lab, n, { port: proxy.port, knownHosts: kh });
    const stagingOnNode = path.join(n.hostImagesDir, 'chaos', '.chaos.tar.holdfast-partial');
    const finalOnNode = path.join(n.hostImagesDir, 'chaos', 'chaos.tar');

    // What k3s would see: any importable name that is not the complete archive is a violation.
    const seen: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const [rel, bytes] of importableFiles(n.hostImagesDir)) if (bytes !== size) seen.push(`${rel} at ${bytes} bytes`);
        await sleep(20);
      }
    })();

    const KILLS = 10;
    const staged: number[] = [];
    const failures: string[] = [];
    const notices: string[] = [];
    const onNotice = (n: string) => void (/partial upload/.test(n) && notices.push(n));
    let final;
    try {
      for (let run = 0; run <= KILLS; run++) {
        // Cut after about another tenth of the file (plus the SSH handshake and the resume check).
        proxy.cutAfter = run < KILLS ? Math.round(size / (KILLS + 2)) + 256 * 1024 : null;
        const s = await NodeSession.open(def);
        try {
          if (run < KILLS) {
            const err = await uploadArchive(s, file, { remoteName: 'chaos/chaos.tar', onNotice }).then(
              () => null,
              (e: unknown) => e,
            );
            expect(err).toBeInstanceOf(HoldfastError);
            expect((err as HoldfastError).code).toBe('UNREACHABLE');
            failures.push((err as HoldfastError).message);
            staged.push(statSync(stagingOnNode).size);
            expect(importableFiles(n.hostImagesDir).size).toBe(0);
          } else {
            final = await uploadArchive(s, file, { remoteName: 'chaos/chaos.tar', onNotice });
          }
        } finally {
          await s.close().catch(() => undefined);
        }
      }
    } finally {
      watching = false;
      await watcher;
      await proxy.close();
    }
    // Every run after the first resumed what the node held, none started over (the check waits
    // out the cut connection's sftp-server still writing what it had received).
    expect(notices.filter((n) => !n.startsWith('resuming the partial upload on cx-up at '))).toEqual([]);
    expect(notices).toHaveLength(KILLS);
    // Each cut left more on the node than the one before.
    for (let i = 1; i < staged.length; i++) expect(staged[i]!).toBeGreaterThan(staged[i - 1]!);
    expect(proxy.cuts).toBe(KILLS);
    // The last run resumed from what the node held by then: at least what was measured right after
    // the cut, more when the node's sftp-server was still writing out what it had received (seen
    // in a loaded run: 23.76 MB on the node by then, 23.50 MB at the cut). Those late writes are
    // the file's own bytes at their own offsets, and the hash below is checked before the rename.
    expect(final!.resumedFrom).toBeGreaterThanOrEqual(staged[KILLS - 1]!);
    expect(final!.resumedFrom).toBeLessThan(size);
    expect(final!.bytesSent).toBe(size - final!.resumedFrom);
    expect(await sha256File(finalOnNode)).toBe(want);
    expect(final!.sha256).toBe(want);
    expect(() => statSync(stagingOnNode)).toThrow();
    expect(seen).toEqual([]);
    console.log(
      `chaos upload: ${KILLS} connections cut mid-upload of ${(size / MiB).toFixed(1)} MiB, ${KILLS + 1} runs; kept on the node after each cut (MiB): ${staged.map((b) => (b / MiB).toFixed(1)).join(', ')}; last run resumed at ${(final!.resumedFrom / MiB).toFixed(1)} MiB and sent ${(final!.bytesSent / MiB).toFixed(1)} MiB; byte-identical: yes; importable names seen before verification: ${seen.length}`,
    );
  }, 300_000);
});

/**
 * Per reference (CRI's sha256:<id> records aside): durable (Holdfast's pin, whole), untouched by
 * Holdfast (k3s-pinned, or not pinned yet by a k3s import that was cut short), or half-applied.
 */
async function pinStates(n: LabNodeHandle, prefix: string): Promise<{ durable: string[]; k3s: string[]; half: string[] }> {
  const out = { durable: [] as string[], k3s: [] as string[], half: [] as string[] };
  for (const img of await listImages(n)) {
    if (!img.name.includes(prefix)) continue;
    const l = img.labels;
    if (l[CRI] === 'pinned' && l[K3S] === undefined && l[PROVENANCE.by]) out.durable.push(img.name);
    else if (!l[PROVENANCE.by] && (l[K3S] === 'pinned') === (l[CRI] === 'pinned')) {
      if (l[K3S] === 'pinned') out.k3s.push(img.name);
    } else out.half.push(`${img.name} ${JSON.stringify(l)}`);
  }
  return out;
}

/** References the audit log records as made durable on the node (in any entry, failed runs included). */
async function auditedPins(home: string, node: string): Promise<Set<string>> {
  const refs = new Set<string>();
  for (const e of await new AuditLog(home).list(node)) {
    if (e.action !== 'pin') continue;
    for (const c of e.changes ?? []) if (c.after[CRI] === 'pinned' && c.after[K3S] === undefined) refs.add(c.ref);
  }
  return refs;
}

/**
 * Starts `cli` and stops the node's containerd as soon as `ready` says the work is under way
 * (polled on the node's own socket); then waits for the CLI, starts containerd again.
 */
async function stopContainerdDuring(n: LabNodeHandle, cli: Promise<CliResult>, ready: (cd: GrpcContainerdClient) => Promise<boolean>): Promise<{ r: CliResult; stoppedMidway: boolean }> {
  const cd = new GrpcContainerdClient({ target: `unix:${n.hostSocket}`, namespace: 'k8s.io', describe: 'chaos observer' });
  let finished = false;
  void cli.then(() => (finished = true));
  let stoppedMidway = false;
  try {
    for (let i = 0; i < 3000 && !finished; i++) {
      if (await ready(cd).catch(() => false)) {
        await n.stopContainerd();
        stoppedMidway = !finished;
        break;
      }
      await sleep(10);
    }
  } finally {
    cd.close();
  }
  const r = await cli;
  await n.startContainerd();
  return { r, stoppedMidway };
}

/**
 * A k3s start re-imports the archive and re-pins its images, keeping other labels, Holdfast's
 * provenance too. Each round starts from references Holdfast never touched: that is what makes
 * a half-applied one (provenance set, k3s label still there) recognisable.
 */
async function forgetProvenance(n: LabNodeHandle, prefix: string): Promise<void> {
  const cd = new GrpcContainerdClient({ target: `unix:${n.hostSocket}`, namespace: 'k8s.io', describe: 'chaos reset' });
  try {
    // CRI's sha256:<id> records of these images carry the pin (and provenance) too.
    for (const img of await cd.listImages([`labels."${PROVENANCE.by}"`])) {
      if (!img.name.includes(prefix) && !img.name.startsWith('sha256:')) continue;
      await cd.updateImageLabels(img.name, Object.fromEntries(Object.values(PROVENANCE).map((k) => [k, null])));
    }
  } finally {
    cd.close();
  }
}

const durableCount = async (cd: GrpcContainerdClient) => (await cd.listImages([`labels."${PROVENANCE.by}"`])).length;

describe('containerd stopped mid-pin and mid-import', () => {
  it('pin --all-k3s: every reference fully durable or untouched after the fault, all durable after the re-run, every pin in the audit log', async () => {
    const n = lab.node('cx-pin');
    const IMAGES = 60;
    await writeImageArchive(path.join(n.hostImagesDir, 'many.tar'), {
      format: 'docker',
      images: Array.from({ length: IMAGES }, (_, i) => ({ name: `docker.io/chaos/many-${i}:1` })),
    });
    const home = tempHome();
    await addLabNode(lab, n, home);
    const ROUNDS = 3;
    const figures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // k3s (re)starts: the archive is still there, so every reference is k3s-managed again.
      await emulateK3sStart(n);
      await forgetProvenance(n, 'chaos/many-');
      const start = await pinStates(n, 'chaos/many-');
      expect(start.k3s.length).toBe(IMAGES * 2);
      // Stop after a few references (round 1), about half (2), most (3).
      const after = [3, IMAGES, Math.round(IMAGES * 1.6)][round - 1]!;
      const { r, stoppedMidway } = await stopContainerdDuring(n, runCli(['pin', n.name, '--all-k3s'], { HOLDFAST_HOME: home }), async (cd) => (await durableCount(cd)) >= after);
      const mid = await pinStates(n, 'chaos/many-');
      expect(mid.half).toEqual([]);
      if (stoppedMidway) expect(r.code).not.toBe(0);
      // Every durable reference is in the audit log, the failed run's entry included.
      const audited = await auditedPins(home, n.name);
      expect(mid.durable.filter((ref) => !audited.has(ref))).toEqual([]);

      const again = await runCli(['pin', n.name, '--all-k3s'], { HOLDFAST_HOME: home });
      expect(again.stderr).toBe('');
      expect(again.code, again.stdout).toBe(0);
      const end = await pinStates(n, 'chaos/many-');
      expect(end).toEqual({ durable: expect.any(Array), k3s: [], half: [] });
      expect(end.durable.length).toBe(IMAGES * 2);
      const auditedEnd = await auditedPins(home, n.name);
      expect(end.durable.filter((ref) => !auditedEnd.has(ref))).toEqual([]);
      figures.push(`round ${round}: containerd stopped ${stoppedMidway ? 'mid-pin' : 'after the pin'} with ${mid.durable.length}/${IMAGES * 2} durable (exit ${r.code}), half-applied 0, re-run → ${end.durable.length} durable`);
    }
    expect(n.containerdCrashes).toBe(0);
    console.log(`chaos pin: ${ROUNDS} containerd stops during holdfast pin --all-k3s on ${IMAGES * 2} references; ${figures.join('; ')}; durable pins missing from the audit log: 0`);
  }, 600_000);

  it('import --pin: stopped while k3s imports and while pinning; re-run after the restart ends all durable', async () => {
    const n = lab.node('cx-imp');
    const IMAGES = 40;
    const file = path.join(local, 'imp.tar');
    await writeImageArchive(file, { format: 'docker', images: Array.from({ length: IMAGES }, (_, i) => ({ name: `docker.io/chaos/imp-${i}:1` })) });
    const home = tempHome();
    await addLabNode(lab, n, home);
    const onNode = path.join(n.hostImagesDir, 'imp.tar');
    const importCli = () => runCli(['import', n.name, file, '--pin', '--timeout', '60'], { HOLDFAST_HOME: home }, 120_000);
    const figures: string[] = [];

    // 1. While k3s imports: containerd stops as soon as k3s's import of the verified archive
    //    has created its first image.
    let watcher = await startK3sWatcher(n);
    const one = await stopContainerdDuring(n, importCli(), async (cd) => (await cd.listImages(['name~="^docker.io/chaos/imp-"'])).length > 0);
    await watcher.stop();
    const mid1 = await pinStates(n, 'chaos/imp-');
    expect(mid1.half).toEqual([]);
    expect(statSync(onNode).size).toBe(statSync(file).size);
    figures.push(`stopped once k3s's import had created an image: exit ${one.r.code}, ${mid1.durable.length} durable, ${mid1.k3s.length} k3s-pinned, half-applied 0`);

    // 2. While pinning: k3s restarted with containerd (its start-up re-imports the archive),
    //    then the import again, stopped once the first pins are durable.
    await emulateK3sStart(n);
    await forgetProvenance(n, 'chaos/imp-');
    const two = await stopContainerdDuring(n, importCli(), async (cd) => (await durableCount(cd)) >= 5);
    const mid2 = await pinStates(n, 'chaos/imp-');
    expect(mid2.half).toEqual([]);
    const audited = await auditedPins(home, n.name);
    expect(mid2.durable.filter((ref) => !audited.has(ref))).toEqual([]);
    figures.push(`stopped while pinning: exit ${two.r.code}, ${mid2.durable.length} durable, ${mid2.k3s.length} k3s-pinned, half-applied 0`);

    // 3. k3s restarts with containerd; the same import again finishes the job.
    await emulateK3sStart(n);
    await forgetProvenance(n, 'chaos/imp-');
    watcher = await startK3sWatcher(n);
    const done = await importCli();
    await watcher.stop();
    expect(done.code, `${done.stderr}${done.stdout}`).toBe(0);
    const end = await pinStates(n, 'chaos/imp-');
    expect(end.k3s).toEqual([]);
    expect(end.half).toEqual([]);
    expect(end.durable.length).toBe(IMAGES * 2);
    expect(n.containerdCrashes).toBe(0);
    console.log(`chaos import: 2 containerd stops during holdfast import --pin of ${IMAGES} images; ${figures.join('; ')}; re-run → ${end.durable.length}/${IMAGES * 2} references durable, lost 0`);
  }, 600_000);
});

describe('another client writing labels all through a pin', () => {
  it('0 clobbered labels on 120 references, every pin durable', async () => {
    const n = lab.node('cx-lbl');
    const IMAGES = 60;
    await writeImageArchive(path.join(n.hostImagesDir, 'busy.tar'), {
      format: 'docker',
      images: Array.from({ length: IMAGES }, (_, i) => ({ name: `docker.io/chaos/busy-${i}:1` })),
    });
    await emulateK3sStart(n);
    const refs = (await listImages(n)).map((i) => i.name).filter((r) => r.includes('chaos/busy-'));
    expect(refs).toHaveLength(IMAGES * 2);
    const home = tempHome();
    await addLabNode(lab, n, home);

    // The other client: per-key updates, as kubelet/CRI or an operator's tool make them, each one
    // a new value (and every 7th a new key) so that any lost write is visible.
    const cd = new GrpcContainerdClient({ target: `unix:${n.hostSocket}`, namespace: 'k8s.io', describe: 'other client' });
    const wrote = new Map<string, Map<string, string>>(refs.map((r) => [r, new Map()]));
    let writes = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop && writes < 20_000) {
        const ref = refs[writes % refs.length]!;
        const key = `team.example/w${Math.floor(writes / (refs.length * 7))}`;
        const value = `v${writes}`;
        await cd.updateImageLabels(ref, { [key]: value });
        wrote.get(ref)!.set(key, value);
        writes++;
      }
    })();
    let pinWrites = 0;
    let pin: CliResult;
    try {
      // Writes are under way before the pin starts, and go on until it ends.
      while (writes < refs.length) await sleep(5);
      const before = writes;
      pin = await runCli(['pin', n.name, '--all-k3s'], { HOLDFAST_HOME: home });
      pinWrites = writes - before;
    } finally {
      stop = true;
      await writer;
      cd.close();
    }
    expect(pin.stderr).toBe('');
    expect(pin.code).toBe(0);
    expect(pinWrites).toBeGreaterThan(refs.length);
    let clobbered = 0;
    const labels = new Map((await listImages(n)).map((i) => [i.name, i.labels]));
    for (const ref of refs) {
      const l = labels.get(ref)!;
      expect(l[CRI]).toBe('pinned');
      expect(l[K3S]).toBeUndefined();
      for (const [k, v] of wrote.get(ref)!) if (l[k] !== v) clobbered++;
    }
    expect(clobbered).toBe(0);
    console.log(`chaos labels: ${writes} label writes by another client (${pinWrites} during the pin) on ${refs.length} references; pins made durable: ${refs.length}; clobbered labels: ${clobbered}`);
  }, 300_000);
});

describe('many Holdfast processes editing one $HOLDFAST_HOME', () => {
  it('20 CLI adds of distinct names, 5 of the same name and 10 adds through the app\'s service at once: none lost, one winner', async () => {
    const home = tempHome();
    const add = (name: string, host: string) => runCli(['node', 'add', name, '--host', host, '--no-check'], { HOLDFAST_HOME: home }, 180_000);
    const service = createHandlers({ home });
    const cliDistinct = Array.from({ length: 20 }, (_, i) => add(`cli-${i}`, `10.9.0.${i + 1}`));
    const cliSame = Array.from({ length: 5 }, (_, i) => add('same', `10.9.1.${i + 1}`));
    const app = Array.from({ length: 10 }, (_, i) => service['nodes.add']({ node: { name: `app-${i}`, host: `10.9.2.${i + 1}` } }).then(
      () => 'ok',
      (e: unknown) => `failed: ${(e as Error).message}`,
    ));
    const [distinct, same, viaApp] = await Promise.all([Promise.all(cliDistinct), Promise.all(cliSame), Promise.all(app)]);
    await service.dispose();

    expect(distinct.map((r) => r.code)).toEqual(Array(20).fill(0));
    expect(viaApp).toEqual(Array(10).fill('ok'));
    const winners = same.filter((r) => r.code === 0);
    const losers = same.filter((r) => r.code !== 0);
    expect(winners).toHaveLength(1);
    expect(losers.map((r) => r.code)).toEqual([1, 1, 1, 1]);
    for (const r of losers) expect(r.stderr).toContain('a node named "same" already exists');
    const nodes = await new NodeStore(home).list();
    expect(nodes.map((n) => n.name).sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `cli-${i}`), ...Array.from({ length: 10 }, (_, i) => `app-${i}`), 'same'].sort());
    // The one stored is the winner's (each of the five gave its own address).
    expect(nodes.find((x) => x.name === 'same')!.host).toBe(`10.9.1.${same.findIndex((r) => r.code === 0) + 1}`);
    const lost = 31 - nodes.length;
    console.log(`chaos config: 25 CLI processes and 10 app adds at once on one nodes.json; stored ${nodes.length} of 31 expected (lost ${lost}); "same": ${winners.length} winner, ${losers.length} CONFLICT`);
  }, 300_000);
});
