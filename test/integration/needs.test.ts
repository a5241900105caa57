// Which images a site needs, end to end (issue #32): need × protection over lab nodes whose
// stand-in k3s answers kubectl from a workload fixture (a server) or fails as an agent does.
// Every verdict is checked against what really happened on the node: the labels containerd
// stores, what CRI (kubelet's view) reports as pinned, what prune leaves, what a k3s start does.
//
// The rule under test (shared/needs.ts): an image is at risk when the site needs it and it is
// missing, unpinned now, or unpinned after the next k3s start. On containerd 1.6 CRI pins nothing,
// so there no needed image is ever protected: the same scenario ends with every needed image still
// at risk, whatever Holdfast labels.
import { SEED_ARCHIVE, SEED_REPORT_IMAGE, SEED_SAMPLE_IMAGE, writeSeedArchive } from '../../lab/seed.ts';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { criImageStatus, criPinned } from '../../lab/cri';
import { workloadList } from '../../lab/workloads';
import type { DiskPicture } from '../../src/shared/diskPicture';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import type { FleetNodeResult, FleetReport } from '../../src/shared/fleet';
import type { AtRiskImage } from '../../src/shared/needs';
import type { PrunePlan, PruneResult } from '../../src/shared/prunePlan';
import { isImageIdRef } from '../../src/shared/protection';
import { proseText } from '../../src/shared/remedy';
import { addLabNode, criPinsHonoured, runCli, tempHome } from './support';

const K3S_RELEASE = 'v1.33.7+k3s1';
const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

// The seeded lab's images (lab/cli.ts --seed): a Deployment's image every node has from its
// archive, a CronJob's image no node has.
const SAMPLE = SEED_SAMPLE_IMAGE;
const REPORT = SEED_REPORT_IMAGE;
/** A Deployment scaled to 0 uses it: present on n1, never pinned, brought by no archive. */
const WEB = 'docker.io/library/holdfast-web:1.0';
/** On n1, needed by nothing: what prune may take. */
const SCRATCH = 'docker.io/library/holdfast-scratch:0.1';
/** On n3, needed by nothing and not pinned. */
const TOOLS = 'docker.io/library/holdfast-tools:1.0';

type Outcome<T> = { node: string; ok: true } & T;

/**
 * Puts an image on a node as an operator's `ctr images import` does (not through k3s: no pin
 * label, no digest reference, no archive left in the images dir). ctr 2.x imports through the
 * transfer service unless told --local, which k3s never uses (lab/k3s.ts importArchive does the same).
 */
async function ctrImport(lab: Lab, node: LabNodeHandle, name: string): Promise<void> {
  const file = path.join(lab.dir, `ctr-import-${node.name}-${name.replace(/[^a-z0-9]+/gi, '_')}.tar`);
  await writeImageArchive(file, { format: 'docker', images: [{ name }] });
  await node.ctr(['images', 'import', ...(node.containerdLine === '2' ? ['--local'] : []), file]);
  rmSync(file, { force: true });
  expect((await listImages(node)).some((i) => i.name === name)).toBe(true);
  // CRI learns of the image from containerd's events, a moment later (bounded poll)
  for (let i = 0; i < 100 && !(await criImageStatus(node, name)); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await criImageStatus(node, name)).not.toBeNull();
  expect(await labelsOf(node, name)).not.toHaveProperty(K3S);
}

/** The CLI against one HOLDFAST_HOME. */
function cliFor(home: string) {
  const run = async <T = unknown>(args: string[], expectCode = 0, env: NodeJS.ProcessEnv = {}): Promise<T> => {
    const r = await runCli(args, { HOLDFAST_HOME: home, ...env });
    if (r.code === null) {
      // runCli's hang guard killed it: say so, and whether it had printed its answer already
      throw new Error(`holdfast ${args.join(' ')} never exited (killed after ${Math.round(r.ms / 1000)} s) although it printed ${r.stdout.length} bytes of output\n${r.stderr}`);
    }
    if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
    return (args.includes('--json') ? JSON.parse(r.stdout) : r) as T;
  };
  return {
    run,
    images: (node: string) => run<ImageRef[]>(['images', node, '--json']),
    inspect: (nodes: string[] = []) => run<FleetReport>(['inspect', ...nodes, '--json']),
    addNode: (lab: Lab, node: LabNodeHandle, extra: string[] = []) => addLabNode(lab, node, home, { extra }),
  };
}

/** The references of one image (by a tag of it), CRI's own sha256:<id> record included. */
function imageRefs(refs: ImageRef[], tag: string): ImageRef[] {
  const ref = refs.find((r) => r.name === tag);
  expect(ref, `${tag} is on the node`).toBeDefined();
  const out = refs.filter((r) => (r.imageId ?? r.digest) === (ref!.imageId ?? ref!.digest));
  // a tag, k3s's name@sha256 reference when it imported the image, CRI's record
  expect(out.length).toBeGreaterThanOrEqual(2);
  return out;
}

/** Every reference of the image carries the same verdict; returns it. */
function needOf(refs: ImageRef[], tag: string): NonNullable<ImageRef['need']> {
  const all = imageRefs(refs, tag);
  const need = all[0]!.need;
  expect(need, `${tag} carries a need verdict`).toBeDefined();
  for (const r of all) expect({ ref: r.name, need: r.need }).toEqual({ ref: r.name, need });
  return need!;
}

const nodeOf = (report: FleetReport, node: string): FleetNodeResult => {
  const n = report.nodes.find((x) => x.node === node);
  expect(n, `${node} is in the report`).toBeDefined();
  expect(n!.reachable).toBe(true);
  return n!;
};

/** summary.atRisk's list of needed images at risk on a node (none when the node is not at risk). */
const atRiskOn = (report: FleetReport, node: string): AtRiskImage[] => report.summary.atRisk.find((r) => r.node === node)?.atRisk ?? [];

const deployment = (name: string) => expect.objectContaining({ kind: 'Deployment', namespace: 'default', name });
const cronJob = (name: string) => expect.objectContaining({ kind: 'CronJob', namespace: 'default', name });

// -----------------------------------------------------------------------------------------------

describe('a site whose server node tells what it needs (n1 server, n2 agent, n3 agent, n4 not a Node of the cluster)', () => {
  let lab: Lab;
  let home: string;
  let cli: ReturnType<typeof cliFor>;
  let n1: LabNodeHandle;
  let honoured: boolean;

  beforeAll(async () => {
    lab = await startLab({ nodes: ['n1', 'n2', 'n3', 'n4'] });
    home = tempHome();
    cli = cliFor(home);
    n1 = lab.node('n1');
    honoured = await criPinsHonoured(n1);
    // The seed archive on every node, imported and pinned by a k3s start (lab/cli.ts --seed).
    for (const node of lab.nodes) {
      await writeSeedArchive(node.hostImagesDir);
      const started = await emulateK3sStart(node);
      expect(started.failed).toEqual([]);
      expect(await labelsOf(node, SAMPLE)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    }
    await ctrImport(lab, n1, WEB);
    await ctrImport(lab, n1, SCRATCH);
    await ctrImport(lab, lab.node('n3'), TOOLS);
    // n1 is the server: its kubectl lists n1–n3 (not n4: neither its name nor its host is among
    // the Nodes), a Deployment running on n1, one scaled to 0 and a CronJob between runs. The
    // running container's imageID is n1's real digest.
    const digests = Object.fromEntries((await listImages(n1)).map((i) => [i.name, i.digest]));
    const fixture = workloadList({
      nodes: [
        { name: 'n1', role: 'server', addresses: ['10.0.0.1'] },
        { name: 'n2', role: 'agent', addresses: ['10.0.0.2'] },
        { name: 'n3', role: 'agent', addresses: ['10.0.0.3'] },
      ],
      deployments: [
        { namespace: 'default', name: 'sample', image: SAMPLE, replicas: 1, node: 'n1' },
        { namespace: 'default', name: 'web', image: WEB, replicas: 0 },
      ],
      cronJobs: [{ namespace: 'default', name: 'nightly-report', image: REPORT, schedule: '0 2 * * *' }],
      digests,
    });
    await n1.installDistroBinary('k3s', K3S_RELEASE, { workloads: fixture });
    for (const name of ['n2', 'n3', 'n4']) await lab.node(name).installDistroBinary('k3s', K3S_RELEASE);
    for (const node of lab.nodes) await cli.addNode(lab, node, ['--group', 'site-a']);
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it("before the loss: the seed's k3s pin keeps the Deployment's image (kubelet ignores it on 1.6)", async () => {
    const refs = await cli.images('n1');
    const sample = needOf(refs, SAMPLE);
    expect(sample).toMatchObject({ needed: true, basis: 'workload', verdict: honoured ? 'protected' : 'unprotected', atRisk: !honoured });
    expect(sample.workloads).toContainEqual(deployment('sample'));
    // needed by a Deployment scaled to 0: unpinned from the start, whatever the seed did
    const web = needOf(refs, WEB);
    expect(web).toMatchObject({ needed: true, basis: 'workload', verdict: 'unprotected', atRisk: true });
    expect(web.workloads).toContainEqual({ kind: 'Deployment', namespace: 'default', name: 'web', why: 'scaled to 0' });
    expect(needOf(refs, SCRATCH)).toMatchObject({ needed: false, basis: null, verdict: 'unneeded', atRisk: false, because: 'nothing at the site needs it' });
  });

  it("the seed's loss (k3s #11363): the archive is gone, k3s restarts, and the Deployment's image is at risk", async () => {
    rmSync(path.join(n1.hostImagesDir, SEED_ARCHIVE));
    const started = await emulateK3sStart(n1);
    expect(started.cleared).toContain(SAMPLE);
    expect(started.imported).toEqual([]);
    // what really happened: no pin label left, and CRI (kubelet's view) does not see it pinned
    const labels = await labelsOf(n1, SAMPLE);
    expect(labels).not.toHaveProperty(K3S);
    expect(labels).not.toHaveProperty(CRI);
    expect(await criPinned(n1, SAMPLE, false)).toBe(false);

    const refs = await cli.images('n1');
    const sample = needOf(refs, SAMPLE);
    expect(sample).toMatchObject({ verdict: 'unprotected', atRisk: true, needed: true, basis: 'workload' });
    expect(sample.workloads).toContainEqual(deployment('sample'));
    expect(sample.because).toMatch(/^needed by Deployment default\/sample.*; not pinned: kubelet may delete it$/);
    // k3s's digest reference stays, and shares the image's verdict
    expect(imageRefs(refs, SAMPLE).some((r) => r.name.startsWith('docker.io/library/holdfast-sample@sha256:'))).toBe(true);
    expect(needOf(refs, WEB)).toMatchObject({ verdict: 'unprotected', atRisk: true });
    expect(needOf(refs, SCRATCH)).toMatchObject({ verdict: 'unneeded', atRisk: false });
    // the CronJob's image is on no node: not a reference at all, so only the report can say it
    expect(refs.some((r) => r.name.startsWith('docker.io/library/holdfast-report'))).toBe(false);
  });

  it('inspect --json: summary.atRisk lists every needed image at risk per node, with the workloads (agents get the needs from n1)', async () => {
    const report = await cli.inspect();
    expect(report.nodes.map((n) => n.node).sort()).toEqual(['n1', 'n2', 'n3', 'n4']);

    // n1, the server
    const r1 = nodeOf(report, 'n1');
    expect(r1.needs).toMatchObject({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on n1' }] });
    expect(r1.needs!.missing).toEqual([expect.objectContaining({ ref: REPORT, source: 'cluster', workloads: [cronJob('nightly-report')] })]);
    const at1 = atRiskOn(report, 'n1');
    const sample1 = at1.find((a) => a.refs.includes(SAMPLE));
    expect(sample1).toMatchObject({ verdict: 'unprotected' });
    expect(sample1!.workloads).toContainEqual(deployment('sample'));
    // every object that names the image is a reason: the Deployment and its current ReplicaSet
    const web1 = at1.find((a) => a.refs.includes(WEB));
    expect(web1).toMatchObject({ verdict: 'unprotected' });
    expect(web1!.workloads).toContainEqual({ kind: 'Deployment', namespace: 'default', name: 'web', why: 'scaled to 0' });
    expect(at1.find((a) => a.refs.includes(REPORT))).toMatchObject({ refs: [REPORT], verdict: 'missing', workloads: [cronJob('nightly-report')] });
    expect(at1.some((a) => a.refs.includes(SCRATCH))).toBe(false);
    expect(report.summary.atRisk.find((r) => r.node === 'n1')!.reasons.join('\n')).toMatch(/needed images? at risk/);

    // n2, an agent: no kubeconfig of its own; its needs come from n1, whose Node list has it
    const r2 = nodeOf(report, 'n2');
    expect(r2.needs).toMatchObject({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on n1' }] });
    expect(r2.needs!.noSource).toBeUndefined();
    const at2 = atRiskOn(report, 'n2');
    expect(at2.find((a) => a.refs.includes(REPORT))).toMatchObject({ verdict: 'missing', workloads: [cronJob('nightly-report')] });
    // the scaled-to-0 Deployment may be scheduled on any Node: its image is missing here
    expect(at2.find((a) => a.refs.includes(WEB))).toMatchObject({ verdict: 'missing' });
    // the seed archive is still in n2's images dir: k3s re-pins the image at every start
    const sample2 = r2.images!.find((r) => r.name === SAMPLE)!;
    expect(sample2.need).toMatchObject({ basis: 'workload', verdict: honoured ? 'protected' : 'unprotected', atRisk: !honoured });
    expect(at2.some((a) => a.refs.includes(SAMPLE))).toBe(!honoured);

    // n3, an agent with an image nothing needs, unpinned: not at risk
    const r3 = nodeOf(report, 'n3');
    expect(r3.needs).toMatchObject({ basis: 'known', sources: [{ kind: 'cluster', label: 'kubectl on n1' }] });
    expect(needOf(r3.images!, TOOLS)).toMatchObject({ verdict: 'unneeded', atRisk: false, needed: false, basis: null, because: 'nothing at the site needs it' });
    const at3 = atRiskOn(report, 'n3');
    expect(at3.some((a) => a.refs.includes(TOOLS))).toBe(false);
    expect(at3.find((a) => a.refs.includes(REPORT))).toMatchObject({ verdict: 'missing' });
  });

  it("images n2 (an agent): the needs of n1's cluster, as text and JSON", async () => {
    const refs = await cli.images('n2');
    expect(needOf(refs, SAMPLE)).toMatchObject({ needed: true, basis: 'workload', verdict: honoured ? 'protected' : 'unprotected' });
    const r = await cli.run<{ stdout: string }>(['images', 'n2']);
    expect(r.stdout).toContain('Site needs from: kubectl on n1');
    expect(r.stdout).toContain(`  ${REPORT}: needed by CronJob default/nightly-report (CronJob between runs); not on this node`);
    const webLine = r.stdout.split('\n').find((l) => l.startsWith(`  ${WEB}: `));
    expect(webLine).toMatch(/^ {2}\S+: needed by Deployment default\/web \(scaled to 0\).*; not on this node/);
  });

  it("a node that is not in the cluster's Node list has no source of needs (n1 answers, but not for n4)", async () => {
    const report = await cli.inspect(['n4']);
    const r4 = nodeOf(report, 'n4');
    // n1 answered: the reason says that no Node matched, not that no server answered (#49 item 7)
    expect(r4.needs).toMatchObject({
      basis: 'provenance',
      sources: [],
      missing: [],
      noSource: `kubectl on n1 answered, but no Node of its cluster has this node's name (n4) or address (${lab.node('n4').host})`,
      unmatched: { server: 'n1', nodes: ['n1', 'n2', 'n3'], total: 3 },
    });
    // nothing the cluster needs is counted here: the CronJob's image is not missing on n4
    expect(atRiskOn(report, 'n4').some((a) => a.refs.includes(REPORT) || a.refs.includes(WEB))).toBe(false);
    // the seed image counts as needed by provenance: its archive in the images dir brings it
    const sample = r4.images!.find((r) => r.name === SAMPLE)!;
    expect(sample.need).toMatchObject({ needed: true, basis: 'provenance', workloads: [], verdict: honoured ? 'protected' : 'unprotected' });
    expect(sample.need!.because).toMatch(/^holdfast-sample\.tar\.gz in the images dir brings it; /);
  });

  it("prune keeps the needed images, dry run and real run, and removes what nothing needs", async () => {
    const [dry] = await cli.run<Outcome<{ plan: PrunePlan }>[]>(['prune', 'n1', '--dry-run', '--json']);
    expect(dry).toMatchObject({ node: 'n1', ok: true });
    const keptSample = dry!.plan.kept.find((k) => k.refs.includes(SAMPLE));
    expect(keptSample).toMatchObject({ reason: 'needed' });
    expect(keptSample!.text).toContain('Deployment default/sample');
    expect(keptSample!.text).toContain('holdfast pin n1 --needed');
    expect(dry!.plan.kept.find((k) => k.refs.includes(WEB))).toMatchObject({ reason: 'needed' });
    expect(dry!.plan.remove.map((r) => r.refs).filter((refs) => refs.includes(SAMPLE) || refs.includes(WEB))).toEqual([]);
    expect(dry!.plan.remove.some((r) => r.refs.includes(SCRATCH))).toBe(true);
    expect((await listImages(n1)).some((i) => i.name === SCRATCH)).toBe(true); // a dry run

    // `holdfast prune NODE` (no --dry-run) removes: naming the node is the confirmation
    const [real] = await cli.run<Outcome<{ result: PruneResult }>[]>(['prune', 'n1', '--json']);
    expect(real).toMatchObject({ node: 'n1', ok: true, result: { failed: [] } });
    expect(real!.result.removed.some((r) => r.refs.includes(SCRATCH))).toBe(true);
    expect(real!.result.removed.some((r) => r.refs.includes(SAMPLE) || r.refs.includes(WEB))).toBe(false);
    const names = new Set((await listImages(n1)).map((i) => i.name));
    expect(names.has(SAMPLE)).toBe(true);
    expect(names.has(WEB)).toBe(true);
    expect(names.has(SCRATCH)).toBe(false);
  });

  it("disk's forecast flags a needed image kubelet would delete as a site need", async () => {
    const p = await cli.run<DiskPicture>(['disk', 'n1', '--json']);
    const sample = p.images!.find((i) => i.refs.includes(SAMPLE));
    expect(sample!.need).toMatchObject({ workloads: expect.arrayContaining(['Deployment default/sample']) });
    expect(p.forecast).not.toBeNull();
    const step = p.forecast!.steps.find((s) => s.refs.includes(SAMPLE));
    expect(step, 'the unpinned needed image is among what kubelet may delete').toBeDefined();
    expect(step!.needed.map((f) => f.kind)).toContain('site-need');
  });

  it('images n1 as text: the SITE NEED column, the AT RISK footer and the one command that fixes it', async () => {
    // One SSH login serves the inventory (containerd through the tunnel) and the workloads (kubectl
    // over an exec), read together (issue #46: no second connection; speed is bench:list's).
    const logins = async (): Promise<number> => ((await n1.sshdLog()).match(/Accepted publickey/g) ?? []).length;
    const before = await logins();
    const r = await cli.run<{ stdout: string; stderr: string }>(['images', 'n1'], 0, { COLUMNS: '100' });
    expect(await logins()).toBe(before + 1);
    expect(r.stdout).toContain('SITE NEED');
    expect(r.stdout).toContain('Site needs from: kubectl on n1');
    expect(r.stdout).toMatch(/^docker\.io\/library\/holdfast-sample:1\.0 .* AT RISK /m);
    expect(r.stdout).toMatch(/^\d+ needed images AT RISK \(a pod that needs them may fail to start\):$/m);
    expect(r.stdout).toContain(`  ${REPORT}: needed by CronJob default/nightly-report`);
    expect(r.stdout).toContain('holdfast pin n1 --needed');
    expect(r.stdout).toContain('Bring a missing image back with: holdfast import n1 ARCHIVE');
  });

  it('pin n1 --needed makes every needed image present durable, and that holds across the next k3s start', async () => {
    const before = await cli.images('n1');
    const neededRefs = before.filter((r) => r.need?.needed).map((r) => r.name).sort();
    expect(neededRefs).toEqual([...imageRefs(before, SAMPLE), ...imageRefs(before, WEB)].map((r) => r.name).sort());

    const plan = await cli.run<PinPlan>(['pin', 'n1', '--needed', '--json']);
    expect(plan.changes.map((c) => c.ref).sort()).toEqual(neededRefs);
    expect(plan.unchanged).toContainEqual({ ref: REPORT, reason: expect.stringMatching(/^needed but not on the node.*; import it first$/) });

    const checkDurable = async () => {
      for (const ref of neededRefs) {
        const labels = await labelsOf(n1, ref);
        expect({ ref, cri: labels[CRI], k3s: labels[K3S] }).toEqual({ ref, cri: 'pinned', k3s: undefined });
      }
      // what kubelet's GC reads: pinned where CRI pins at all (never on 1.6)
      for (const tag of [SAMPLE, WEB]) expect({ tag, criPinned: await criPinned(n1, tag, honoured) }).toEqual({ tag, criPinned: honoured });
    };
    await checkDurable();

    const started = await emulateK3sStart(n1);
    expect(started.cleared).toEqual([]);
    await checkDurable();

    const after = await cli.images('n1');
    for (const tag of [SAMPLE, WEB]) {
      expect({ tag, need: needOf(after, tag) }).toMatchObject({ tag, need: { needed: true, basis: 'workload', verdict: honoured ? 'protected' : 'unprotected', atRisk: !honoured } });
    }
    // the missing CronJob image stays missing: nothing to pin, the plan says why
    const again = await cli.run<PinPlan>(['pin', 'n1', '--needed', '--dry-run', '--json']);
    expect(again.changes).toEqual([]);
    expect(again.unchanged).toContainEqual({ ref: REPORT, reason: expect.stringMatching(/^needed but not on the node/) });
    const report = await cli.inspect(['n1']);
    const at1 = atRiskOn(report, 'n1');
    expect(at1.find((a) => a.refs.includes(REPORT))).toMatchObject({ verdict: 'missing' });
    expect(at1.some((a) => a.refs.includes(SAMPLE))).toBe(!honoured);
    expect(at1.some((a) => a.refs.includes(WEB))).toBe(!honoured);
  });

  it('after pin --needed no view tells the technician to pin again, nor calls a pinned image "not pinned"', async () => {
    // Where CRI pins (1.7.3+), nothing needed and present is at risk any more. On 1.6 the images
    // stay at risk (true to the rule: kubelet ignores every pin there), but `pin --needed` has
    // nothing left to change, so advising it again sends the technician round in a loop.
    const refs = await cli.images('n1');
    const text = (await cli.run<{ stdout: string }>(['images', 'n1'])).stdout;
    const [dry] = await cli.run<Outcome<{ plan: PrunePlan }>[]>(['prune', 'n1', '--dry-run', '--json']);
    const keptSample = dry!.plan.kept.find((k) => k.refs.includes(SAMPLE))!;
    expect(keptSample.reason).toBe('needed');
    expect({
      imagesAdvisesPin: text.includes('holdfast pin n1 --needed'),
      pruneAdvisesPin: proseText(keptSample.text).includes('holdfast pin n1 --needed'),
      durableCalledNotPinned: refs.filter((r) => r.pin === 'durable' && /not pinned/.test(r.need?.because ?? '')).map((r) => r.name),
    }).toEqual({ imagesAdvisesPin: false, pruneAdvisesPin: false, durableCalledNotPinned: [] });
  });
});

// -----------------------------------------------------------------------------------------------

describe('nodes without a cluster to ask: an agent alone (provenance), an operator’s list, the sandbox image', () => {
  let lab: Lab;
  let home: string;
  let cli: ReturnType<typeof cliFor>;
  let solo: LabNodeHandle;
  let l1: LabNodeHandle;
  let honoured: boolean;
  const EDGE = 'docker.io/library/holdfast-edge:1.0';
  const PLAIN = 'docker.io/library/holdfast-plain:1.0';
  const LISTED = 'docker.io/library/holdfast-listed:1.0';
  const ABSENT = 'docker.io/library/holdfast-absent:2.0';
  const OTHER = 'docker.io/library/holdfast-other:1.0';
  const PAUSE = 'docker.io/rancher/mirrored-pause:3.6';

  beforeAll(async () => {
    // The only k3s here is an agent (solo); l1 runs no k3s at all.
    lab = await startLab({ nodes: ['solo', 'l1'] });
    home = tempHome();
    cli = cliFor(home);
    solo = lab.node('solo');
    l1 = lab.node('l1');
    honoured = await criPinsHonoured(solo);
    await writeImageArchive(path.join(solo.hostImagesDir, 'edge.tar.zst'), { format: 'oci', compression: 'zstd', images: [{ name: EDGE }] });
    expect((await emulateK3sStart(solo)).failed).toEqual([]);
    await ctrImport(lab, solo, PLAIN);
    await solo.installDistroBinary('k3s', K3S_RELEASE);
    await ctrImport(lab, l1, LISTED);
    await ctrImport(lab, l1, OTHER);
    await cli.addNode(lab, solo);
    await cli.addNode(lab, l1, ['--group', 'site-a']);
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it("an agent with no source of needs: after its archive is deleted and k3s restarts, the archive's image is at risk by provenance", async () => {
    let refs = await cli.images('solo');
    expect(needOf(refs, EDGE)).toMatchObject({ needed: true, basis: 'provenance', verdict: honoured ? 'protected' : 'unprotected', because: expect.stringMatching(/^edge\.tar\.zst in the images dir brings it; /) });

    rmSync(path.join(solo.hostImagesDir, 'edge.tar.zst'));
    const started = await emulateK3sStart(solo);
    expect(started.cleared).toContain(EDGE);
    expect(await labelsOf(solo, EDGE)).not.toHaveProperty(CRI);
    expect(await criPinned(solo, EDGE, false)).toBe(false);

    refs = await cli.images('solo');
    const edge = needOf(refs, EDGE);
    expect(edge).toMatchObject({ verdict: 'unprotected', atRisk: true, needed: true, basis: 'provenance', workloads: [] });
    expect(edge.because).toMatch(/^k3s's digest reference docker\.io\/library\/holdfast-edge@sha256:[0-9a-f]{12}… shows it came from an air-gap archive; not pinned: kubelet may delete it$/);
    // an unpinned image that did not come from an archive: nothing says it is needed
    const plain = needOf(refs, PLAIN);
    expect(plain).toMatchObject({ verdict: 'unneeded', atRisk: false, needed: false, basis: null });
    expect(plain.because).toMatch(/not from an air-gap archive/);
    expect(imageRefs(refs, PLAIN).some((r) => r.name.includes('@sha256:'))).toBe(false);

    const report = await cli.inspect(['solo']);
    expect(nodeOf(report, 'solo').needs).toMatchObject({ basis: 'provenance', sources: [], missing: [], noSource: 'an agent node, and no configured server node of its cluster answered' });
    const at = atRiskOn(report, 'solo');
    expect(at.find((a) => a.refs.includes(EDGE))).toMatchObject({ verdict: 'unprotected' });
    expect(at.some((a) => a.refs.includes(PLAIN))).toBe(false);

    const text = await cli.run<{ stdout: string }>(['images', 'solo']);
    expect(text.stdout).toContain('No source of site needs (an agent node, and no configured server node of its cluster answered): images from air-gap archives count as needed.');
    expect(text.stdout).toContain('holdfast pin solo --needed');
  });

  it("the operator's list: a node with no cluster in group site-a needs what needed-images/site-a.txt names", async () => {
    // no k3s on l1: nothing else tells what the site needs
    let report = await cli.inspect(['l1']);
    expect(nodeOf(report, 'l1').needs).toMatchObject({ basis: 'provenance', sources: [] });
    expect(nodeOf(report, 'l1').needs!.noSource).toMatch(/no k3s or RKE2 kubectl on the node/);

    mkdirSync(path.join(home, 'needed-images'), { recursive: true });
    writeFileSync(path.join(home, 'needed-images', 'site-a.txt'), `# site-a keeps these\nholdfast-listed:1.0\n${ABSENT}   # not delivered yet\n`);

    const refs = await cli.images('l1');
    const listed = needOf(refs, LISTED);
    expect(listed).toMatchObject({ needed: true, basis: 'list', verdict: 'unprotected', atRisk: true, workloads: [] });
    expect(listed.because).toBe("on the operator's list (needed-images/site-a.txt); not pinned: kubelet may delete it");
    expect(needOf(refs, OTHER)).toMatchObject({ needed: false, verdict: 'unneeded', atRisk: false, because: 'nothing at the site needs it' });

    report = await cli.inspect();
    const r1 = nodeOf(report, 'l1');
    expect(r1.needs).toMatchObject({ basis: 'known', sources: [{ kind: 'list', label: 'needed-images/site-a.txt' }], notes: [] });
    expect(r1.needs!.noSource).toBeUndefined();
    expect(r1.needs!.missing).toEqual([expect.objectContaining({ ref: ABSENT, source: 'list', workloads: [] })]);
    const at = atRiskOn(report, 'l1');
    expect(at.find((a) => a.refs.includes(LISTED))).toMatchObject({ verdict: 'unprotected' });
    expect(at.find((a) => a.refs.includes(ABSENT))).toMatchObject({ refs: [ABSENT], verdict: 'missing' });
    // the group's list is not the ungrouped agent's
    expect(nodeOf(report, 'solo').needs).toMatchObject({ basis: 'provenance', missing: [] });

    // pin --needed takes the listed image; the one not delivered stays in the plan, unchanged
    const plan = await cli.run<PinPlan>(['pin', 'l1', '--needed', '--json']);
    expect(plan.changes.map((c) => c.ref).sort()).toEqual(imageRefs(refs, LISTED).map((r) => r.name).sort());
    expect(plan.unchanged).toContainEqual({ ref: ABSENT, reason: expect.stringMatching(/^needed but not on the node/) });
    expect(await labelsOf(l1, LISTED)).toMatchObject({ [CRI]: 'pinned' });
    expect(await criPinned(l1, LISTED, honoured)).toBe(honoured);
    expect(await labelsOf(l1, OTHER)).not.toHaveProperty(CRI);
    expect(needOf(await cli.images('l1'), LISTED)).toMatchObject({ verdict: honoured ? 'protected' : 'unprotected', atRisk: !honoured });
  });

  it("the sandbox image named by k3s's containerd config is needed on that node (missing, then present)", async () => {
    // in the node: /var/lib/rancher/k3s/agent/etc/containerd/config.toml (/var/lib/rancher is <root>/rancher)
    const dir = path.join(l1.root, 'rancher', 'k3s', 'agent', 'etc', 'containerd');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'config.toml'),
      ['version = 2', '', '[plugins."io.containerd.grpc.v1.cri"]', '  enable_selinux = false', '  sandbox_image = "docker.io/rancher/mirrored-pause:3.6"', ''].join('\n'),
    );
    expect(await l1.statInNode('/var/lib/rancher/k3s/agent/etc/containerd/config.toml')).toMatch(/^-rw-/);

    let report = await cli.inspect(['l1']);
    const r1 = nodeOf(report, 'l1');
    expect(r1.needs!.sources).toContainEqual({ kind: 'sandbox', label: "containerd's CRI config" });
    expect(r1.needs!.missing).toContainEqual(expect.objectContaining({ ref: PAUSE, source: 'sandbox', workloads: [], because: "every pod's sandbox (pause) image; not on this node" }));
    expect(atRiskOn(report, 'l1').find((a) => a.refs.includes(PAUSE))).toMatchObject({ refs: [PAUSE], verdict: 'missing' });

    await ctrImport(lab, l1, PAUSE);
    const pause = needOf(await cli.images('l1'), PAUSE);
    expect(pause).toMatchObject({ needed: true, basis: 'sandbox', verdict: 'unprotected', atRisk: true });
    expect(pause.because).toBe("every pod's sandbox (pause) image; not pinned: kubelet may delete it");
    report = await cli.inspect(['l1']);
    expect(nodeOf(report, 'l1').needs!.missing.some((m) => m.ref === PAUSE)).toBe(false);
    expect(atRiskOn(report, 'l1').find((a) => a.refs.includes(PAUSE))).toMatchObject({ verdict: 'unprotected' });
    // the refs that are CRI's own records share the verdict (checked by needOf); none is a stray
    expect(imageRefs(await cli.images('l1'), PAUSE).filter((r) => isImageIdRef(r))).toHaveLength(1);
  });
});
