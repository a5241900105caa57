// kubelet's own settings in the verdicts, end to end (issue #46, items 3 and 5), over a lab node
// whose stand-in k3s is v1.35 (max-age GC GA, credential verification beta and on):
// - max-age GC (KEP-4210), `kubelet-arg: image-maximum-gc-age=168h` in k3s's config.yaml: every
//   unpinned image goes within one age after kubelet's last start, whatever the disk usage;
// - credential verification (KEP-2535), `imagePullCredentialsVerificationPolicy: AlwaysVerify` in
//   the drop-in dir k3s gives its kubelet (<data-dir>/agent/etc/kubelet.conf.d), then in a kubelet
//   config file a `config=` kubelet-arg names: kubelet must pull an imported image to verify it.
// What kubelet sees is checked on the node (CRI's pinned flag); what Holdfast says is the CLI's
// real output text.
import { SEED_SAMPLE_IMAGE, writeSeedArchive } from '../../lab/seed.ts';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { criImageStatus, criPinned } from '../../lab/cri';
import { workloadList } from '../../lab/workloads';
import type { DiskPicture } from '../../src/shared/diskPicture';
import type { ImageRef } from '../../src/shared/domain/images';
import { addLabNode, criPinsHonoured, etcRancher, runCli, tempHome } from './support';

const K3S_RELEASE = 'v1.35.1+k3s1';
const SAMPLE = SEED_SAMPLE_IMAGE;
/** A Deployment scaled to 0 uses it: imported with ctr, never pinned. */
const WEB = 'docker.io/library/holdfast-web:1.0';
const DROP_IN = '/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf';

let lab: Lab;
let home: string;
let node: LabNodeHandle;
let honoured: boolean;

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { HOLDFAST_HOME: home });
  if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The node's drop-in dir as the host sees it (its /var/lib/rancher is bind-mounted from the lab). */
const dropIn = (text: string | null) => {
  const file = path.join(node.hostImagesDir, '..', 'etc', 'kubelet.conf.d', '50-site.conf');
  if (text === null) return rmSync(file, { force: true });
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
};

/** The lines `images` prints for the needed images at risk (not on a terminal: the whole reason). */
const atRiskLines = (out: string) => out.split('\n').filter((l) => l.startsWith('  docker.io/'));

beforeAll(async () => {
  lab = await startLab({ nodes: ['kp1'] });
  home = tempHome();
  node = lab.node('kp1');
  honoured = await criPinsHonoured(node);
  // The seed archive imported and pinned by a k3s start; the archive stays, so the pin holds.
  await writeSeedArchive(node.hostImagesDir);
  expect((await emulateK3sStart(node)).failed).toEqual([]);
  // WEB as an operator's `ctr images import` puts it there: no pin at all.
  const file = path.join(lab.dir, 'web.tar');
  await writeImageArchive(file, { format: 'docker', images: [{ name: WEB }] });
  await node.ctr(['images', 'import', ...(node.containerdLine === '2' ? ['--local'] : []), file]);
  for (let i = 0; i < 100 && !(await criImageStatus(node, WEB)); i++) await new Promise((r) => setTimeout(r, 50));
  const digests = Object.fromEntries((await listImages(node)).map((i) => [i.name, i.digest]));
  const fixture = workloadList({
    nodes: [{ name: 'kp1', role: 'server', addresses: ['10.0.0.1'], kubeletVersion: K3S_RELEASE }],
    deployments: [
      { namespace: 'default', name: 'sample', image: SAMPLE, replicas: 1, node: 'kp1' },
      { namespace: 'default', name: 'web', image: WEB, replicas: 0 },
    ],
    digests,
  });
  await node.installDistroBinary('k3s', K3S_RELEASE, { workloads: fixture });
  await addLabNode(lab, node, home);
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

describe("kubelet's max-age GC and credential verification on a v1.35 node", () => {
  it('kubelet sees the seed image pinned and the ctr-imported one unpinned (what the verdicts rest on)', async () => {
    expect(await labelsOf(node, WEB)).not.toHaveProperty('io.cri-containerd.pinned');
    expect(await criPinned(node, WEB, false)).toBe(false);
    expect(await criPinned(node, SAMPLE, honoured)).toBe(honoured);
  });

  it("defaults (no max-age, NeverVerifyPreloadedImages): the unpinned image is at risk as before, the pinned one is kept", async () => {
    await etcRancher(node, { 'k3s/config.yaml': 'write-kubeconfig-mode: "0600"\n' });
    dropIn(null);
    const out = await cli(['images', 'kp1']);
    // (each Deployment's ReplicaSet, and the sample's pod, need the image too: "and N more")
    expect(atRiskLines(out)).toEqual([
      ...(honoured ? [] : [`  ${SAMPLE}: needed by Deployment default/sample (running) and 2 more; pinned, but kubelet does not see the pin on this containerd: it may delete it`]),
      `  ${WEB}: needed by Deployment default/web (scaled to 0) and 1 more; not pinned: kubelet may delete it`,
    ]);
    expect(out).not.toContain('re-verifies');
    const disk = JSON.parse(await cli(['disk', 'kp1', '--json'])) as DiskPicture;
    expect(disk.policy.maxAge).toBeNull();
    expect(disk.policy.credentialVerification).toEqual({ policy: 'NeverVerifyPreloadedImages', allowlist: [], source: "kubelet's default in 1.35" });
  });

  it('max-age in config.yaml and AlwaysVerify in the drop-in dir: both images at risk, with when and what to do', async () => {
    await etcRancher(node, { 'k3s/config.yaml': 'token: lab-s3cret-join-token\nkubelet-arg:\n  - image-maximum-gc-age=168h\n' });
    dropIn('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimagePullCredentialsVerificationPolicy: AlwaysVerify\n');
    const out = await cli(['images', 'kp1']);
    const verify = 'kubelet will try to pull it to verify credentials; offline the pod will not start';
    expect(atRiskLines(out)).toEqual([
      honoured
        ? `  ${SAMPLE}: needed by Deployment default/sample (running) and 2 more; ${verify}`
        : `  ${SAMPLE}: needed by Deployment default/sample (running) and 2 more; pinned, but kubelet does not see the pin on this containerd: it may delete it; ${verify}`,
      `  ${WEB}: needed by Deployment default/web (scaled to 0) and 1 more; not pinned: kubelet's max-age GC deletes it within 7 days after kubelet's last start; ${verify}`,
    ]);
    expect(out).toContain(
      `kubelet re-verifies images it did not pull (imagePullCredentialsVerificationPolicy: AlwaysVerify, ${DROP_IN}): set it to NeverVerifyPreloadedImages ` +
        '(or keep NeverVerifyAllowlistedImages and add docker.io/library/holdfast-sample, docker.io/library/holdfast-web to preloadedImagesVerificationAllowlist), then restart k3s.',
    );
    // inspect says the same under the node, with the same remedy
    const inspect = await cli(['inspect', 'kp1']);
    expect(inspect).toContain(`- ${SAMPLE}: needed by Deployment default/sample (running) and 2 more;`);
    expect(inspect).toContain('→ kubelet re-verifies images it did not pull (imagePullCredentialsVerificationPolicy: AlwaysVerify,');
    // JSON carries the verdict for scripts
    const refs = JSON.parse(await cli(['images', 'kp1', '--json'])) as ImageRef[];
    expect(refs.find((r) => r.name === SAMPLE)?.need).toMatchObject({ verdict: honoured ? 'unverified' : 'unprotected', atRisk: true });

    const disk = await cli(['disk', 'kp1']);
    expect(disk).toContain("kubelet's max-age GC: deletes every unpinned image no container used for 7 days (image-maximum-gc-age=168h, /etc/rancher/k3s/config.yaml), whatever the disk usage.");
    expect(disk).toContain("Max-age GC — kubelet's max-age GC (image-maximum-gc-age=168h, /etc/rancher/k3s/config.yaml) deletes every unpinned image no container used for 7 days, whatever the disk usage:");
    expect(disk).toContain("within 7 days after kubelet's last start (it does not keep last use across restarts). Pinned images are exempt.");
    expect(disk).toContain(`WARNING: `);
    expect(disk).toContain('(holdfast pin kp1 --needed) now: the disk need not fill.');
    expect(disk).not.toContain('lab-s3cret');
    const picture = JSON.parse(await cli(['disk', 'kp1', '--json'])) as DiskPicture;
    expect(picture.forecast?.maxAge?.keys).toContain(picture.images!.find((i) => i.refs.includes(WEB))!.key);
    expect(picture.forecast?.maxAge?.keys.includes(picture.images!.find((i) => i.refs.includes(SAMPLE))!.key)).toBe(!honoured);
  });

  it('a kubelet config file that `config=` names (a second read) and an allow-list that covers the images: not re-verified', async () => {
    await etcRancher(node, {
      'k3s/config.yaml': 'kubelet-arg:\n  - config=/etc/rancher/k3s/kubelet.yaml\n',
      'k3s/kubelet.yaml': 'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist:\n  - docker.io/library/*\n',
    });
    dropIn(null);
    const out = await cli(['images', 'kp1']);
    expect(out).not.toContain('verify credentials');
    const picture = JSON.parse(await cli(['disk', 'kp1', '--json'])) as DiskPicture;
    expect(picture.policy.credentialVerification).toEqual({ policy: 'NeverVerifyAllowlistedImages', allowlist: ['docker.io/library/*'], source: '/etc/rancher/k3s/kubelet.yaml' });
    // …and one that does not cover them: both flagged again.
    await etcRancher(node, {
      'k3s/config.yaml': 'kubelet-arg:\n  - config=/etc/rancher/k3s/kubelet.yaml\n',
      'k3s/kubelet.yaml': '{"imagePullCredentialsVerificationPolicy": "NeverVerifyAllowlistedImages", "preloadedImagesVerificationAllowlist": ["registry.example.com/*"]}\n',
    });
    expect(atRiskLines(await cli(['images', 'kp1'])).every((l) => l.endsWith('offline the pod will not start'))).toBe(true);
  });
});
