// core/usecases/inventory removalCheckFor: what blocks an archive's removal, the remedy in a
// sentence as data (shared/remedy Prose), never a command line (issue #47, item 2).
import { describe, expect, it } from 'vitest';
import type { ScannedFile } from '../../../../src/core/archives/scan';
import { removalCheckFor } from '../../../../src/core/usecases/inventory';
import { imageRef } from '../../../support/imageRef';

const NODE = "edge $(touch pwned) it's";
const archive: ScannedFile = {
  path: 'x;touch pwned;.tar',
  abs: '/var/lib/rancher/k3s/agent/images/x;touch pwned;.tar',
  kind: 'archive',
  compression: null,
  size: 10,
  mtime: 0,
  walked: 'yes',
  index: { format: 'docker', images: [{ name: 'docker.io/library/app:1', targetDigest: null, targetMediaType: null, platforms: [] }], members: 3, uncompressedBytes: 10 },
};
const complete = async () => ({ complete: true, missing: [] });
const platform = { os: 'linux', architecture: 'amd64' };

describe('removalCheckFor', () => {
  it('leaves the remedy as data: the sentence names no command, the remedy pins the archive', async () => {
    const refs = [imageRef('docker.io/library/app:1', { pin: 'distro' })];
    const check = await removalCheckFor(NODE, archive, refs, platform, complete, 'any', 'RKE2');
    expect(check.allowed).toBe(false);
    expect(check.problems).toEqual([
      { text: 'docker.io/library/app:1 is pinned by RKE2 only: make its pins durable first', remedy: { action: 'pin', node: NODE, archive: archive.path }, end: '.' },
    ]);
    expect(JSON.stringify(check)).not.toContain('holdfast');
  });

  it('says an absent image in plain prose', async () => {
    const check = await removalCheckFor(NODE, archive, [], platform, complete, 'any');
    expect(check.problems).toEqual(['docker.io/library/app:1 is not in containerd: k3s has not imported this archive (yet).']);
  });
});
