// Issue #50's "Done when" on a lab of three nodes: g1 runs guard as the built container image under
// podman (mounted as the DaemonSet mounts it), g2 and g3 run the systemd unit's ExecStart line as
// deploy/holdfast-guard.service writes it. On every node, against containerd's labels and CRI: a
// needed image imported by hand becomes durable within one run; the archive removed and k3s
// started again loses nothing; a pin removed behind its back is restored and reported; a named
// image the node lacks is reported in the textfile, never faked; an image outside the set is never
// touched. Then `holdfast inspect` over SSH shows all three guards with what they changed (the JSON
// the app's fleet view renders; the view itself: e2e/ui-guard.spec.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, listImages, startLab, type Lab, type LabNodeHandle } from '../../lab';
import type { GuardRunJson } from '../../src/cli/commands/guard';
import type { FleetReport } from '../../src/shared/fleet';
import { addLabNode, criPinsHonoured, nodeHoldfastHome, repoRoot, runCli, tempHome } from './support';
import { A, CRI, ctrImport, expectDurable, M, O, P, seedGuardSite, textfileSamples, writePinSet } from './guardSite';
import { buildGuardImage, guardRunArgs, podmanIn } from './guardPodman';
import { RealPrometheus } from './realPrometheus';

const N = 'docker.io/library/guard-needed:1'; // on each node's needed list; imported by hand later
const NAMES = ['g1', 'g2', 'g3'] as const;
const IN_PODMAN = 'g1';

interface Site {
  n: LabNodeHandle;
  home: string; // the node's /var/lib/holdfast
  textDir: string; // node_exporter's textfile dir
  instance: string; // that node_exporter's address, the `instance` of its series and alerts
  work: string;
  other: Record<string, string>; // O's labels once seeded
}

let lab: Lab;
let honoured: boolean;
let laptop: string;
const sites = new Map<string, Site>();
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-guard3-'));
const pinSet = path.join(work, 'pinset.yaml');
const podman = podmanIn(work);
const prom = new RealPrometheus(work);
const unit = readFileSync(path.join(repoRoot, 'deploy', 'holdfast-guard.service'), 'utf8');

/** The unit's guard command line, its pin set and textfile moved to the node's files here. */
function unitGuardArgs(s: Site): string[] {
  const line = [...unit.matchAll(/^ExecStart=(\S+ guard .+)$/gm)].map((m) => m[1]!);
  expect(line).toHaveLength(1);
  const args = line[0]!.split(' ');
  expect(args[0]).toBe('/usr/local/bin/holdfast');
  return args
    .slice(1)
    .map((a) => (a === '/etc/holdfast/pinset.yaml' ? pinSet : a.replace(/^\/var\/lib\/prometheus\/node-exporter\//, `${s.textDir}/`)));
}

/** One guard run on a node, as that node runs it; its JSON answer. */
async function guardOn(name: string): Promise<GuardRunJson> {
  const s = sites.get(name)!;
  const warning = honoured ? '' : expect.stringMatching(new RegExp(`^warning: kubelet on ${name} will not honour this pin`));
  if (name === IN_PODMAN) {
    const r = await podman(guardRunArgs({ node: s.n, pinSet, home: s.home, textDir: s.textDir }, ['--local', '--name', name, '--pin-set', '/etc/holdfast/pinset.yaml', '--textfile', '/textfile/holdfast-guard.prom', '--json']));
    expect(r.stderr).toEqual(warning);
    return JSON.parse(r.stdout) as GuardRunJson;
  }
  // The unit's environment: HOLDFAST_HOME=/var/lib/holdfast, the node's own (nodeHoldfastHome).
  expect(unit).toMatch(/^Environment=HOLDFAST_HOME=\/var\/lib\/holdfast$/m);
  const args = [...unitGuardArgs(s), '--name', name, '--socket', s.n.hostSocket, '--images-dir', s.n.hostImagesDir, '--json'];
  const r = await runCli(args, { HOLDFAST_HOME: s.home }, 180_000);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toEqual(warning);
  return JSON.parse(r.stdout) as GuardRunJson;
}

/** A guard run on every node at once (it must be safe to): name → its answer. */
async function guardEverywhere(): Promise<Map<string, GuardRunJson>> {
  const runs = await Promise.all(NAMES.map(async (name) => [name, await guardOn(name)] as const));
  return new Map(runs);
}

const samples = (name: string): Map<string, number> => textfileSamples(path.join(sites.get(name)!.textDir, 'holdfast-guard.prom'));

beforeAll(async () => {
  const build = buildGuardImage(work, path.join(work, 'image'));
  [lab] = await Promise.all([startLab({ nodes: [...NAMES] }), build]);
  await podman(['load', '--quiet', '--input', await build]);
  honoured = await criPinsHonoured(lab.node('g1'));
  laptop = tempHome();
  writePinSet(pinSet, true);
  for (const name of NAMES) {
    const n = lab.node(name);
    const s: Site = { n, home: await nodeHoldfastHome(n), textDir: path.join(work, `text-${name}`), instance: '', work: path.join(work, name), other: {} };
    mkdirSync(s.textDir);
    s.instance = await prom.nodeExporter(s.textDir);
    mkdirSync(s.work);
    mkdirSync(path.join(s.home, 'needed-images'), { recursive: true });
    writeFileSync(path.join(s.home, 'needed-images', `${name}.txt`), `# what the site runs\n${N}\n`);
    await seedGuardSite(n, s.work);
    s.other = await labelsOf(n, O);
    await addLabNode(lab, n, laptop, { name });
    sites.set(name, s);
  }
  await prom.prometheus([...sites.values()].map((s) => s.instance));
}, 300_000);

afterAll(async () => {
  await prom.stop();
  await lab?.stop();
  await podman(['rmi', '--all', '--force']).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

describe('guard on three nodes: one in the built container under podman, two as the systemd unit', () => {
  it('the first run makes what the set names durable on every node and reports what is missing', async () => {
    const runs = await guardEverywhere();
    for (const name of NAMES) {
      const n = sites.get(name)!.n;
      expect(runs.get(name)!.fixed.map((f) => f.ref), name).toEqual(expect.arrayContaining([A, P]));
      expect(runs.get(name)!.missing, name).toEqual(expect.arrayContaining([M, N]));
      await expectDurable(n, A, honoured);
      await expectDurable(n, P, honoured);
      expect(samples(name).get('holdfast_guard_missing_images'), name).toBe(2);
    }
  });

  it('a needed image imported by hand becomes durable within one run, on every node', async () => {
    for (const name of NAMES) await ctrImport(sites.get(name)!.n, sites.get(name)!.work, N);
    const runs = await guardEverywhere();
    for (const name of NAMES) {
      expect(runs.get(name)!.fixed.map((f) => f.ref), name).toContain(N);
      expect(runs.get(name)!.missing, name).toEqual([M]);
      await expectDurable(sites.get(name)!.n, N, honoured);
    }
  });

  it('the archive removed and k3s started again: nothing is lost, the next run fixes nothing', async () => {
    for (const name of NAMES) {
      const n = sites.get(name)!.n;
      rmSync(path.join(n.hostImagesDir, 'a.tar'));
      await emulateK3sStart(n);
      for (const ref of [A, P, N]) await expectDurable(n, ref, honoured);
    }
    const runs = await guardEverywhere();
    for (const name of NAMES) {
      expect(runs.get(name)!.fixed, name).toEqual([]);
      expect(runs.get(name)!.durable, name).toEqual(expect.arrayContaining([A, P, N]));
      expect(samples(name).get('holdfast_guard_fixed{kind="pinned"}'), name).toBe(0);
    }
  });

  it('a pin removed behind its back is restored and reported, in the answer, the textfile and the audit log', async () => {
    for (const name of NAMES) {
      const n = sites.get(name)!.n;
      await n.ctr(['images', 'label', A, `${CRI}=`]);
      expect(await labelsOf(n, A)).not.toHaveProperty(CRI);
    }
    const runs = await guardEverywhere();
    for (const name of NAMES) {
      expect(runs.get(name)!.fixed, name).toContainEqual({ ref: A, restored: 'label-removed' });
      await expectDurable(sites.get(name)!.n, A, honoured);
      expect(samples(name).get('holdfast_guard_fixed{kind="restored"}'), name).toBeGreaterThanOrEqual(1);
      const audit = readFileSync(path.join(sites.get(name)!.home, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { action: string; node: string; changes?: { ref: string }[] });
      expect(audit.filter((e) => e.action === 'pin' && e.node === name && e.changes?.some((c) => c.ref === A)), name).toHaveLength(2);
    }
  });

  it('the image the set names but no node has is reported in the textfile, never faked', async () => {
    for (const name of NAMES) {
      expect((await listImages(sites.get(name)!.n)).map((i) => i.name), name).not.toContain(M);
      const s = samples(name);
      expect(s.get('holdfast_guard_last_run_success'), name).toBe(1);
      expect(s.get('holdfast_guard_missing_images'), name).toBe(1);
      expect(s.get(`holdfast_guard_missing_image{ref="${M}"}`), name).toBe(1);
    }
    // The site's Prometheus, scraping each node's node_exporter, fires deploy/alerts.yml's alert for each.
    const instances = [...sites.values()].map((s) => s.instance).sort();
    const firing = await prom.until('HoldfastPinSetNotSatisfiable firing at 1 on every node', async () => {
      const a = (await prom.alerts()).filter((x) => x.labels.alertname === 'HoldfastPinSetNotSatisfiable' && x.state === 'firing' && Number(x.value) === 1);
      return a.length === NAMES.length ? a : undefined;
    });
    expect(firing.map((a) => a.labels.instance).sort()).toEqual(instances);
    for (const a of firing) {
      expect(a.labels).toEqual({ alertname: 'HoldfastPinSetNotSatisfiable', instance: a.labels.instance, job: 'node', severity: 'critical' });
      expect(a.annotations.summary).toBe(`1 image(s) of the pin set missing on ${a.labels.instance}`);
    }
    const named = await prom.query(`holdfast_guard_missing_image{ref="${M}"}`);
    expect(named.map((v) => [v.metric.instance, v.value[1]]).sort()).toEqual(instances.map((i) => [i, '1']));
    expect((await prom.alerts()).map((a) => a.labels.alertname)).not.toContain('HoldfastGuardFailing');
  });

  it('the image outside the set was never touched on any node', async () => {
    for (const name of NAMES) {
      const n = sites.get(name)!.n;
      expect(await labelsOf(n, O), name).toEqual(sites.get(name)!.other);
      expect(await criPinned(n, O), name).toBe(false);
    }
  });

  it('holdfast inspect over SSH shows all three guards running, the pin set, and what each changed and could not fix', async () => {
    const r = await runCli(['inspect', ...NAMES, '--json'], { HOLDFAST_HOME: laptop });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as FleetReport;
    expect(report.nodes.map((node) => node.node).sort()).toEqual([...NAMES]);
    for (const node of report.nodes) {
      expect(node.guard, node.node).toMatchObject({ status: 'running', pinSet: { name: 'site' }, missing: [M], missingCount: 1, fixed: [{ ref: A, restored: 'label-removed' }] });
      expect(node.guard!.words, node.node).toMatch(/^guard keeps pin set site, last ran .+ UTC: made \d+ references? durable \(1 restored\); could not fix 1 missing image$/);
    }
  });
});
