// Issue #37 item 3, on a real lab node (containerd 2.x by default): k3s's embedded registry
// (spegel). The node's own /etc/rancher/k3s (a per-node dir bind-mounted over /etc/rancher inside
// its mount namespace) turns it on (`embedded-registry: true`) and mirrors docker.io in
// registries.yaml; an archive imported as k3s imports it (digest reference + distribution.source
// label on its content) is servable to peers; deleting its digest reference makes it unservable,
// with the reason; a registry not mirrored or the registry off say so; `holdfast inspect` names
// the nodes that can serve a needed image (er1, the server) to the node that lacks it (er2, an
// agent following its server); and prune keeps an unpinned image peers pull from the node.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startLab, workloadList, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PrunePlan } from '../../src/shared/prunePlan';
import { addLabNode, etcRancher, onTerminal as onTerminalIn, runCli, tempHome } from './support';

const TOKEN = 'K10-join-token-S3cret::server:abcdef';
const APP = 'docker.io/library/app:1.0';
const TOOL = 'docker.io/library/tool:2.0';
const K3S = 'io.cattle.k3s.pinned';
const CRI = 'io.cri-containerd.pinned';

let lab: Lab;
let home: string;
let n: LabNodeHandle;
let agent: LabNodeHandle;
const outputs: string[] = [];
const cli = async (args: string[]) => {
  const r = await runCli(args, { HOLDFAST_HOME: home }, 120_000);
  outputs.push(r.stdout, r.stderr);
  return r;
};
const onTerminal = (args: string[], cols: number) => onTerminalIn(args, cols, { HOLDFAST_HOME: home }, (out) => outputs.push(out));
const refsOf = async (): Promise<ImageRef[]> => JSON.parse((await cli(['images', 'er1', '--json'])).stdout) as ImageRef[];

const CONFIG = { 'k3s/config.yaml': `token: ${TOKEN}\nembedded-registry: true\n` };
const MIRRORS = 'mirrors:\n  docker.io:\n    endpoint:\n      - "https://mirror.lan"\nconfigs:\n  docker.io:\n    auth:\n      password: S3cret-pass\n';

beforeAll(async () => {
  lab = await startLab({ nodes: ['er1', 'er2'] });
  home = tempHome();
  n = lab.node('er1');
  agent = lab.node('er2');
  await etcRancher(n, { ...CONFIG, 'k3s/registries.yaml': MIRRORS });
  // er2 joins er1 and sets nothing itself: it follows its server's embedded-registry setting.
  await etcRancher(agent, { 'k3s/config.yaml': `server: https://er1.lan:6443\ntoken: ${TOKEN}\n`, 'k3s/registries.yaml': MIRRORS });
  // A server whose cluster needs APP only (on both nodes): TOOL is needed by nothing at the site.
  await n.installDistroBinary('k3s', 'v1.33.7+k3s1', {
    workloads: workloadList({
      nodes: [{ name: 'er1', role: 'server' }, { name: 'er2', role: 'agent' }],
      daemonSets: [{ name: 'app', image: APP }],
    }),
  });
  await agent.installDistroBinary('k3s', 'v1.33.7+k3s1');
  await addLabNode(lab, n, home, { extra: ['--group', 'site-a'] });
  await addLabNode(lab, agent, home, { extra: ['--group', 'site-a'] });
  await writeImageArchive(path.join(n.hostImagesDir, 'app.tar'), { format: 'docker', images: [{ name: APP }] });
  await writeImageArchive(path.join(n.hostImagesDir, 'tool.tar'), { format: 'docker', images: [{ name: TOOL }] });
  await emulateK3sStart(n);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
  // The join token and the registry password never left the node.
  for (const o of outputs) {
    expect(o).not.toContain('S3cret');
  }
});

/** `holdfast prune er1 --dry-run --json`: one outcome per node, the plan in it. */
const pruneDryRun = async (): Promise<PrunePlan> => {
  const [o] = JSON.parse((await cli(['prune', 'er1', '--dry-run', '--json'])).stdout) as { node: string; ok: boolean; plan?: PrunePlan }[];
  expect(o).toMatchObject({ node: 'er1', ok: true });
  return o!.plan!;
};

const digestRefOf = async (tag: string) => {
  const digest = (await listImages(n)).find((i) => i.name === tag)!.digest;
  return `${tag.slice(0, tag.lastIndexOf(':'))}@${digest}`;
};

describe('the embedded registry', () => {
  it('an image k3s imported is servable to peers, in --json and in the table', async () => {
    const digestRef = await digestRefOf(APP);
    const refs = await refsOf();
    expect(refs.find((r) => r.name === APP)!.peers).toMatchObject({ servable: true, registry: 'docker.io', brief: 'peers can pull it' });
    expect(refs.find((r) => r.name === digestRef)!.peers?.servable).toBe(true);
    // CRI's sha256:<id> record names no registry: no verdict.
    expect(refs.filter((r) => r.name.startsWith('sha256:')).every((r) => r.peers === undefined)).toBe(true);

    const table = await cli(['images', 'er1']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/REFERENCE\s.*\sPEERS/);
    expect(table.stdout).toMatch(new RegExp(`${APP.replace(/\./g, '\\.')}\\s.*\\syes`));
    expect(table.stdout).toContain('embedded registry: on, mirroring docker.io');

    // A person's 80-column terminal: PEERS stays (the details give way first), every line fits.
    const lines = await onTerminal(['images', 'er1'], 80);
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
    expect(lines.find((l) => l.startsWith('REFERENCE'))).toMatch(/\sPEERS$/);
    expect(lines.find((l) => l.startsWith(APP))).toMatch(/\syes$/);
  });

  it('deleting its digest reference makes it unservable, and says why', async () => {
    const digestRef = await digestRefOf(APP);
    await n.ctr(['images', 'rm', digestRef]);
    const app = (await refsOf()).find((r) => r.name === APP)!;
    expect(app.peers).toMatchObject({ servable: false, block: 'no-digest-ref', brief: 'no digest reference' });
    expect(app.peers!.reason).toContain(`${digestRef} is missing: the embedded registry advertises an image only with its digest reference`);

    const table = await cli(['images', 'er1']);
    expect(table.stdout).toMatch(new RegExp(`${APP.replace(/\./g, '\\.')}\\s.*\\sno digest reference`));
    expect(table.stdout).toContain(`  ${APP}: ${digestRef} is missing`);
    // On a terminal: the short clause in the column, the long form with --why.
    const lines = await onTerminal(['images', 'er1'], 100);
    expect(lines.filter((l) => l.length > 100)).toEqual([]);
    expect(lines.join('\n')).toMatch(/no digest\s*(\n.*)?reference/);
    expect(lines.join('\n')).toContain('(--why: reasons in full');
    // k3s's next start brings it back (the archive is still there), and with it the sharing.
    await emulateK3sStart(n);
    expect((await refsOf()).find((r) => r.name === APP)!.peers?.servable).toBe(true);
  });

  it('a registry not mirrored, or the registry off: not servable, with the reason', async () => {
    await etcRancher(n, { ...CONFIG, 'k3s/registries.yaml': 'mirrors:\n  registry.local:\n' });
    let app = (await refsOf()).find((r) => r.name === APP)!;
    expect(app.peers).toMatchObject({ servable: false, block: 'not-mirrored' });
    expect(app.peers!.reason).toContain('docker.io is not under mirrors in /etc/rancher/k3s/registries.yaml (registry.local)');

    await etcRancher(n, { 'k3s/config.yaml': `token: ${TOKEN}\n`, 'k3s/registries.yaml': MIRRORS });
    app = (await refsOf()).find((r) => r.name === APP)!;
    expect(app.peers).toMatchObject({ servable: false, block: 'registry-off' });
    // Off: the table stays as it was (no PEERS column).
    expect((await cli(['images', 'er1'])).stdout).not.toMatch(/\sPEERS/);
    await etcRancher(n, { ...CONFIG, 'k3s/registries.yaml': MIRRORS });
  });

  it('the fleet view: which nodes can serve a needed image to the nodes that lack it', async () => {
    const report = JSON.parse((await cli(['inspect', '--json'])).stdout) as { nodes: { node: string; embeddedRegistry?: { enabled: string }; images: ImageRef[] }[] };
    expect(report.nodes.find((x) => x.node === 'er1')!.embeddedRegistry?.enabled).toBe('on');
    expect(report.nodes.find((x) => x.node === 'er2')!.embeddedRegistry?.enabled).toBe('agent');
    expect(report.nodes.find((x) => x.node === 'er1')!.images.find((r) => r.name === APP)!.peers?.servable).toBe(true);
    const text = await cli(['inspect']);
    expect(text.stdout).toContain('Embedded registry (peers pull images from each other):');
    expect(text.stdout).toContain('  er1: embedded registry: on, mirroring docker.io');
    expect(text.stdout).toContain('  er2: embedded registry: as its servers set it (an agent), mirroring docker.io');
    expect(text.stdout).toContain(`  ${APP}: served by er1; missing on er2`);
  });

  it('prune keeps an unpinned image peers pull from this node, with the reason in the plan', async () => {
    // TOOL's archive goes and k3s's next start strips its pins: unpinned, unneeded, still servable.
    await rm(path.join(n.hostImagesDir, 'tool.tar'));
    await emulateK3sStart(n);
    expect(await labelsOf(n, TOOL)).not.toHaveProperty(K3S);
    expect(await labelsOf(n, TOOL)).not.toHaveProperty(CRI);
    expect((await refsOf()).find((r) => r.name === TOOL)!.peers?.servable).toBe(true);

    const p = await pruneDryRun();
    const kept = p.kept.find((k) => k.refs.includes(TOOL));
    expect(kept).toMatchObject({ reason: 'peers' });
    expect(kept!.text).toContain('through the embedded registry');
    expect(p.remove.some((r) => r.refs.includes(TOOL))).toBe(false);
    const text = await cli(['prune', 'er1', '--dry-run']);
    expect(text.stdout).toContain(`Peers can pull ${TOOL} from this node through the embedded registry`);

    // The registry off: nothing keeps TOOL, and the plan removes it with every reference.
    await etcRancher(n, { 'k3s/config.yaml': `token: ${TOKEN}\n`, 'k3s/registries.yaml': MIRRORS });
    const q = await pruneDryRun();
    expect(q.remove.find((r) => r.refs.includes(TOOL))?.refs).toContain(await digestRefOf(TOOL));
  });
});
