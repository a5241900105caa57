// The lab reads labels back from `ctr images ls` to check what Holdfast wrote. Holdfast's
// signature reason holds spaces and a comma ("signed, but not by any given key"): it must read
// back whole, and the labels around it too.
import { describe, expect, it } from 'vitest';
import { parseCtrImagesLs } from '../../../lab/k3s';

const HEAD = 'REF                     TYPE                                        DIGEST                                                                  SIZE      PLATFORMS   LABELS';
const DIGEST = `sha256:${'c'.repeat(64)}`;

describe('parseCtrImagesLs', () => {
  it('a label value with spaces and commas reads back whole', () => {
    const line = `lab.local/rsa-bundle:1  application/vnd.oci.image.manifest.v1+json  ${DIGEST} 2.1 KiB   linux/amd64 io.cri-containerd.pinned=pinned,io.holdfast.signature.reason=signed, but not by any given key,io.holdfast.signature.verified=false`;
    expect(parseCtrImagesLs(`${HEAD}\n${line}\n`)).toEqual([
      {
        name: 'lab.local/rsa-bundle:1',
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: DIGEST,
        labels: { 'io.cri-containerd.pinned': 'pinned', 'io.holdfast.signature.reason': 'signed, but not by any given key', 'io.holdfast.signature.verified': 'false' },
      },
    ]);
  });

  it('no labels: `-`', () => {
    expect(parseCtrImagesLs(`${HEAD}\nlab.local/a:1  application/vnd.oci.image.manifest.v1+json  ${DIGEST} 0.0 B     linux/amd64 -\n`)[0]!.labels).toEqual({});
  });
});
