// One session reads each index and manifest once (the blob cache that lets an inventory start
// its reads while the node probe is still under way, and lets the archive checks reuse what
// resolving targets read). Presence is still asked of containerd every time: a manifest deleted
// after the app read it must make the archive unsafe to remove in the same, long-lived session.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { emulateK3sStart } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import { readInventory } from '../../src/core/usecases/inventory';
import { NodeSession } from '../../src/core/node/session';
import { labNodeDef } from './support';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ nodes: ['blobs'] });
});
afterAll(async () => {
  await lab?.stop();
});

it('a cached manifest deleted from the content store makes its archive unsafe again', async () => {
  const n = lab.node('blobs');
  await writeImageArchive(path.join(n.hostImagesDir, 'app.tar'), { format: 'oci', images: [{ name: 'docker.io/library/app:1', platforms: ['linux/amd64', 'linux/arm64'] }] });
  await emulateK3sStart(n);
  const session = await NodeSession.open(labNodeDef(lab, n));
  try {
    // A durable pin by hand (CRI label kept, k3s label gone, on every reference of the image),
    // so that the archive is safe to remove as long as the image is complete.
    const pinned = await readInventory(session);
    const ref = pinned.images.find((i) => i.name === 'docker.io/library/app:1')!;
    expect(ref.platforms).toEqual(['linux/amd64', 'linux/arm64']);
    for (const r of pinned.images.filter((i) => i.imageId === ref.imageId)) {
      await session.containerd.updateImageLabels(r.name, { 'io.cattle.k3s.pinned': null, 'io.cri-containerd.pinned': 'pinned' });
    }
    const first = await readInventory(session);
    const archive = first.archives.find((a) => a.path === 'app.tar')!;
    expect(archive.imported).toBe(true);
    expect(archive.safeToRemove).toBe(true);

    // The index (the image's target) is in the session's cache now; delete it behind its back.
    await n.ctr(['content', 'rm', ref.digest]);
    const again = await readInventory(session);
    const after = again.archives.find((a) => a.path === 'app.tar')!;
    expect(after.safeToRemove).toBe(false);
    expect(after.reason).toContain(ref.digest);
  } finally {
    await session.close();
  }
});
