// On a server node the inventory (containerd's image list, through the tunnel) and the cluster's
// workloads (the needs script, one exec on the same SSH connection) are read together: the exec
// starts before the image list answers, never after it (issue #46, item 7). Checked by order, not
// by time: the fake node's image list answers only once the needs script has been started, so a
// read that waited for the list would never finish (the test's hang guard fails it).
import { describe, expect, it } from 'vitest';
import { completeNode } from '../../../../src/core/config/nodes';
import { NEEDS_SCRIPT_NAME } from '../../../../src/core/needs/cluster';
import { readImagesInventory } from '../../../../src/core/usecases/inventory';
import { serverAnswer } from '../../../doubles/cluster';
import { FakeNode, FakeSession } from '../../../doubles/node';

const def = completeNode({ name: 'edge', host: '10.0.0.7', identity: '/k/id_ed25519', knownHosts: '/k/known_hosts' });
const APP = 'registry.site.lan/acme/app:1.0';

/** A fake server node whose image list waits for the needs script; records the order of both. */
function serverSession() {
  const node = new FakeNode({
    def,
    info: { containerdVersion: 'v2.1.4', containerdRevision: '', distro: 'k3s', distroVersion: 'v1.34.10+k3s1' },
    images: [],
    files: [],
    disk: { totalBytes: 2 ** 30, freeBytes: 2 ** 29 },
    cluster: serverAnswer({ nodes: [{ name: 'edge', role: 'server', addresses: ['10.0.0.7'] }], deployments: [{ name: 'app', image: APP, node: 'edge' }] }, null),
  });
  const session = new FakeSession(node, def);
  const events: string[] = [];
  let needsStarted!: () => void;
  const started = new Promise<void>((resolve) => (needsStarted = resolve));
  const exec = session.ssh.exec;
  session.ssh.exec = (argv, opts) => {
    if (argv[3] === NEEDS_SCRIPT_NAME) {
      events.push('needs exec started');
      needsStarted();
    }
    return exec(argv, opts);
  };
  const list = session.listBaseImages.bind(session);
  session.listBaseImages = async () => {
    await started;
    const refs = await list();
    events.push('image list answered');
    return refs;
  };
  return { session, events };
}

describe('the needs read on a server node', () => {
  it('starts with the inventory, on the same session, and its answer reaches the verdicts', async () => {
    const { session, events } = serverSession();
    const inv = await readImagesInventory(session);
    expect(events).toEqual(['needs exec started', 'image list answered']);
    expect(inv.cluster.kind).toBe('server');
    expect(inv.needs.basis).toBe('known');
    expect(inv.needs.sources.map((s) => s.label)).toEqual(['kubectl on edge']);
  });
});
