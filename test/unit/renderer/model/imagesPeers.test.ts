// The images table's Peers column (src/renderer/model/images.ts): each row carries its image's
// verdict — servable when one of its references is (shared/embeddedRegistry imagePeers) — and
// each reference its own, as the core judged them.
import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../../src/shared/domain/images';
import { peerServing, type EmbeddedRegistryConfig } from '../../../../src/shared/embeddedRegistry';
import { groupImages } from '../../../../src/renderer/model/images';
import { imageRef } from '../../../support/imageRef';

const D = (c: string) => `sha256:${c.repeat(64)}`;
const ON: EmbeddedRegistryConfig = { enabled: 'on', from: '/etc/rancher/k3s/config.yaml', mirrors: ['docker.io'], notes: [] };

function refs(names: { name: string; digest: string; imageId: string }[], labels: Map<string, Record<string, string>>): ImageRef[] {
  const serving = peerServing(names, ON, labels);
  return names.map((n) => imageRef(n.name, { digest: n.digest, imageId: n.imageId, ...(serving.get(n.name) ? { peers: serving.get(n.name) } : {}) }));
}

describe('groupImages: peers', () => {
  const labels = new Map([
    [D('a'), { 'containerd.io/distribution.source.docker.io': 'library/app' }],
    [D('b'), { 'containerd.io/distribution.source.docker.io': 'library/tool' }],
  ]);
  const groups = groupImages(
    refs(
      [
        { name: 'docker.io/library/app:1.0', digest: D('a'), imageId: D('1') },
        { name: `docker.io/library/app@${D('a')}`, digest: D('a'), imageId: D('1') },
        { name: D('1'), digest: D('a'), imageId: D('1') },
        // No digest reference: the embedded registry does not advertise it.
        { name: 'docker.io/library/tool:2.0', digest: D('b'), imageId: D('2') },
      ],
      labels,
    ),
  );
  const byName = (n: string) => groups.find((g) => g.primaryName === n)!;

  it('an image with its digest reference and source label is servable', () => {
    const app = byName('docker.io/library/app:1.0');
    expect(app.peers).toMatchObject({ servable: true, brief: 'peers can pull it' });
    // CRI's own record has no verdict of its own; the tag and digest reference have theirs.
    expect(app.refs.map((r) => r.peers?.servable)).toEqual([true, true, undefined]);
  });

  it('an image without its digest reference says why not', () => {
    const tool = byName('docker.io/library/tool:2.0');
    expect(tool.peers).toMatchObject({ servable: false, block: 'no-digest-ref', brief: 'no digest reference' });
    expect(tool.peers!.reason).toContain(`docker.io/library/tool@${D('b')} is missing`);
  });

  it('no verdict when the core sent none (the registry does not apply)', () => {
    const plain = groupImages(refs([{ name: 'docker.io/library/app:1.0', digest: D('a'), imageId: D('1') }], labels).map(({ peers: _, ...r }) => r));
    expect(plain[0]!.peers).toBeNull();
  });
});
