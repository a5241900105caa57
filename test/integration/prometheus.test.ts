// The whole path a site runs, with Debian's real parts: `holdfast metrics --local` writes the
// textfile of a lab node (containerd 2.x), the real prometheus-node-exporter serves it from its
// textfile collector, the real Prometheus scrapes node_exporter and evaluates deploy/alerts.yml.
// The values Prometheus answers must be what containerd holds, the alerts must fire for that
// node's node_exporter (its `instance`) and resolve once the real CLI fixes the pin. And
// `promtool test rules` runs the rules' unit tests (test/prometheus/alerts.test.yml): every alert
// firing and not firing, with the real `for:` durations on promtool's simulated clock.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { addLabNode, repoRoot, runCli, tempHome } from './support';
import { RealPrometheus } from './realPrometheus';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const KEPT = 'docker.io/library/prom-kept:1.0'; // apps.tar, k3s-pinned, its archive stays
const GONE = 'docker.io/library/prom-gone:1.0'; // gone.tar, k3s-pinned, its archive removed: loses the pin

let lab: Lab;
let n: LabNodeHandle;
let home: string;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-prom-'));
const textfileDir = path.join(work, 'textfile');
const textfile = path.join(textfileDir, 'holdfast.prom');
const prom = new RealPrometheus(work);
/** node_exporter's address: the `instance` label Prometheus gives the node's series and alerts. */
let instance: string;
const { query, alerts } = prom;

/** The samples of the textfile: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.trimEnd().split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

/** `holdfast metrics --local` on the lab node into the textfile dir node_exporter reads. */
async function writeTextfile(extra: string[] = [], expectCode = 0): Promise<Map<string, number>> {
  const r = await runCli(['metrics', '--local', '--name', 'pm', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir, '--textfile', textfile, ...extra], { HOLDFAST_HOME: home }, 120_000);
  expect(r.code, r.stderr).toBe(expectCode);
  return samples(readFileSync(textfile, 'utf8'));
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['pm'] });
  n = lab.node('pm');
  home = tempHome();
  await writeImageArchive(path.join(n.hostImagesDir, 'apps.tar'), { format: 'docker', images: [{ name: KEPT }] });
  await writeImageArchive(path.join(n.hostImagesDir, 'gone.tar'), { format: 'docker', images: [{ name: GONE }] });
  await emulateK3sStart(n);
  rmSync(path.join(n.hostImagesDir, 'gone.tar'));
  await addLabNode(lab, n, home, { name: 'pm' });
  mkdirSync(textfileDir);
  await writeTextfile();

  instance = await prom.nodeExporter(textfileDir);
  await prom.prometheus([instance]);
});

afterAll(async () => {
  await prom.stop();
  await lab?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('Prometheus scrapes the textfile through node_exporter and alerts from deploy/alerts.yml (real Debian binaries)', () => {
  it('Prometheus holds what containerd holds, and the pin lost at the next start fires for this node', async () => {
    // What containerd holds, read with ctr: GONE is k3s-pinned and no archive brings it back.
    expect(await labelsOf(n, GONE)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    expect(await labelsOf(n, KEPT)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
    const written = samples(readFileSync(textfile, 'utf8'));
    expect(written.get('holdfast_images_losing_pin_at_next_start')).toBe(1);
    // The lab node has no cluster to ask what the site needs: images that came from air-gap
    // archives count as needed (provenance), so GONE is a needed image at risk too.
    expect(written.get('holdfast_images_at_risk')).toBe(1);

    // Every series of the textfile, scraped: same value, with node_exporter's instance and job.
    const scraped = await prom.until(
      'the textfile scraped',
      async () => {
        const r = await query('{__name__=~"holdfast_.+"}');
        return r.length >= written.size ? r : undefined;
      },
    );
    const got = new Map(
      scraped.map((s) => {
        const { __name__, instance: i, job, ...rest } = s.metric;
        expect([__name__, i, job]).toEqual([__name__, instance, 'node']);
        const labels = Object.entries(rest).map(([k, v]) => `${k}="${v}"`);
        return [`${__name__}${labels.length ? `{${labels.join(',')}}` : ''}`, Number(s.value[1])];
      }),
    );
    expect(got).toEqual(written);
    expect(got.get('holdfast_images{state="k3s"}')).toBe(2);
    expect(got.get('holdfast_check_success')).toBe(1);

    const firing = await prom.until(
      'HoldfastImagesLosePinAtNextStart firing',
      async () => {
        const a = (await alerts()).find((x) => x.labels.alertname === 'HoldfastImagesLosePinAtNextStart' && x.state === 'firing');
        return a;
      },
    );
    expect(firing.labels).toEqual({ alertname: 'HoldfastImagesLosePinAtNextStart', instance, job: 'node', severity: 'warning' });
    expect(firing.annotations.summary).toBe(`1 image(s) on ${instance} lose their pin at the next k3s start`);
    expect(Number(firing.value)).toBe(1);

    // The same evaluation ran every rule of the group: only what the node's state calls for is active.
    const active = (await alerts()).map((a) => a.labels.alertname).sort();
    const fsNearGc = written.get('holdfast_imagefs_used_bytes')! / written.get('holdfast_imagefs_capacity_bytes')! > written.get('holdfast_gc_high_threshold_ratio')! - 0.05;
    expect(active).toEqual(['HoldfastImagesLosePinAtNextStart', 'HoldfastNeededImageAtRisk', ...(fsNearGc ? ['HoldfastImageFsNearGc'] : [])].sort());
    const atRisk = (await alerts()).find((a) => a.labels.alertname === 'HoldfastNeededImageAtRisk')!;
    expect([atRisk.state, atRisk.labels.instance, atRisk.labels.severity, atRisk.annotations.summary]).toEqual(['firing', instance, 'critical', `1 needed image(s) at risk on ${instance}`]);
  });

  it('the pin made durable with the real CLI: the textfile rewritten, the series at 0 and the alert resolved', async () => {
    const pin = await runCli(['pin', 'pm', GONE], { HOLDFAST_HOME: home }, 120_000);
    expect(pin.code, pin.stderr).toBe(0);
    expect(await labelsOf(n, GONE)).toMatchObject({ [CRI]: 'pinned' });
    expect((await labelsOf(n, GONE))[K3S]).toBeUndefined();

    const written = await writeTextfile();
    expect(written.get('holdfast_images_losing_pin_at_next_start')).toBe(0);
    expect(written.get('holdfast_images{state="durable"}')).toBe(1);
    expect(written.get('holdfast_images_at_risk')).toBe(0);
    await prom.until(
      'holdfast_images_losing_pin_at_next_start at 0 in Prometheus',
      async () => {
        const r = await query('holdfast_images_losing_pin_at_next_start');
        return r.length === 1 && r[0]!.value[1] === '0' ? r : undefined;
      },
    );
    expect((await query('holdfast_images{state="durable"}')).map((s) => [s.metric.instance, s.value[1]])).toEqual([[instance, '1']]);
    await prom.until(
      'HoldfastImagesLosePinAtNextStart and HoldfastNeededImageAtRisk resolved',
      async () => ((await alerts()).some((a) => ['HoldfastImagesLosePinAtNextStart', 'HoldfastNeededImageAtRisk'].includes(a.labels.alertname!)) ? undefined : true),
    );
    expect((await query('holdfast_images_at_risk')).map((s) => [s.metric.instance, s.value[1]])).toEqual([[instance, '0']]);
    // The pin Holdfast made is in its audit log and still there: nothing lost.
    expect((await query('holdfast_pins_lost'))[0]!.value[1]).toBe('0');
    expect((await alerts()).map((a) => a.labels.alertname)).not.toContain('HoldfastDurablePinLost');
  });

  it('a check that cannot read containerd fires HoldfastCheckFailing with the kind of error, and the other series go unknown', async () => {
    const written = await writeTextfile(['--socket', path.join(work, 'no.sock')], 1);
    expect([...written.keys()].sort()).toEqual(['holdfast_check_success{kind="containerd_unavailable"}', 'holdfast_check_timestamp_seconds']);
    const failing = await prom.until(
      'HoldfastCheckFailing firing',
      async () => (await alerts()).find((a) => a.labels.alertname === 'HoldfastCheckFailing' && a.state === 'firing'),
    );
    expect(failing.labels).toEqual({ alertname: 'HoldfastCheckFailing', instance, job: 'node', kind: 'containerd_unavailable', severity: 'warning' });
    expect(failing.annotations.summary).toBe(`Holdfast cannot read ${instance} (containerd_unavailable)`);
    // Gone from the textfile, the series are stale in Prometheus: no value, not zero.
    await prom.until('holdfast_images stale', async () => ((await query('holdfast_images')).length === 0 ? true : undefined));
    expect(await query('holdfast_images_losing_pin_at_next_start')).toEqual([]);
  });

  it('promtool test rules: every alert of deploy/alerts.yml fires, and does not, as its unit tests say', () => {
    const out = execFileSync('promtool', ['test', 'rules', path.join(repoRoot, 'test', 'prometheus', 'alerts.test.yml')], { encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
    // The unit tests cover every alert the file defines.
    const defined = [...readFileSync(path.join(repoRoot, 'deploy', 'alerts.yml'), 'utf8').matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]).sort();
    const tested = new Set([...readFileSync(path.join(repoRoot, 'test', 'prometheus', 'alerts.test.yml'), 'utf8').matchAll(/^\s+alertname: (\S+)$/gm)].map((m) => m[1]));
    expect(defined.length).toBe(11);
    expect(defined.filter((a) => !tested.has(a))).toEqual([]);
  });
});
