// The guard container image (#50) as a site runs it: built by scripts/build-guard-image.sh with
// buildah, loaded into private podman storage, started read-only with no network, with a lab
// node's containerd socket and images dir mounted where the DaemonSet mounts them. Checked against
// containerd's labels and CRI: --dry-run changes nothing; a run makes what the set names durable,
// writes the textfile and the audit log, and changes nothing else. The OCI archive itself is
// read by `holdfast archives --local` and imported by an emulated k3s start, like any other.
// The DaemonSet's container itself (deploy/guard.yaml's command, args, env, mounts) runs one cycle.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { criPinned, emulateK3sStart, labelsOf, listImages, startLab, type Lab, type LabNodeHandle } from '../../lab';
import type { GuardRunJson } from '../../src/cli/commands/guard';
import type { ArchiveInfo } from '../../src/shared/domain/archives';
import { judgeGuard, parseGuardState } from '../../src/shared/guardState';
import { criPinsHonoured, runCli, tempHome } from './support';
import { A, ctrImport, expectDurable, K3S, M, O, P, seedGuardSite, writePinSet } from './guardSite';
import { buildGuardImage, guardRunArgs, IMAGE, podmanIn } from './guardPodman';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '../..');
const Q = 'registry.local/pat/q:1'; // matched by the pattern, imported by hand before the pod runs

let lab: Lab;
let n: LabNodeHandle;
let honoured: boolean;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-guard-image-'));
const archive = path.join(work, 'image', 'holdfast-guard.tar');
const home = path.join(work, 'home'); // the DaemonSet's hostPath /var/lib/holdfast
const textDir = path.join(work, 'textfile'); // node_exporter's textfile directory
const pinSet = path.join(work, 'pinset.yaml');
const podman = podmanIn(work);

/** The image run as the DaemonSet runs it, once, its JSON answer read. */
async function guardInPodman(extra: string[]): Promise<GuardRunJson> {
  const r = await podman(guardRunArgs({ node: n, pinSet, home, textDir }, ['--local', '--name', 'gi', '--pin-set', '/etc/holdfast/pinset.yaml', '--json', ...extra]));
  expect(r.stderr).toEqual(honoured ? '' : expect.stringMatching(/^warning: kubelet on gi will not honour this pin/));
  return JSON.parse(r.stdout) as GuardRunJson;
}

interface Container {
  image: string;
  command: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  securityContext: { runAsUser: number; runAsGroup: number; readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
}

/** deploy/guard.yaml's DaemonSet: its one container and whether it shares the host's PIDs. */
function daemonSet(): { container: Container; hostPID: boolean } {
  const docs = parseAllDocuments(readFileSync(path.join(repo, 'deploy', 'guard.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string; spec?: { template: { spec: { containers: Container[]; hostPID?: boolean } } } });
  const pod = docs.find((d) => d.kind === 'DaemonSet')!.spec!.template.spec;
  return { container: pod.containers[0]!, hostPID: pod.hostPID === true };
}

/** Kubernetes' $(VAR) expansion in command and args, from the container's own env. */
const expand = (s: string, env: Record<string, string>) => s.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m);

/** Every reference's labels, by name, leaving out the references of the images `except` name. */
async function labelsBesides(except: string[] = []): Promise<Record<string, Record<string, string>>> {
  const all = await listImages(n);
  const theirs = new Set(all.filter((i) => except.includes(i.name)).map((i) => i.digest));
  return Object.fromEntries(all.filter((i) => !theirs.has(i.digest)).map((i) => [i.name, i.labels]));
}

beforeAll(async () => {
  const build = buildGuardImage(work, path.dirname(archive));
  [lab] = await Promise.all([startLab({ nodes: ['gi'] }), build]);
  n = lab.node('gi');
  honoured = await criPinsHonoured(n);
  await podman(['load', '--quiet', '--input', archive]);
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(textDir);
  writePinSet(pinSet, false);
  await seedGuardSite(n, work);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
  await podman(['rmi', '--all', '--force']).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

describe('the guard image under podman, on a lab node', () => {
  it('is one OCI archive naming the image, with the standalone executable as its entrypoint', async () => {
    const index = JSON.parse((await run('tar', ['-xOf', archive, 'index.json'])).stdout) as { manifests: { annotations?: Record<string, string> }[] };
    expect(index.manifests.map((m) => m.annotations?.['org.opencontainers.image.ref.name'])).toEqual([IMAGE]);
    const config = JSON.parse((await podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE])).stdout) as { Entrypoint: string[]; User: string };
    expect(config).toMatchObject({ Entrypoint: ['/usr/local/bin/holdfast'], User: '0:0' });
  });

  it('--dry-run plans and changes nothing: no label, no audit entry, no textfile', async () => {
    const before = await labelsBesides();
    const plan = await guardInPodman(['--dry-run']);
    expect(plan.dryRun).toBe(true);
    expect(plan.fixed.map((f) => f.ref)).toEqual(expect.arrayContaining([A, P]));
    expect(plan.missing).toEqual([M]);
    expect(await labelsBesides()).toEqual(before);
    expect(existsSync(path.join(home, 'audit.jsonl'))).toBe(false);
    expect(existsSync(path.join(textDir, 'holdfast-guard.prom'))).toBe(false);
    expect(existsSync(path.join(home, 'guard-state.json'))).toBe(false);
  });

  it('a run makes what the set names durable, writes the textfile and the audit log, and nothing else changes', async () => {
    // Pinning an image labels each of its references (tag, digest, id): those of A and P change.
    const before = await labelsBesides([A, P]);
    expect(Object.keys(before)).toContain(O);
    const done = await guardInPodman(['--textfile', '/textfile/holdfast-guard.prom']);
    expect(done.fixed.map((f) => f.ref)).toEqual(expect.arrayContaining([A, P]));
    await expectDurable(n, A, honoured);
    await expectDurable(n, P, honoured);
    expect(await labelsBesides([A, P])).toEqual(before);
    expect(await criPinned(n, O)).toBe(false);
    expect((await listImages(n)).map((i) => i.name)).not.toContain(M);
    const text = readFileSync(path.join(textDir, 'holdfast-guard.prom'), 'utf8');
    expect(text).toMatch(/^holdfast_guard_last_run_success 1$/m);
    expect(text).toContain(`holdfast_guard_fixed{kind="pinned"} ${done.fixed.length}\n`);
    expect(text).toContain(`holdfast_guard_missing_image{ref="${M}"} 1`);
    const audit = readFileSync(path.join(home, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { action: string; node: string });
    expect(audit.map((e) => `${e.action} ${e.node}`)).toEqual(['pin gi']);
    // The run's record in the home (the node's /var/lib/holdfast), as inspect reads it over SSH.
    const state = judgeGuard(parseGuardState(readFileSync(path.join(home, 'guard-state.json'), 'utf8'), 512 * 1024), Date.now());
    expect(state).toMatchObject({ status: 'running', pinSet: { name: 'site' }, missing: [M], fixedCount: done.fixed.length });
  });

  it('the next run finds everything durable and fixes nothing', async () => {
    const again = await guardInPodman([]);
    expect(again.fixed).toEqual([]);
    expect(again.durable).toEqual(expect.arrayContaining([A, P]));
    expect(again.missing).toEqual([M]);
  });

  it("the DaemonSet's container, as deploy/guard.yaml runs it, guards the node and writes both textfiles in one cycle", async () => {
    const { container: c, hostPID } = daemonSet();
    expect(c.image).toBe(IMAGE);
    // Its volumes at the lab node's paths. The lab node runs no k3s: no binary or data dir to mount
    // (the test's pin set names no `needed`, which would run `k3s kubectl`).
    const cm = path.join(work, 'configmap');
    mkdirSync(cm);
    copyFileSync(pinSet, path.join(cm, 'pinset.yaml'));
    const podText = path.join(work, 'pod-textfile');
    mkdirSync(podText);
    const hostOf: Record<string, string | null> = {
      'containerd-socket': n.hostSocket,
      'images-dir': n.hostImagesDir,
      'k3s-binary': null,
      'k3s-data': null,
      'pin-set': cm,
      textfile: podText,
      home,
      tmp: mkdtempSync(path.join(work, 'emptydir-')),
    };
    expect(c.volumeMounts.map((m) => m.name).sort()).toEqual(Object.keys(hostOf).sort());
    const mounts = c.volumeMounts.flatMap((m) => (hostOf[m.name] ? ['--volume', `${hostOf[m.name]}:${m.mountPath}${m.readOnly ? ':ro' : ''}`] : []));
    const env: Record<string, string> = {};
    for (const e of c.env) env[e.name] = e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName' ? 'gi' : e.value!;
    const sc = c.securityContext;
    const security = [
      '--user', `${sc.runAsUser}:${sc.runAsGroup}`,
      ...(sc.readOnlyRootFilesystem ? ['--read-only', '--read-only-tmpfs=false'] : []),
      ...(sc.allowPrivilegeEscalation ? [] : ['--security-opt', 'no-new-privileges']),
      ...sc.capabilities.drop.flatMap((cap) => ['--cap-drop', cap]),
      ...(hostPID ? ['--pid=host'] : []),
    ];
    const limits = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
    const [entrypoint, ...commandArgs] = c.command.map((a) => expand(a, env));
    await ctrImport(n, work, Q);
    const before = await labelsBesides([Q]);
    await podman(['run', '--detach', '--name', 'hf-guard-pod', '--network=none', ...security, ...limits, ...mounts,
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      '--entrypoint', entrypoint!, IMAGE, ...commandArgs, ...c.args.map((a) => expand(a, env))]);
    // One cycle: guard, then metrics; the loop then sleeps until stopped.
    const metricsFile = path.join(podText, 'holdfast.prom');
    while (!existsSync(metricsFile)) {
      const state = (await podman(['inspect', '--format', '{{.State.Running}}', 'hf-guard-pod'])).stdout.trim();
      expect(state, (await podman(['logs', 'hf-guard-pod'])).stderr).toBe('true');
      await new Promise((r) => setTimeout(r, 500));
    }
    await podman(['stop', '--time', '20', 'hf-guard-pod']);
    // Its trap ends the loop on SIGTERM, as a pod's deletion sends it.
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', 'hf-guard-pod'])).stdout.trim()).toBe('0');
    const logs = await podman(['logs', 'hf-guard-pod']);
    await podman(['rm', 'hf-guard-pod']);
    expect(logs.stdout).toContain('pinned: registry.local/pat/q:1');
    await expectDurable(n, Q, honoured);
    expect(await labelsBesides([Q])).toEqual(before);
    expect(await criPinned(n, O)).toBe(false);
    expect(readFileSync(path.join(podText, 'holdfast-guard.prom'), 'utf8')).toMatch(/^holdfast_guard_last_run_success 1$/m);
    expect(readFileSync(metricsFile, 'utf8')).toMatch(/^holdfast_check_success 1$/m);
  });

  it('the archive is read by holdfast and imported by k3s like any other', async () => {
    copyFileSync(archive, path.join(n.hostImagesDir, 'holdfast-guard.tar'));
    const home2 = tempHome();
    const r = await runCli(['archives', '--local', '--name', 'gi', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--json'], { HOLDFAST_HOME: home2 });
    expect(r.code, r.stderr).toBe(0);
    const listed = (JSON.parse(r.stdout) as { archives: ArchiveInfo[] }).archives.find((a) => a.path === 'holdfast-guard.tar');
    expect(listed).toMatchObject({ kind: 'archive', images: [IMAGE], imported: false });
    await emulateK3sStart(n);
    expect(await labelsOf(n, IMAGE)).toMatchObject({ [K3S]: 'pinned' });
  });
});
