// Image volumes (issue #46 item 4; docs/k3s-facts.md, "Which images a site needs"): a pod volume
// `image: {reference, pullPolicy}` (KEP-4639, on by default from Kubernetes 1.35) mounts an
// image's content, and kubelet pulls that image as it pulls a container's. Between runs nothing
// uses it, so kubelet's GC deletes it unless it is pinned. On a lab server node whose stand-in
// kubectl lists a Deployment with an image volume and a CronJob whose image volume names its image
// by digest, every view must count those images as needed: `holdfast images` names the volume,
// `inspect` and its OpenMetrics series count them at risk, `prune` keeps them and `pin --needed`
// pins them durably (the labels containerd stores, what CRI reports), across a k3s start. The
// node's registries.yaml rewrites docker.io's paths for its mirror: the image is still needed
// under the name the volume gives, as for a container.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { criImageStatus, criPinned } from '../../lab/cri';
import { workloadList } from '../../lab/workloads';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import type { FleetReport } from '../../src/shared/fleet';
import type { PrunePlan } from '../../src/shared/prunePlan';
import { addLabNode, criPinsHonoured, etcRancher, runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
/** The Deployment's container image. */
const APP = 'docker.io/library/holdfast-app:1.0';
/** Mounted by the Deployment's image volume `models`, written short (`holdfast-models:3.0`). */
const MODELS = 'docker.io/library/holdfast-models:3.0';
/** Mounted by the CronJob's image volume `weights`, which names it by digest. */
const WEIGHTS = 'docker.io/library/holdfast-weights:2.0';
/** Needed by nothing: what prune may take. */
const SCRATCH = 'docker.io/library/holdfast-scratch:0.1';

const REGISTRIES = ['mirrors:', '  docker.io:', '    endpoint:', '      - "https://mirror.site.lan:5000"', '    rewrite:', '      "^library/(.*)": "site/$1"', ''].join('\n');

let lab: Lab;
let node: LabNodeHandle;
let home: string;
let honoured: boolean;
/** WEIGHTS' manifest digest on the node: the CronJob's volume names `holdfast-weights@<it>`. */
let weightsDigest: string;

/** Puts an image on the node as `ctr images import` does: no pin, no digest reference, no archive. */
async function ctrImport(name: string): Promise<void> {
  const file = path.join(lab.dir, `iv-${name.replace(/[^a-z0-9]+/gi, '_')}.tar`);
  await writeImageArchive(file, { format: 'docker', images: [{ name }] });
  await node.ctr(['images', 'import', ...(node.containerdLine === '2' ? ['--local'] : []), file]);
  rmSync(file, { force: true });
  // CRI learns of the image from containerd's events, a moment later (bounded poll)
  for (let i = 0; i < 100 && !(await criImageStatus(node, name)); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await criImageStatus(node, name)).not.toBeNull();
}

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { HOLDFAST_HOME: home, COLUMNS: '100' });
  if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}
const images = async (): Promise<ImageRef[]> => JSON.parse(await cli(['images', 'iv1', '--json'])) as ImageRef[];

/** The references of one image (by a tag of it), CRI's own sha256:<id> record included. */
function refsOf(refs: ImageRef[], tag: string): ImageRef[] {
  const ref = refs.find((r) => r.name === tag);
  expect(ref, `${tag} is on the node`).toBeDefined();
  return refs.filter((r) => (r.imageId ?? r.digest) === (ref!.imageId ?? ref!.digest));
}

/** The at-risk needed images `inspect --json` lists for the node, and the OpenMetrics series of them. */
async function atRisk(): Promise<{ refs: string[][]; series: number }> {
  const report = JSON.parse(await cli(['inspect', 'iv1', '--json'])) as FleetReport;
  const list = report.summary.atRisk.find((r) => r.node === 'iv1')?.atRisk ?? [];
  const file = path.join(lab.dir, 'iv.prom');
  await cli(['inspect', 'iv1', '--openmetrics', file]);
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('holdfast_images_at_risk{node="iv1"} '));
  expect(line, 'the at-risk series is written for the node').toBeDefined();
  return { refs: list.map((a) => a.refs), series: Number(line!.split(' ')[1]) };
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['iv1'] });
  node = lab.node('iv1');
  home = tempHome();
  honoured = await criPinsHonoured(node);
  for (const image of [APP, MODELS, WEIGHTS, SCRATCH]) await ctrImport(image);
  weightsDigest = (await listImages(node)).find((i) => i.name === WEIGHTS)!.digest;
  await etcRancher(node, { 'k3s/registries.yaml': REGISTRIES });
  await node.installDistroBinary('k3s', 'v1.35.1+k3s1', {
    workloads: workloadList({
      nodes: [{ name: 'iv1', role: 'server', kubeletVersion: 'v1.35.1+k3s1' }],
      deployments: [{ namespace: 'default', name: 'app', image: APP, replicas: 1, node: 'iv1', imageVolumes: [{ name: 'models', reference: 'holdfast-models:3.0' }] }],
      cronJobs: [{ namespace: 'default', name: 'nightly-train', image: APP, imageVolumes: [{ name: 'weights', reference: `holdfast-weights@${weightsDigest}` }] }],
    }),
  });
  await addLabNode(lab, node, home);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

describe('image volumes: their images are needed like a container image', () => {
  it('holdfast images: needed by the workload, named with the volume; a digest reference is matched by digest', async () => {
    const refs = await images();
    for (const r of refsOf(refs, MODELS)) {
      expect({ ref: r.name, need: r.need }).toMatchObject({ ref: r.name, need: { needed: true, basis: 'workload', verdict: 'unprotected', atRisk: true } });
      expect(r.need!.workloads).toContainEqual({ kind: 'Deployment', namespace: 'default', name: 'app', why: 'image volume models' });
    }
    for (const r of refsOf(refs, WEIGHTS)) {
      expect({ ref: r.name, need: r.need }).toMatchObject({ ref: r.name, need: { needed: true, basis: 'workload', verdict: 'unprotected' } });
      expect(r.need!.workloads).toEqual([{ kind: 'CronJob', namespace: 'default', name: 'nightly-train', why: 'CronJob between runs, image volume weights' }]);
    }
    expect(refs.find((r) => r.name === SCRATCH)!.need).toMatchObject({ needed: false, verdict: 'unneeded' });

    const text = await cli(['images', 'iv1']);
    expect(text).toContain(`  ${MODELS}: needed by Deployment default/app (image volume models)`);
    expect(text).toContain(`  ${WEIGHTS}: needed by CronJob default/nightly-train (CronJob between runs, image volume weights)`);
    expect(text).toContain('holdfast pin iv1 --needed');
  });

  it('inspect and its OpenMetrics series count them at risk', async () => {
    const { refs, series } = await atRisk();
    expect(refs.some((r) => r.includes(MODELS))).toBe(true);
    expect(refs.some((r) => r.includes(WEIGHTS))).toBe(true);
    expect(series).toBe(refs.length);
  });

  it('prune --dry-run keeps them as needed and would remove only what nothing needs', async () => {
    const [o] = JSON.parse(await cli(['prune', 'iv1', '--dry-run', '--json'])) as { node: string; ok: boolean; plan: PrunePlan }[];
    expect(o).toMatchObject({ node: 'iv1', ok: true });
    const kept = o!.plan.kept.find((k) => k.refs.includes(MODELS));
    expect(kept).toMatchObject({ reason: 'needed' });
    expect(kept!.text).toContain('Deployment default/app (image volume models)');
    expect(o!.plan.kept.find((k) => k.refs.includes(WEIGHTS))).toMatchObject({ reason: 'needed' });
    expect(o!.plan.remove.filter((r) => r.refs.includes(MODELS) || r.refs.includes(WEIGHTS))).toEqual([]);
    expect(o!.plan.remove.some((r) => r.refs.includes(SCRATCH))).toBe(true);
    expect((await listImages(node)).some((i) => i.name === MODELS)).toBe(true); // a dry run
  });

  it('pin --needed pins them durably (containerd labels, CRI), and the pins hold across a k3s start', async () => {
    const before = await images();
    const wanted = [APP, MODELS, WEIGHTS].flatMap((tag) => refsOf(before, tag).map((r) => r.name));
    const plan = JSON.parse(await cli(['pin', 'iv1', '--needed', '--json'])) as PinPlan;
    for (const ref of wanted) expect(plan.changes.map((c) => c.ref)).toContain(ref);
    expect(plan.changes.some((c) => c.ref === SCRATCH)).toBe(false);

    const durable = async () => {
      for (const ref of wanted) expect({ ref, labels: await labelsOf(node, ref) }).toMatchObject({ ref, labels: { [CRI]: 'pinned' } });
      for (const ref of wanted) expect(await labelsOf(node, ref)).not.toHaveProperty(K3S);
      expect(await labelsOf(node, SCRATCH)).not.toHaveProperty(CRI);
      // what kubelet's GC reads: pinned where CRI pins at all (never on containerd 1.6)
      for (const tag of [MODELS, WEIGHTS]) expect({ tag, criPinned: await criPinned(node, tag, honoured) }).toEqual({ tag, criPinned: honoured });
    };
    await durable();
    const started = await emulateK3sStart(node);
    expect(started.cleared).toEqual([]);
    await durable();

    const after = await images();
    for (const tag of [MODELS, WEIGHTS]) {
      expect({ tag, need: refsOf(after, tag)[0]!.need }).toMatchObject({ tag, need: { needed: true, verdict: honoured ? 'protected' : 'unprotected' } });
    }
    const { refs, series } = await atRisk();
    expect(refs.some((r) => r.includes(MODELS) || r.includes(WEIGHTS))).toBe(!honoured);
    expect(series).toBe(refs.length);
  });
});
