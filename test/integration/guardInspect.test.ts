// `holdfast inspect` reading a node's guard over SSH (#50): guard runs on a lab node as deploy/ runs
// it (its home the node's /var/lib/holdfast), then a laptop's inspect reports the guard's state, the
// pin set it keeps and what its run changed and could not fix, in JSON, text, HTML and CSV. The
// record's other states come from the node's own file: a failed run, garbage, an old run, none.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab, type LabNodeHandle } from '../../lab';
import type { FleetReport } from '../../src/shared/fleet';
import type { GuardView } from '../../src/shared/guardState';
import { addLabNode, criPinsHonoured, nodeHoldfastHome, runCli, tempHome } from './support';
import { A, expectDurable, M, P, seedGuardSite, writePinSet } from './guardSite';

let lab: Lab;
let n: LabNodeHandle;
let nodeHome: string;
let laptop: string;
let honoured: boolean;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-guardinspect-'));
const pinSet = path.join(work, 'site.yaml');

const guard = async (file = pinSet) => {
  const args = ['guard', '--local', '--name', 'gi', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--pin-set', file, '--interval', '5m', '-o', 'json'];
  return runCli(args, { HOLDFAST_HOME: nodeHome }, 180_000);
};

const inspectJson = async (): Promise<GuardView> => {
  const r = await runCli(['inspect', 'gi', '--json'], { HOLDFAST_HOME: laptop });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as FleetReport).nodes[0]!.guard!;
};

const stateFile = () => path.join(nodeHome, 'guard-state.json');

beforeAll(async () => {
  lab = await startLab({ nodes: ['gi'] });
  n = lab.node('gi');
  honoured = await criPinsHonoured(n);
  nodeHome = await nodeHoldfastHome(n);
  laptop = tempHome();
  writePinSet(pinSet, false);
  await seedGuardSite(n, work);
  await addLabNode(lab, n, laptop, { name: 'gi' });
}, 300_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('holdfast inspect shows the node guard', () => {
  it('no record on the node: "no guard", and the text says nothing of guards', async () => {
    expect(await inspectJson()).toEqual({ status: 'absent', words: 'no guard' });
    const text = await runCli(['inspect', 'gi'], { HOLDFAST_HOME: laptop });
    expect(text.stdout).not.toMatch(/Guard/);
  });

  it('after a run: running, the pin set by name and digest, what it pinned and what it could not', async () => {
    const run = await guard();
    expect(run.code, run.stderr).toBe(0);
    await expectDurable(n, A, honoured);
    const g = await inspectJson();
    const digest = `sha256:${createHash('sha256').update(readFileSync(pinSet)).digest('hex')}`;
    expect(g).toMatchObject({ status: 'running', pinSet: { name: 'site', digest }, intervalSeconds: 300, missing: [M], missingCount: 1 });
    expect(g.fixed!.map((f) => f.ref)).toEqual(expect.arrayContaining([A, P]));
    expect(g.words).toMatch(/^guard keeps pin set site, last ran \d{4}-\d\d-\d\d \d\d:\d\d UTC: made \d+ references durable; could not fix 1 missing image$/);

    const text = await runCli(['inspect', 'gi'], { HOLDFAST_HOME: laptop });
    expect(text.stdout).toContain(`Guard (keeps a pin set on the node between visits):\n  gi: ${g.words}`);
    expect(text.stdout).toContain(`    MISSING: ${M} (not on the node: import it)`);
    expect(text.stdout).toContain(`    pinned: ${A}`);

    const html = path.join(work, 'r.html');
    const csv = path.join(work, 'r.csv');
    expect((await runCli(['inspect', 'gi', '--html', html, '--csv', csv], { HOLDFAST_HOME: laptop })).code).toBe(0);
    expect(readFileSync(html, 'utf8')).toMatch(/<dt>Guard<\/dt><dd><span class="tag ok" data-guard="running">running<\/span> guard keeps pin set site/);
    expect(readFileSync(csv, 'utf8')).toContain(`gi,true,,,,,,"guard running: ${g.words}",`);
  });

  it('a run that fails is "failing", with why', async () => {
    const bad = path.join(work, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: site}\nspec: {images: [1nv@lid!]}\n');
    expect((await guard(bad)).code).not.toBe(0);
    const g = await inspectJson();
    expect(g).toMatchObject({ status: 'failing', pinSet: { name: 'bad.yaml', digest: null } });
    expect(g.words).toMatch(/^guard failing: its run at .+ UTC failed \(pin set .*bad\.yaml: spec\.images\[0\]/);
  });

  it('a run older than two intervals is "not running since"', async () => {
    expect((await guard()).code).toBe(0);
    const record = JSON.parse(readFileSync(stateFile(), 'utf8')) as { time: string };
    writeFileSync(stateFile(), JSON.stringify({ ...record, time: '2026-01-02T03:04:05Z' }));
    const g = await inspectJson();
    expect(g.status).toBe('stale');
    expect(g.words).toBe('guard not running since 2026-01-02 03:04 UTC (pin set site, runs every 5 min)');
  });

  it('garbage or an oversized file on the node: "unreadable guard state", the rest of the report stands', async () => {
    writeFileSync(stateFile(), '\u001b]0;pwned\u0007{"apiVersion":');
    const r = await runCli(['inspect', 'gi', '--json'], { HOLDFAST_HOME: laptop });
    expect(r.code, r.stderr).toBe(0);
    const node = (JSON.parse(r.stdout) as FleetReport).nodes[0]!;
    expect(node.reachable).toBe(true);
    expect(node.images!.length).toBeGreaterThan(0);
    expect(node.guard).toEqual({ status: 'unreadable', why: 'it is not JSON', words: 'unreadable guard state: it is not JSON' });
    const text = await runCli(['inspect', 'gi'], { HOLDFAST_HOME: laptop });
    expect(text.stdout).toContain('  gi: unreadable guard state: it is not JSON');
    expect(text.stdout).not.toContain('\u001b]0;');

    writeFileSync(stateFile(), Buffer.alloc(600 * 1024, 0x20));
    expect((await inspectJson()).words).toBe(`unreadable guard state: it is ${600 * 1024} bytes, more than a guard writes (524288)`);
    rmSync(stateFile());
    expect((await inspectJson()).status).toBe('absent');
  });
});
