// `holdfast guard --local` on a real lab node (#50): Holdfast on the node keeping a pin set. Each
// step is checked against containerd's labels (ctr) and what CRI reports as pinned (kubelet's view):
// --dry-run changes nothing; one run makes what the set names durable; a needed image imported by
// hand becomes durable at the next run; the archive removed and an emulated k3s start lose nothing;
// a pin removed behind its back is restored and reported; a named image the node lacks is reported
// in the textfile, never faked; an image outside the set is never touched; deploy/'s systemd unit
// and DaemonSet run their commands as written; and an image a signed set finds unverified is pinned and reported.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { criPinned, emulateK3sStart, labelsOf, listImages, startLab, type Lab, type LabNodeHandle } from '../../lab';
import type { GuardRunJson } from '../../src/cli/commands/guard';
import type { PinSetShowJson } from '../../src/cli/commands/pinset';
import { addLabNode, criPinsHonoured, runCli, tempHome } from './support';
import { A, CRI, ctrImport, expectDurable, M, O, P, seedGuardSite, textfileSamples, writePinSet } from './guardSite';

const N = 'docker.io/library/guard-needed:1'; // on the operator's list (needed); imported by hand later

let lab: Lab;
let n: LabNodeHandle;
let home: string;
let honoured: boolean;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-guard-'));
const pinSet = path.join(work, 'site.yaml');
const textfile = path.join(work, 'textfile', 'holdfast-guard.prom');

const guard = async (extra: string[] = []): Promise<GuardRunJson> => {
  const args = ['guard', '--local', '--name', 'gd', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--pin-set', pinSet, '-o', 'json', ...extra];
  const r = await runCli(args, { HOLDFAST_HOME: home }, 180_000);
  expect(r.code, r.stderr).toBe(0);
  // On containerd 1.6 the pin is set and kubelet is told to ignore it: said as `pin` says it.
  expect(r.stderr).toEqual(honoured ? '' : expect.stringMatching(/^warning: kubelet on gd will not honour this pin/));
  return JSON.parse(r.stdout) as GuardRunJson;
};

/** Every reference's labels, by name: what the node holds, compared whole before and after. */
async function allLabels(): Promise<Record<string, Record<string, string>>> {
  return Object.fromEntries((await listImages(n)).map((i) => [i.name, i.labels]));
}

const samples = (): Map<string, number> => textfileSamples(textfile);

beforeAll(async () => {
  lab = await startLab({ nodes: ['gd'] });
  n = lab.node('gd');
  home = tempHome();
  honoured = await criPinsHonoured(n);
  mkdirSync(path.dirname(textfile));
  mkdirSync(path.join(home, 'needed-images'));
  writeFileSync(path.join(home, 'needed-images', 'gd.txt'), `# what the site runs\n${N}\n`);
  writePinSet(pinSet, true);
  await seedGuardSite(n, work);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('holdfast guard --local on a lab node', () => {
  it('--dry-run plans and changes nothing: no label, no audit entry, no textfile', async () => {
    const before = await allLabels();
    const run = await guard(['--dry-run']);
    expect(run.dryRun).toBe(true);
    expect(run.fixed.map((f) => f.ref)).toEqual(expect.arrayContaining([A, P]));
    expect(run.missing).toEqual(expect.arrayContaining([M, N]));
    expect(await allLabels()).toEqual(before);
    expect(existsSync(path.join(home, 'audit.jsonl')) ? readFileSync(path.join(home, 'audit.jsonl'), 'utf8') : '').toBe('');
    expect(existsSync(textfile)).toBe(false);
  });

  it('pinset show: what the set selects, and what guard would change', async () => {
    const r = await runCli(['pinset', 'show', '--local', '--name', 'gd', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--pin-set', pinSet, '-o', 'json'], { HOLDFAST_HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const show = JSON.parse(r.stdout) as PinSetShowJson;
    expect(show.entries).toEqual(
      expect.arrayContaining([
        { ref: A, via: ['images'], state: 'pin' },
        { ref: P, via: ['patterns'], state: 'pin' },
        { ref: M, via: ['images'], state: 'missing' },
        { ref: N, via: ['needed'], state: 'missing' },
      ]),
    );
    expect(show.entries.map((e) => e.ref)).not.toContain(O);
    expect(show.changes.map((c) => c.ref)).toEqual(expect.arrayContaining([A, P]));
    // From a laptop over SSH, the node as configured: the same answer.
    await addLabNode(lab, n, home, { name: 'gd' });
    const ssh = await runCli(['pinset', 'show', 'gd', '--pin-set', pinSet, '-o', 'json'], { HOLDFAST_HOME: home });
    expect(ssh.code, ssh.stderr).toBe(0);
    expect((JSON.parse(ssh.stdout) as PinSetShowJson).entries).toEqual(show.entries);
  });

  it('one run makes every image the set names durable, and touches nothing else', async () => {
    const other = await labelsOf(n, O);
    const run = await guard(['--textfile', textfile]);
    await expectDurable(n, A, honoured);
    await expectDurable(n, P, honoured);
    expect(run.fixed.map((f) => f.ref)).toEqual(expect.arrayContaining([A, P]));
    expect(await labelsOf(n, O)).toEqual(other);
    expect(await criPinned(n, O)).toBe(false);
    // Missing images are reported, never faked: no record of them appears.
    expect((await listImages(n)).map((i) => i.name)).not.toContain(M);
    const s = samples();
    expect(s.get('holdfast_guard_last_run_success')).toBe(1);
    expect(s.get('holdfast_guard_fixed{kind="pinned"}')).toBe(run.fixed.length);
    expect(s.get('holdfast_guard_fixed_total')).toBe(run.fixed.length);
    expect(s.get('holdfast_guard_missing_images')).toBe(2);
    expect(s.get(`holdfast_guard_missing_image{ref="${M}"}`)).toBe(1);
    expect(s.get('holdfast_guard_info{pin_set="site"}')).toBe(1);
  });

  it('a needed image imported by hand becomes durable at the next run', async () => {
    await ctrImport(n, work, N);
    const run = await guard(['--textfile', textfile]);
    expect(run.fixed.map((f) => f.ref)).toContain(N);
    await expectDurable(n, N, honoured);
    expect(run.missing).toEqual([M]);
    expect(samples().get('holdfast_guard_missing_images')).toBe(1);
  });

  it('the archive removed and k3s started again: nothing is lost, the next run fixes nothing', async () => {
    rmSync(path.join(n.hostImagesDir, 'a.tar'));
    await emulateK3sStart(n);
    for (const ref of [A, P, N]) await expectDurable(n, ref, honoured);
    const run = await guard(['--textfile', textfile]);
    expect(run.fixed).toEqual([]);
    expect(run.durable).toEqual(expect.arrayContaining([A, P, N]));
    expect(samples().get('holdfast_guard_fixed{kind="pinned"}')).toBe(0);
  });

  it('a pin removed behind its back is restored and reported', async () => {
    await n.ctr(['images', 'label', A, `${CRI}=`]);
    expect(await labelsOf(n, A)).not.toHaveProperty(CRI);
    const totalBefore = samples().get('holdfast_guard_fixed_total')!;
    const run = await guard(['--textfile', textfile]);
    expect(run.fixed).toContainEqual({ ref: A, restored: 'label-removed' });
    await expectDurable(n, A, honoured);
    const s = samples();
    expect(s.get('holdfast_guard_fixed{kind="restored"}')).toBeGreaterThanOrEqual(1);
    expect(s.get('holdfast_guard_fixed_total')).toBe(totalBefore + run.fixed.length);
    // The audit log has the re-pin, as `holdfast pin` writes it.
    const log = await runCli(['log', 'gd', '--json'], { HOLDFAST_HOME: home });
    expect(log.code, log.stderr).toBe(0);
    const entries = JSON.parse(log.stdout) as { action: string; changes?: { ref: string }[] }[];
    expect(entries.filter((e) => e.action === 'pin' && e.changes?.some((c) => c.ref === A))).toHaveLength(2);
  });

  it('an image outside the set was never touched', async () => {
    expect((await labelsOf(n, O))[CRI]).toBeUndefined();
    expect(await criPinned(n, O)).toBe(false);
  });

  it("deploy/: the systemd unit's and the DaemonSet's commands run as written, with the shipped pin set", async () => {
    const deploy = path.join(import.meta.dirname, '..', '..', 'deploy');
    const docs = parseAllDocuments(readFileSync(path.join(deploy, 'pinset.yaml'), 'utf8')).map((d) => d.toJS() as { data?: Record<string, string> });
    const shipped = path.join(work, 'shipped-pinset.yaml');
    writeFileSync(shipped, docs[0]!.data!['pinset.yaml']!);
    const dir = path.join(work, 'deploy-textfile');
    mkdirSync(dir);
    // Each command as the file writes it, its paths moved into the test's dir and the lab node's socket and images dir added.
    const moved = (line: string) =>
      line
        .replace('"$NODE_NAME"', 'gd')
        .replace('/etc/holdfast/pinset.yaml', shipped)
        .replace(/--textfile \/\S+\/(holdfast[-a-z]*\.prom)/, `--textfile ${dir}/$1`)
        .split(' ')
        .slice(1);
    const unit = readFileSync(path.join(deploy, 'holdfast-guard.service'), 'utf8');
    const daemonSet = readFileSync(path.join(deploy, 'guard.yaml'), 'utf8');
    const lines = [...[...unit.matchAll(/^ExecStart=(.+)$/gm)].map((m) => m[1]!), ...[...daemonSet.matchAll(/^ +(holdfast (?:guard|metrics) .+?) \|\| true$/gm)].map((m) => m[1]!)];
    expect(lines.map((l) => l.split(' ').slice(1, 3).join(' '))).toEqual(['guard --local', 'metrics --local', 'guard --local', 'metrics --local']);
    for (const line of lines) {
      const args = [...moved(line), ...(line.includes('--name') ? [] : ['--name', 'gd']), '--socket', n.hostSocket, '--images-dir', n.hostImagesDir];
      const r = await runCli(args, { HOLDFAST_HOME: home }, 180_000);
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
    }
    const guardSeries = readFileSync(path.join(dir, 'holdfast-guard.prom'), 'utf8');
    // The shipped set names Holdfast's own image, which a lab node lacks: reported, the run still succeeds.
    expect(guardSeries).toMatch(/^holdfast_guard_last_run_success 1$/m);
    expect(guardSeries).toMatch(/^holdfast_guard_missing_image\{ref="localhost\/holdfast:\d[^"]*"\} 1$/m);
    expect(readFileSync(path.join(dir, 'holdfast.prom'), 'utf8')).toMatch(/^holdfast_check_success 1$/m);
    expect((await labelsOf(n, O))[CRI]).toBeUndefined();
  });
});

describe('a pin set that requires signed images (spec.signatures)', () => {
  const KEY = 'a1'.repeat(32);
  const OTHER = 'b2'.repeat(32);
  const U = 'registry.local/app/unsigned:1'; // named by the signed set; imported by hand, never verified
  const signedSet = path.join(work, 'signed.yaml');
  const signedTextfile = path.join(work, 'textfile', 'holdfast-guard-signed.prom');
  const verifiedBy = (by: string) => ['io.holdfast.signature.verified=true', `io.holdfast.signature.by=${by}`, 'io.holdfast.signature.format=bundle', 'io.holdfast.signature.at=2026-12-01T00:00:00Z'];

  beforeAll(async () => {
    // The records `holdfast import --key` leaves, set as a fixture: A by the named key, P by another.
    await n.ctr(['images', 'label', A, ...verifiedBy(KEY)]);
    await n.ctr(['images', 'label', P, ...verifiedBy(OTHER)]);
    await ctrImport(n, work, U);
    writeFileSync(signedSet, ['apiVersion: holdfast/v1', 'kind: PinSet', 'metadata: {name: signed}', 'spec:', `  images: [${A}, ${P}, ${U}]`, '  signatures:', '    required: true', `    keys: ["${KEY}"]`, ''].join('\n'));
  }, 120_000);

  it('pins the unverified image anyway, and reports it in JSON, textfile, state record and pinset show', async () => {
    const args = ['guard', '--local', '--name', 'gd', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--pin-set', signedSet, '--textfile', signedTextfile, '-o', 'json'];
    const r = await runCli(args, { HOLDFAST_HOME: home }, 180_000);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout) as GuardRunJson;
    expect(run.fixed.map((f) => f.ref)).toContain(U);
    await expectDurable(n, U, honoured);
    expect(run.unverified).toEqual(
      expect.arrayContaining([
        { ref: U, reason: 'never verified' },
        { ref: P, reason: expect.stringMatching(/^signed by key b2b2b2b2…, verified 2026-12-01, not by a key or identity the pin set names$/) },
      ]),
    );
    expect(run.unverified.map((u) => u.ref)).not.toContain(A);

    const samples = readFileSync(signedTextfile, 'utf8');
    execFileSync('promtool', ['check', 'metrics'], { input: samples, stdio: ['pipe', 'pipe', 'pipe'] });
    expect(samples).toMatch(/^holdfast_guard_unverified 2$/m);
    expect(samples).toContain(`holdfast_guard_unverified_image{ref="${U}"} 1`);
    expect(samples).not.toContain(`holdfast_guard_unverified_image{ref="${A}"}`);

    const state = JSON.parse(readFileSync(path.join(home, 'guard-state.json'), 'utf8')) as { pinSet: { name: string }; unverified: string[]; unverifiedCount: number };
    expect(state.pinSet.name).toBe('signed');
    expect(state.unverifiedCount).toBe(2);
    expect([...state.unverified].sort()).toEqual([P, U].sort());

    const show = await runCli(['pinset', 'show', '--local', '--name', 'gd', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--pin-set', signedSet], { HOLDFAST_HOME: home, COLUMNS: '200' });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`verified signature required by key ${KEY.slice(0, 8)}…`);
    expect(show.stdout).toMatch(new RegExp(`${U.replace(/[./]/g, '\\$&')} .*NOT VERIFIED: never verified`));
    expect(show.stdout).toContain('2 references fail the signature requirement');
  });
});
