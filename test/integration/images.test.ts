// `holdfast images` against a real containerd on a lab node with all three pin states on tag
// and digest references, checked against what containerd itself (ctr) reports.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criImages } from '../../lab/cri';
import { emulateK3sStart, repositoryOf } from '../../lab/k3s';
import { writeImageArchive, type WrittenImage } from '../../lab/fixtures';
import { startLab, type Lab } from '../../lab/lab';
import type { ImageRef } from '../../src/shared/domain/images';
import { addLabNode, labDistro, parseCtrImages, runCli, tempHome } from './support';

// The node's distro ($HOLDFAST_LAB_DISTRO: k3s, or RKE2 in the integration-rke2 project).
const D = labDistro();

let lab: Lab;
let home: string;
let written: WrittenImage[] = [];

beforeAll(async () => {
  lab = await startLab({ nodes: ['edge1'] });
  const n = lab.node('edge1');
  const a = await writeImageArchive(path.join(n.hostImagesDir, 'apps.tar.gz'), {
    format: 'docker',
    compression: 'gzip',
    images: [{ name: 'docker.io/library/app-a:1.0' }, { name: 'docker.io/library/app-b:1.0' }],
  });
  const b = await writeImageArchive(path.join(n.hostImagesDir, 'sub', 'multi.tar.zst'), {
    format: 'oci',
    compression: 'zstd',
    images: [{ name: 'registry.local/tools/multi:2.0', platforms: ['linux/amd64', 'linux/arm64'] }],
  });
  written = [...a.images, ...b.images];
  await emulateK3sStart(n);

  // app-a: durable on the tag and on its digest reference; app-b: no pin at all; multi: k3s.
  const a1 = written[0]!;
  const b1 = written[1]!;
  for (const ref of [a1.name, `docker.io/library/app-a@${a1.digest}`]) {
    await n.ctr(['images', 'label', ref, `${D.label}=`]);
  }
  for (const ref of [b1.name, `docker.io/library/app-b@${b1.digest}`]) {
    await n.ctr(['images', 'label', ref, `${D.label}=`, 'io.cri-containerd.pinned=']);
  }

  home = tempHome();
  await addLabNode(lab, n, home, { name: 'edge1' });
});

afterAll(async () => {
  await lab?.stop();
});

describe('holdfast images', () => {
  it('--json agrees with containerd on every reference, digest and label', async () => {
    const r = await runCli(['images', 'edge1', '--json'], { HOLDFAST_HOME: home });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const images = JSON.parse(r.stdout) as ImageRef[];
    const ctr = parseCtrImages(await lab.node('edge1').ctr(['images', 'ls']));

    expect(images.map((i) => i.name).sort()).toEqual(ctr.map((c) => c.ref).sort());
    for (const c of ctr) {
      const mine = images.find((i) => i.name === c.ref)!;
      expect(mine.digest).toBe(c.digest);
      expect(mine.labels).toEqual(c.labels);
    }
    // 3 images x (tag + digest ref + CRI's own sha256:<image id> record)
    expect(images).toHaveLength(9);
  });

  it('reports all three pin states on tag and digest references', async () => {
    const images = JSON.parse((await runCli(['images', 'edge1', '--json'], { HOLDFAST_HOME: home })).stdout) as ImageRef[];
    const pinOf = (name: string) => images.find((i) => i.name === name)?.pin;
    const [a, b, m] = written as [WrittenImage, WrittenImage, WrittenImage];
    expect(pinOf('docker.io/library/app-a:1.0')).toBe('durable');
    expect(pinOf(`docker.io/library/app-a@${a.digest}`)).toBe('durable');
    expect(pinOf('docker.io/library/app-b:1.0')).toBe('none');
    expect(pinOf(`docker.io/library/app-b@${b.digest}`)).toBe('none');
    expect(pinOf('registry.local/tools/multi:2.0')).toBe('distro');
    expect(pinOf(`registry.local/tools/multi@${m.digest}`)).toBe('distro');
  });

  it('says per image what kubelet sees through CRI: durable and k3s pinned, the unpinned one not', async () => {
    const images = JSON.parse((await runCli(['images', 'edge1', '--json'], { HOLDFAST_HOME: home })).stdout) as ImageRef[];
    const cri = await criImages(lab.node('edge1'));
    expect(cri).toHaveLength(3);
    for (const img of cri) {
      const refs = images.filter((i) => i.imageId === img.id);
      expect(refs.length).toBeGreaterThan(0);
      // pinned now (for kubelet) exactly when any reference of the image carries a pin
      expect({ id: img.id, pinned: img.pinned }).toEqual({ id: img.id, pinned: refs.some((r) => r.pin !== 'none') });
      // and CRI's own sha256:<id> record shares the image's fate
      const idRecord = refs.find((r) => r.name === img.id)!;
      const others = refs.filter((r) => r !== idRecord);
      expect(idRecord.afterRestart).toBe(others.some((r) => r.afterRestart === 'pinned') ? 'pinned' : 'unpinned');
    }
  });

  it('gives the image id CRI groups by, the size and the platforms', async () => {
    const images = JSON.parse((await runCli(['images', 'edge1', '--json'], { HOLDFAST_HOME: home })).stdout) as ImageRef[];
    for (const w of written) {
      const refs = images.filter((i) => i.digest === w.digest);
      expect(refs.map((r) => r.name).sort()).toEqual([w.name, `${repositoryOf(w.name)}@${w.digest}`, w.configDigest].sort());
      for (const ref of refs) {
        expect(ref.imageId).toBe(w.configDigest);
        expect(ref.size).toBeGreaterThan(0);
      }
    }
    const multi = images.find((i) => i.name === 'registry.local/tools/multi:2.0')!;
    expect(multi.platforms.sort()).toEqual(['linux/amd64', 'linux/arm64']);
    expect(multi.mediaType).toBe('application/vnd.oci.image.index.v1+json');
    const appA = images.find((i) => i.name === 'docker.io/library/app-a:1.0')!;
    expect(appA.platforms).toEqual(['linux/amd64']);
  });

  it('prints a readable table with a summary', async () => {
    const r = await runCli(['images', 'edge1'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/REFERENCE\s+PIN\s+AFTER RESTART\s+SITE NEED\s+IMAGE ID\s+SIZE\s+PLATFORMS/);
    expect(r.stdout).toMatch(/docker\.io\/library\/app-a:1\.0\s+durable\s+pinned\s+needed, kept/);
    // the 3 sha256:<id> records CRI keeps carry no label of their own: each counts with its image,
    // piped as on a terminal and in every other view (shared/protection pinCounts)
    expect(r.stdout).toContain(`9 references of 3 images: 3 durable, 3 ${D.name}-pinned, 3 unpinned`);
    expect(r.stdout).toMatch(new RegExp(`${written[0]!.configDigest}\\s+durable\\*`));
    // No cluster here: what came from the images dir counts as needed, and the footer says so
    // (a k3s node here has no k3s binary at all; an RKE2 node has RKE2's kubectl, as its agents do).
    expect(r.stdout).toContain(
      D.distro === 'k3s'
        ? "No source of site needs (no k3s or RKE2 kubectl on the node, and no operator's list)"
        : 'No source of site needs (an agent node, and no configured server node of its cluster answered)',
    );
    expect(r.stdout).toMatch(/docker\.io\/library\/app-b:1\.0: apps\.tar\.gz in the images dir brings it; not pinned/);
    expect(r.stdout).toContain('holdfast pin edge1 --needed');
  });

  it("names the node's distro where it means it (the next RKE2 start on an RKE2 node), never the other distro", async () => {
    const other = D.distro === 'k3s' ? 'RKE2' : 'k3s';
    const images = await runCli(['images', 'edge1', '--why'], { HOLDFAST_HOME: home });
    expect(images.code).toBe(0);
    expect(images.stdout).toContain(`${D.name}-pinned`);
    // multi:2.0's archive is in a subfolder, which a node of unknown release may not walk: it is at risk at restart.
    expect(images.stdout).toContain(`loses its pin at the next ${D.name} start`);
    expect(images.stdout).not.toMatch(new RegExp(`\\b${other}[ -](start|pinned)`));
    // multi:2.0 has a digest reference and CRI's record beside its tag: each with its fate at the next start.
    const e = await runCli(['explain', 'edge1', 'registry.local/tools/multi:2.0'], { HOLDFAST_HOME: home });
    expect(e.code).toBe(0);
    expect(e.stdout).toContain(`after the next ${D.name} start`);
    expect(e.stdout).not.toContain(`${other} start`);
  });
});
