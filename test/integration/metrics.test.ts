// `holdfast metrics --local` on a real lab node (containerd 2.x): Holdfast pointed at the node's
// containerd socket and images dir on this machine (--socket, --images-dir), no SSH, as it runs on
// a node from a systemd timer. Pins are set the ways a site gets them (k3s importing archives, a
// durable pin through Holdfast, an import that carries no pin) and the series must say what
// containerd holds; a pin taken away with `ctr` shows as lost; the textfile is replaced whole
// (rename, never rewritten in place); a missing socket still writes the file with the failure;
// the laptop's `inspect --openmetrics` over SSH gives the same values with a node label; and
// Debian's promtool accepts every output.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import type { FleetReport } from '../../src/shared/fleet';
import { addLabNode, repoRoot, runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const A = 'docker.io/library/metrics-a:1.0'; // keep.tar, then made durable by Holdfast
const B = 'docker.io/library/metrics-b:1.0'; // apps.tar, k3s-pinned, its archive stays
const C = 'docker.io/library/metrics-c:1.0'; // apps.tar, idem
const D = 'docker.io/library/metrics-d:1.0'; // gone.tar, k3s-pinned, its archive removed: loses the pin
const E = 'docker.io/library/metrics-e:1.0'; // imported with ctr: no pin at all

let lab: Lab;
let n: LabNodeHandle;
let home: string;
/** A's image id: CRI's own sha256:<id> record of it. */
let idOfA: string;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-metrics-'));

/** `holdfast metrics --local` on the lab node, named as the SSH node is (so its audit log applies). */
const local = (extra: string[] = []) => ['metrics', '--local', '--name', 'mx', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, ...extra];

/** The samples of an exposition text: `name{labels}` → value (HELP/TYPE lines must precede each family). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const typed = new Set<string>();
  for (const line of text.trimEnd().split('\n')) {
    const t = /^# TYPE (\S+) gauge$/.exec(line);
    if (t) typed.add(t[1]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    expect(typed.has(m[1]!), `${m[1]} has no TYPE line before it`).toBe(true);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

/** Debian's promtool (package prometheus): the exposition must lint clean. */
function promtoolCheck(text: string): void {
  execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
}

async function metrics(extra: string[] = []): Promise<string> {
  const r = await runCli(local(extra), { HOLDFAST_HOME: home }, 120_000);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['mx'] });
  n = lab.node('mx');
  home = tempHome();
  idOfA = (await writeImageArchive(path.join(n.hostImagesDir, 'keep.tar'), { format: 'docker', images: [{ name: A }] })).images[0]!.configDigest;
  await writeImageArchive(path.join(n.hostImagesDir, 'apps.tar'), { format: 'docker', images: [{ name: B }, { name: C }] });
  await writeImageArchive(path.join(n.hostImagesDir, 'gone.tar'), { format: 'docker', images: [{ name: D }] });
  await emulateK3sStart(n);
  rmSync(path.join(n.hostImagesDir, 'gone.tar'));
  const e = path.join(work, 'e.tar');
  await writeImageArchive(e, { format: 'docker', images: [{ name: E }] });
  await n.ctr(['images', 'import', e]); // the 2.x transfer service: no pin label
  // From the laptop, over SSH: A made durable (recorded in the audit log of `home`).
  await addLabNode(lab, n, home, { name: 'mx' });
  const pin = await runCli(['pin', 'mx', '--archive', 'keep.tar'], { HOLDFAST_HOME: home }, 120_000);
  expect(pin.code, pin.stderr).toBe(0);
});

afterAll(async () => {
  await lab?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('holdfast metrics --local on a lab node (containerd 2.x)', () => {
  it('says what containerd holds: images by pin, the pin lost at the next start, archives, disk, success', async () => {
    // What containerd holds, read with ctr: the setup is what the expectations below assume.
    expect(await labelsOf(n, A)).toMatchObject({ [CRI]: 'pinned' });
    expect((await labelsOf(n, A))[K3S]).toBeUndefined();
    for (const r of [B, C, D]) expect(await labelsOf(n, r)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    expect((await labelsOf(n, E))[CRI]).toBeUndefined();
    expect((await labelsOf(n, E))[K3S]).toBeUndefined();

    const before = Math.floor(Date.now() / 1000);
    const text = await metrics();
    promtoolCheck(text);
    const s = samples(text);
    expect(s.get('holdfast_images{state="durable"}')).toBe(1); // A
    expect(s.get('holdfast_images{state="k3s"}')).toBe(3); // B, C, D
    expect(s.get('holdfast_images{state="unpinned"}')).toBe(1); // E
    expect(s.get('holdfast_images_losing_pin_at_next_start')).toBe(1); // D: no archive brings it back
    expect(s.get('holdfast_pins_lost')).toBe(0);
    expect(s.get('holdfast_archives{safe_to_remove="true"}')).toBe(1); // keep.tar: A is durable
    expect(s.get('holdfast_archives{safe_to_remove="false"}')).toBe(1); // apps.tar: B and C are k3s-pinned
    expect(s.get('holdfast_check_success')).toBe(1);
    expect(s.get('holdfast_check_timestamp_seconds')).toBeGreaterThanOrEqual(before);
    expect(s.has('holdfast_images_at_risk')).toBe(true);

    // The image file system as this machine's statfs sees containerd's root (the lab node's is on the host's).
    const fs = await import('node:fs/promises').then((m) => m.statfs(n.hostImagesDir));
    expect(s.get('holdfast_imagefs_capacity_bytes')).toBe(fs.blocks * fs.bsize);
    expect(s.get('holdfast_imagefs_used_bytes')).toBeGreaterThan(0);
    expect(s.get('holdfast_imagefs_used_bytes')).toBeLessThanOrEqual(s.get('holdfast_imagefs_capacity_bytes')!);
    expect(s.get('holdfast_gc_high_threshold_ratio')).toBe(0.85); // kubelet's default: no k3s config sets it
  });

  it('the laptop over SSH (`inspect --openmetrics`) gives the same values, labelled with the node', async () => {
    const file = path.join(work, 'fleet.prom');
    const r = await runCli(['inspect', 'mx', '--openmetrics', file], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const fleet = readFileSync(file, 'utf8');
    promtoolCheck(fleet);
    const viaSsh = samples(fleet);
    const here = samples(await metrics());
    for (const key of [
      'holdfast_images{state="durable"}',
      'holdfast_images{state="k3s"}',
      'holdfast_images{state="unpinned"}',
      'holdfast_images_losing_pin_at_next_start',
      'holdfast_images_at_risk',
      'holdfast_pins_lost',
      'holdfast_archives{safe_to_remove="true"}',
      'holdfast_archives{safe_to_remove="false"}',
      'holdfast_check_success',
    ]) {
      const labelled = key.includes('{') ? key.replace('{', '{node="mx",') : `${key}{node="mx"}`;
      expect([key, viaSsh.get(labelled)]).toEqual([key, here.get(key)]);
    }
    // Every series `metrics --local` writes, the node label aside: the image file system and
    // kubelet's GC threshold too, read over SSH from the node's disk picture.
    const unlabelled = [...viaSsh.keys()].map((k) => k.replace('{node="mx"}', '').replace('{node="mx",', '{')).sort();
    expect(unlabelled).toEqual([...here.keys()].sort());
    expect(unlabelled).toEqual(expect.arrayContaining(['holdfast_imagefs_used_bytes', 'holdfast_imagefs_capacity_bytes', 'holdfast_gc_high_threshold_ratio']));
    // The lab node's containerd root is on this machine's file system: the same capacity both ways.
    const fs = await import('node:fs/promises').then((m) => m.statfs(n.hostImagesDir));
    expect(viaSsh.get('holdfast_imagefs_capacity_bytes{node="mx"}')).toBe(fs.blocks * fs.bsize);
    expect(viaSsh.get('holdfast_imagefs_used_bytes{node="mx"}')).toBeGreaterThan(0);
    expect(viaSsh.get('holdfast_imagefs_used_bytes{node="mx"}')).toBeLessThanOrEqual(fs.blocks * fs.bsize);
    expect(viaSsh.get('holdfast_gc_high_threshold_ratio{node="mx"}')).toBe(0.85); // kubelet's default, as `metrics --local` reads it
  });

  it('`inspect --openmetrics` over several nodes: imagefs and GC threshold for each node reached, only success 0 for one that is not', async () => {
    // A second name for the same node (its own entry, the same host) and one whose port nothing answers on.
    const other = mkdtempSync(path.join(os.tmpdir(), 'hf-metrics-home-'));
    await addLabNode(lab, n, other, { name: 'mx' });
    await addLabNode(lab, n, other, { name: 'my' });
    const add = await runCli(['node', 'add', 'gone', '--host', '127.0.0.1', '--port', '1', '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--no-check'], { HOLDFAST_HOME: other }, 60_000);
    expect(add.code, add.stderr).toBe(0);
    const file = path.join(work, 'three.prom');
    const logins = async (): Promise<number> => ((await n.sshdLog()).match(/Accepted publickey/g) ?? []).length;
    const before = await logins();
    const r = await runCli(['inspect', '--all', '--openmetrics', file, '--timeout', '20'], { HOLDFAST_HOME: other }, 180_000);
    expect(r.code).toBe(1); // gone is unreachable; the file is still written
    // One SSH connection per node reached: the disk picture is measured on the inspection's own
    // (a second connection per node held 2,000 descriptors open at 500 nodes).
    expect(await logins()).toBe(before + 2);
    const text = readFileSync(file, 'utf8');
    promtoolCheck(text);
    const s = samples(text);
    for (const node of ['mx', 'my']) {
      expect(s.get(`holdfast_check_success{node="${node}"}`), node).toBe(1);
      expect(s.get(`holdfast_imagefs_capacity_bytes{node="${node}"}`), node).toBeGreaterThan(0);
      expect(s.get(`holdfast_imagefs_used_bytes{node="${node}"}`), node).toBeGreaterThan(0);
      expect(s.get(`holdfast_gc_high_threshold_ratio{node="${node}"}`), node).toBe(0.85);
    }
    expect([...s.keys()].filter((k) => k.includes('node="gone"')).sort()).toEqual([
      'holdfast_check_success{node="gone",kind="unreachable"}',
      'holdfast_check_timestamp_seconds{node="gone"}',
    ]);
  });

  it('the npm package runs it too: `npm pack` unpacked on its own, no node_modules beside it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-metrics-pack-'));
    // --ignore-scripts: the package of the CLI built for this run (prepack would rebuild the app too).
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    execFileSync('tar', ['xzf', tgz], { cwd: dir });
    const bin = path.join(dir, 'package', 'bin', 'holdfast.mjs');
    const out = execFileSync(process.execPath, [bin, ...local()], { cwd: dir, env: { ...process.env, HOLDFAST_HOME: home, HOLDFAST_CLI: '' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    promtoolCheck(out);
    const fromPackage = samples(out);
    const fromCheckout = samples(await metrics());
    // The same series and values (the clock and the bytes the host's disk holds move between runs).
    const moving = new Set(['holdfast_check_timestamp_seconds', 'holdfast_imagefs_used_bytes']);
    expect([...fromPackage.keys()].sort()).toEqual([...fromCheckout.keys()].sort());
    for (const [k, v] of fromCheckout) if (!moving.has(k)) expect([k, fromPackage.get(k)]).toEqual([k, v]);
    expect(fromPackage.get('holdfast_check_success')).toBe(1);
    expect(fromPackage.get('holdfast_images{state="k3s"}')).toBeGreaterThan(0);
    rmSync(dir, { recursive: true, force: true });
  }, 240_000);

  it('`inspect --local` reads the same references, pins and archives as `inspect` over SSH', async () => {
    const overSsh = await runCli(['inspect', 'mx', '--json'], { HOLDFAST_HOME: home }, 120_000);
    const here = await runCli(['inspect', '--local', '--name', 'mx', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--json'], { HOLDFAST_HOME: home }, 120_000);
    expect([overSsh.code, here.code], here.stderr).toEqual([0, 0]);
    const view = (out: string) => {
      const r = (JSON.parse(out) as FleetReport).nodes[0]!;
      return {
        node: r.node,
        reachable: r.reachable,
        containerd: r.versions?.containerdVersion,
        refs: (r.images ?? []).map((i) => `${i.name} ${i.imageId} ${i.pin}`).sort(),
        archives: (r.archives ?? []).map((a) => `${a.path} ${a.safeToRemove}`).sort(),
      };
    };
    expect(view(here.stdout)).toEqual(view(overSsh.stdout));
    expect(view(here.stdout).refs.length).toBeGreaterThanOrEqual(5);
  });

  it('`images --local` and `archives --local` list what the same commands list over SSH', async () => {
    const local = ['--local', '--name', 'mx', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--json'];
    for (const cmd of ['images', 'archives']) {
      const overSsh = await runCli([cmd, 'mx', '--json'], { HOLDFAST_HOME: home }, 120_000);
      const here = await runCli([cmd, ...local], { HOLDFAST_HOME: home }, 120_000);
      expect([overSsh.code, here.code], `${cmd}: ${here.stderr}`).toEqual([0, 0]);
      // images --json is a list; archives --json is { node, importCache, archives }.
      const list = (out: string) => {
        const v = JSON.parse(out) as { name?: string; path?: string; pin?: string }[] | { archives: { path: string }[] };
        return Array.isArray(v) ? v : v.archives;
      };
      const names = (out: string) => list(out).map((x: { name?: string; path?: string; pin?: string }) => `${x.name ?? x.path} ${x.pin ?? ''}`).sort();
      expect(names(here.stdout), cmd).toEqual(names(overSsh.stdout));
      expect(names(here.stdout).length, cmd).toBeGreaterThan(0);
    }
    // A node named beside --local is refused, naming the conflict.
    const both = await runCli(['images', 'mx', ...local], { HOLDFAST_HOME: home }, 60_000);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--local reads this machine: name no nodes with it');
  });

  it('a durable pin taken away with ctr is counted lost; the image stays durable while another reference holds it', async () => {
    await n.ctr(['images', 'label', A, `${CRI}=`]);
    let s = samples(await metrics());
    expect(s.get('holdfast_pins_lost')).toBe(1);
    // Its digest reference still carries the pin, and CRI (what kubelet asks) agrees.
    expect(await criPinned(n, A, true)).toBe(true);
    expect(s.get('holdfast_images{state="durable"}')).toBe(1);

    // Every reference of the image loses the label: kubelet sees it unpinned, each loss counted.
    const refsOfA = (await n.ctr(['images', 'ls', '-q'])).split('\n').filter((r) => r.startsWith('docker.io/library/metrics-a@') || r === idOfA);
    expect(refsOfA.length).toBeGreaterThan(0);
    for (const r of refsOfA) await n.ctr(['images', 'label', r, `${CRI}=`]);
    expect(await criPinned(n, A, false)).toBe(false);
    const text = await metrics();
    promtoolCheck(text);
    s = samples(text);
    expect(s.get('holdfast_pins_lost')).toBe(1 + refsOfA.length);
    expect(s.get('holdfast_images{state="durable"}')).toBe(0);
    expect(s.get('holdfast_images{state="unpinned"}')).toBe(2); // A and E
  });

  it('--textfile replaces the file whole (a temp file renamed over it), readable by node_exporter', async () => {
    const dir = path.join(work, 'textfile');
    const file = path.join(dir, 'holdfast.prom');
    // A dir node_exporter does not read is refused, not made.
    const typo = await runCli(local(['--textfile', file]), { HOLDFAST_HOME: home });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`no directory ${dir} for --textfile`);
    mkdirSync(dir);
    expect(await metrics(['--textfile', file])).toBe('');
    const first = statSync(file);
    expect(first.mode & 0o777).toBe(0o644);
    promtoolCheck(readFileSync(file, 'utf8'));
    expect(samples(readFileSync(file, 'utf8')).get('holdfast_check_success')).toBe(1);
    await metrics(['--textfile', file]);
    // rename(2) put a new inode in place; nothing half-written or left over beside it.
    expect(statSync(file).ino).not.toBe(first.ino);
    expect(readdirSync(dir)).toEqual(['holdfast.prom']);
  });

  it('no containerd socket: the file still says the check failed and why, and the command fails', async () => {
    const file = path.join(work, 'failed', 'holdfast.prom');
    mkdirSync(path.dirname(file));
    const r = await runCli(['metrics', '--local', '--socket', path.join(work, 'no.sock'), '--images-dir', n.hostImagesDir, '--textfile', file], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`No containerd socket at ${path.join(work, 'no.sock')}`);
    const text = readFileSync(file, 'utf8');
    promtoolCheck(text);
    const s = samples(text);
    expect(s.get('holdfast_check_success{kind="containerd_unavailable"}')).toBe(0);
    expect([...s.keys()].sort()).toEqual(['holdfast_check_success{kind="containerd_unavailable"}', 'holdfast_check_timestamp_seconds']);
  });

  it("deploy/: the systemd unit's command runs as written, and the example alert rules load in promtool", async () => {
    const unit = readFileSync(path.join(repoRoot, 'deploy', 'holdfast-metrics.service'), 'utf8');
    const exec = /^ExecStart=\S+ (.+)$/m.exec(unit)![1]!.split(' ');
    expect(exec.slice(0, 2)).toEqual(['metrics', '--local']);
    // The same flags, the textfile moved into the test's dir and the lab node's socket and images dir added.
    const file = path.join(work, 'unit', 'holdfast.prom');
    mkdirSync(path.dirname(file));
    const args = exec.map((a, i) => (exec[i - 1] === '--textfile' ? file : a));
    const r = await runCli([...args, '--name', 'mx', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(samples(readFileSync(file, 'utf8')).get('holdfast_check_success')).toBe(1);
    const rules = execFileSync('promtool', ['check', 'rules', path.join(repoRoot, 'deploy', 'alerts.yml')], { encoding: 'utf8' });
    expect(rules).toContain('SUCCESS: 11 rules found');
  });

  it('without --local, metrics says where it runs and what to use from a laptop', async () => {
    const r = await runCli(['metrics'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('metrics reads the node it runs on: add --local');
    expect(r.stderr).toContain('holdfast inspect --openmetrics FILE');
  });
});
