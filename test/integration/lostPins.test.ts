// Pins lost behind Holdfast's back, over a real lab node (containerd 2.x, CRI on): Holdfast makes
// pins durable through the CLI, then the real `ctr` takes them away the ways docs/k3s-facts.md
// lists (a label removed, a transfer-service import without --local, references and a whole
// image deleted, the archive put back so k3s manages the image again). `holdfast images`,
// `images --lost`, `inspect` (JSON, HTML, CSV) and the app's live event must each say which pin
// went, when and by whom Holdfast made it, the likely causes and the remedy; what CRI reports
// must agree. Holdfast's own unpin is never a loss. A Debian 1.6 node shows the capability
// warning in `images`, `inspect` and `pin`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle, type WrittenImage } from '../../lab';
import { parseCsv, type FleetReport } from '../../src/core/usecases/fleet';
import { createHandlers, type Service } from '../../src/core/service';
import type { LiveEvent } from '../../src/shared/contract';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { ImageRef } from '../../src/shared/domain/images';
import type { LostPin } from '../../src/shared/domain/lostPins';
import { addLabNode, runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const A = 'docker.io/library/app-a:1.0';
const B = 'docker.io/library/app-b:1.0';
const C = 'docker.io/library/app-c:1.0';
const D = 'docker.io/library/app-d:1.0';

let lab: Lab;
let old: Lab;
let n: LabNodeHandle;
let home: string;
let written: WrittenImage[] = [];
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-lost-'));

async function cli<T = string>(args: string[], h = home): Promise<T> {
  const r = await runCli(args, { HOLDFAST_HOME: h }, 120_000);
  if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

/** `holdfast inspect <node> --json --html --csv`: the report, the HTML page and the CSV rows it wrote. */
async function inspectWithFiles(node: string, h: string): Promise<{ report: FleetReport; page: string; rows: string[][] }> {
  const html = path.join(work, `${node}.html`);
  const csv = path.join(work, `${node}.csv`);
  const r = await runCli(['inspect', node, '--json', '--html', html, '--csv', csv], { HOLDFAST_HOME: h }, 120_000);
  expect(r.code).toBe(0);
  return { report: JSON.parse(r.stdout) as FleetReport, page: readFileSync(html, 'utf8'), rows: parseCsv(readFileSync(csv, 'utf8')) };
}

const idOf = (name: string) => written.find((w) => w.name === name)!.configDigest;
const images = () => cli<ImageRef[]>(['images', 'lp', '--json']);
const lostNow = () => cli<LostPin[]>(['images', 'lp', '--lost', '--json']);
/** The audit entry that made `ref` durable last (what the report must quote). */
async function pinEntryFor(ref: string): Promise<AuditEntry> {
  const log = await cli<AuditEntry[]>(['log', 'lp', '--json']);
  return log.find((e) => e.action === 'pin' && e.changes?.some((c) => c.ref === ref))!;
}

beforeAll(async () => {
  [lab, old] = await Promise.all([startLab({ nodes: ['lp'] }), startLab({ nodes: ['old'], containerd: '1.6' })]);
  n = lab.node('lp');
  home = tempHome();
  const archive = path.join(n.hostImagesDir, 'apps.tar');
  ({ images: written } = await writeImageArchive(archive, { format: 'docker', images: [{ name: A }, { name: B }, { name: C }, { name: D }] }));
  await emulateK3sStart(n);
  await addLabNode(lab, n, home);
  // The safe order: durable pins, then the archive goes (Holdfast checks and logs it).
  await cli(['pin', 'lp', '--archive', 'apps.tar']);
  await cli(['rm-archive', 'lp', 'apps.tar']);
  for (const r of await images()) expect({ ref: r.name, pin: r.pin }).toEqual({ ref: r.name, pin: 'durable' });
  expect(await lostNow()).toEqual([]);
});

afterAll(async () => {
  await Promise.all([lab?.stop(), old?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

describe('pins lost behind Holdfast’s back (containerd 2.x)', () => {
  it('a CRI label removed by hand: the reference says so, with when, who and why', async () => {
    await n.ctr(['images', 'label', A, `${CRI}=`]);
    expect((await labelsOf(n, A))[CRI]).toBeUndefined();
    const pinned = await pinEntryFor(A);

    const a = (await images()).find((r) => r.name === A)!;
    expect(a.pin).toBe('none');
    expect(a.lostPin).toMatchObject({ kind: 'label-removed', ref: A, imageId: idOf(A), pinnedAt: pinned.time, pinnedBy: pinned.user });
    // Holdfast's own io.holdfast.* labels are still there: a targeted label edit is the likely cause.
    expect(a.lostPin!.causes[0]).toContain(`ctr -n k8s.io images label ${A} ${CRI}=`);
    expect(a.lostPin!.remedy).toMatchObject({ kind: 'repin', target: { refs: [A] }, command: `holdfast pin lp ${A}` });
    // Its digest reference still carries the pin, and CRI (what kubelet asks) agrees the image is pinned.
    expect(a.lostPin!.stillPinnedVia).toMatch(/^docker\.io\/library\/app-a@sha256:|^sha256:/);
    expect(await criPinned(n, A, true)).toBe(true);

    const table = await runCli(['images', 'lp'], { HOLDFAST_HOME: home });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('none (PIN LOST)');
    expect(table.stdout).toContain('1 durable pin Holdfast made is gone');
    expect(table.stdout).toContain(`${A} — pin label removed (made durable by ${pinned.user} at ${pinned.time})`);
    expect(table.stdout).toContain(`holdfast pin lp ${A}`);
  });

  it('the remedy works: re-pinning durably ends the loss', async () => {
    await cli(['pin', 'lp', A]);
    expect((await lostNow()).map((l) => l.ref)).not.toContain(A);
  });

  it('`ctr images import` through the 2.x transfer service (no --local) replaces the whole label map', async () => {
    const again = path.join(work, 'b-again.tar');
    await writeImageArchive(again, { format: 'docker', images: [{ name: B }] });
    await n.ctr(['images', 'import', again]); // what `k3s ctr images import` does on 2.x without --local
    const labels = await labelsOf(n, B);
    expect(labels[CRI]).toBeUndefined();
    expect(Object.keys(labels).filter((k) => k.startsWith('io.holdfast.'))).toEqual([]);

    const lost = (await lostNow()).find((l) => l.ref === B)!;
    expect(lost).toMatchObject({ kind: 'label-removed', imageId: idOf(B), pinnedAt: (await pinEntryFor(B)).time });
    expect(lost.causes[0]).toMatch(/k3s ctr images import.*without `--local`.*whole label map/);
  });

  it('a deleted image: every reference is reported, with no archive it must be re-imported', async () => {
    const refsOfD = (await images()).filter((r) => r.imageId === idOf(D)).map((r) => r.name);
    expect(refsOfD).toHaveLength(3); // tag, digest reference, CRI's sha256:<id> record
    for (const r of refsOfD) await n.ctr(['images', 'rm', r]);
    expect(await criPinned(n, D)).toBeNull(); // CRI no longer knows the image

    const lost = (await lostNow()).filter((l) => l.imageId === idOf(D));
    expect(lost.map((l) => l.ref).sort()).toEqual([...refsOfD].sort());
    for (const l of lost) {
      expect(l).toMatchObject({ kind: 'image-deleted', stillPinnedVia: null, remedy: { kind: 'reimport', command: 'holdfast import lp FILE --pin' } });
      expect(l.causes.join(' ')).toContain('ctr images prune --all');
    }
  });

  it('a deleted tag while the image stays pinned under its other references', async () => {
    await n.ctr(['images', 'rm', C]);
    const lost = (await lostNow()).find((l) => l.ref === C)!;
    expect(lost).toMatchObject({ kind: 'ref-deleted', imageId: idOf(C) });
    expect(lost.stillPinnedVia).not.toBeNull();
    expect(lost.causes.join(' ')).toContain(`ctr -n k8s.io images rm ${C}`);
  });

  it('an archive for a deleted image in the images dir: the remedy restores from it', async () => {
    // Same seed, same blobs: the archive brings back exactly the image that was deleted.
    await writeImageArchive(path.join(n.hostImagesDir, 'd.tar'), { format: 'docker', images: [{ name: D }] });
    const d = (await lostNow()).find((l) => l.ref === D)!;
    expect(d).toMatchObject({ kind: 'image-deleted', remedy: { kind: 'restore-from-archive', archive: 'd.tar', command: 'holdfast pin lp --archive d.tar' } });
    rmSync(path.join(n.hostImagesDir, 'd.tar'));
  });

  it('the archive put back: k3s-managed again after k3s starts, and the remedy names the archive', async () => {
    await writeImageArchive(path.join(n.hostImagesDir, 'back.tar'), { format: 'docker', images: [{ name: A }] });
    await emulateK3sStart(n);
    const lost = (await lostNow()).find((l) => l.ref === A)!;
    expect(lost).toMatchObject({ kind: 'k3s-managed-again', remedy: { kind: 'repin', archive: 'back.tar' } });
    expect(lost.causes[0]).toContain('back.tar in the images dir brings it');
    expect(lost.remedy.text).toContain('holdfast rm-archive lp back.tar');
  });

  it('inspect: the report, its summary, HTML and CSV carry the lost pins', async () => {
    const { report, page, rows } = await inspectWithFiles('lp', home);
    const node = report.nodes[0]!;
    const kinds = new Map(node.lostPins!.map((l) => [l.ref, l.kind]));
    expect(kinds.get(A)).toBe('k3s-managed-again');
    expect(kinds.get(B)).toBe('label-removed');
    expect(kinds.get(C)).toBe('ref-deleted');
    expect(kinds.get(D)).toBe('image-deleted');
    expect(node.warnings).toEqual([]);
    expect(report.summary.lostPins).toBe(node.lostPins!.length);
    expect(report.summary.atRisk[0]!.reasons.join('\n')).toMatch(/durable pins Holdfast made are gone: .*\(k3s-managed again\)/);
    // The references still there carry their loss, as `images --json` does.
    expect(node.images!.find((i) => i.name === B)!.lostPin?.kind).toBe('label-removed');

    expect(page).toContain("Pins lost behind Holdfast's back");
    expect(page).toContain(D);
    const dRow = rows.find((x) => x[2] === D)!;
    expect(dRow[3]).toBe(''); // gone from the node: no digest, no pin
    expect(dRow[7]).toMatch(/^Durable pin lost \(image deleted; made durable by .* at .*\): .* Remedy: /);
  });

  it('Holdfast’s own unpin is not a loss', async () => {
    // What is left of C (its digest reference and CRI's record) is still durable: release it.
    const rest = (await images()).filter((r) => r.imageId === idOf(C));
    expect(rest.map((r) => r.pin)).toEqual(rest.map(() => 'durable'));
    await cli(['unpin', 'lp', rest[0]!.name]);
    const lost = (await lostNow()).map((l) => l.ref);
    for (const r of rest) expect(lost).not.toContain(r.name);
    expect(await criPinned(n, rest[0]!.name, false)).toBe(false);
  });
});

describe('the live event (the app’s service, the hub watching the node)', () => {
  let service: Service;
  const events: LiveEvent[] = [];

  afterAll(async () => {
    await service?.dispose();
  });

  const waitFor = async <T>(find: () => T | undefined, what: string): Promise<T> => {
    for (let i = 0; i < 300; i++) {
      const v = find();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e.type === 'node.changed' ? e.payload.topic : e.type))}`);
  };

  it('says which pin disappeared, when Holdfast made it and why; an unpin through the app is none', async () => {
    service = createHandlers({ home });
    service.events.subscribe((e) => events.push(e));
    expect((await service['nodes.connect']({ name: 'lp' })).state).toBe('connected');
    await waitFor(() => events.find((e) => e.type === 'node.status' && e.payload.state === 'connected'), 'the watcher');

    // Two durable pins through the app, then one released through the app and the other taken away by hand.
    await service['pins.apply']({ node: 'lp', action: 'pin', target: { refs: [A, B] } });
    await service['pins.apply']({ node: 'lp', action: 'unpin', target: { refs: [A] } });
    const pinned = (await service['audit.list']({ node: 'lp' })).find((x) => x.action === 'pin' && x.changes?.some((c) => c.ref === B))!;
    await n.ctr(['images', 'label', B, `${CRI}=`]);

    const ev = await waitFor(
      () => events.find((e) => e.type === 'node.changed' && e.payload.topic === 'pins.lost' && e.payload.lostPins?.some((l) => l.ref === B)),
      'a pins.lost event for B',
    );
    if (ev.type !== 'node.changed') throw new Error('unreachable');
    const l = ev.payload.lostPins!.find((x) => x.ref === B)!;
    expect(l).toMatchObject({ node: 'lp', kind: 'label-removed', pinnedAt: pinned.time, pinnedBy: pinned.user, remedy: { kind: 'repin', target: { refs: [B] } } });
    expect(l.causes.length).toBeGreaterThan(0);
    // The refs of A were released by Holdfast itself: no event ever named them.
    const named = events.flatMap((e) => (e.type === 'node.changed' && e.payload.lostPins ? e.payload.lostPins.map((x) => x.ref) : []));
    expect(named).not.toContain(A);
    // And the channel the app lists them with agrees.
    expect((await service['pins.lost']({ node: 'lp' })).map((x) => x.ref)).toContain(B);
  });
});

describe('a node whose containerd cannot pin (Debian 1.6)', () => {
  let oldHome: string;
  const REF = 'docker.io/library/legacy:1';

  beforeAll(async () => {
    const o = old.node('old');
    oldHome = tempHome();
    await writeImageArchive(path.join(o.hostImagesDir, 'legacy.tar'), { format: 'docker', images: [{ name: REF }] });
    await emulateK3sStart(o);
    await addLabNode(old, o, oldHome);
  });

  it('images warns once on stderr and keeps --json an array of references', async () => {
    const t = await runCli(['images', 'old'], { HOLDFAST_HOME: oldHome });
    expect(t.code).toBe(0);
    const lines = t.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warning: old: containerd 1\.6\.\S+ has no CRI image pinning \(needs 1\.7\.3\+; k3s bundles 1\.7\/2\.x\) — kubelet's image GC may delete any image/);
    const j = await runCli(['images', 'old', '--json'], { HOLDFAST_HOME: oldHome });
    expect(j.stderr).toBe('');
    expect(Array.isArray(JSON.parse(j.stdout))).toBe(true);
  });

  it('inspect puts the warning in the node, its at-risk reasons, the HTML and the CSV', async () => {
    const { report, page, rows } = await inspectWithFiles('old', oldHome);
    const w = report.nodes[0]!.warnings!;
    expect(w.map((x) => x.kind)).toEqual(['no-cri-pinning']);
    expect(report.summary.atRisk[0]!.reasons).toContain(w[0]!.message);
    expect(page).toContain('has no CRI image pinning');
    expect(rows.filter((x) => x[0] === 'old' && x[2] === '' && x[7]!.startsWith('warning: containerd 1.6.'))).toHaveLength(1);
  });

  it('pin is allowed but says kubelet will not honour it, and CRI indeed reports no pin', async () => {
    const r = await runCli(['pin', 'old', REF], { HOLDFAST_HOME: oldHome });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: kubelet on old will not honour this pin: containerd 1\.6\.\S+ has no CRI image pinning/);
    expect((await labelsOf(old.node('old'), REF))[CRI]).toBe('pinned'); // the label is there (harmless)
    expect(await criPinned(old.node('old'), REF)).toBe(false); // and CRI ignores it
  });
});
