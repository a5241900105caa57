import { describe, expect, it } from 'vitest';
import { imagesToVerify } from '../../../../src/core/usecases/verifySignatures';

const D1 = 'sha256:' + '1'.repeat(64);
const D2 = 'sha256:' + '2'.repeat(64);
const SIG = 'sha256:' + '3'.repeat(64);
const ID = 'sha256:' + '9'.repeat(64);

describe('imagesToVerify: the node’s images by the digest containerd records', () => {
  it('one image per target digest, named as people know it, its labels recorded on its references only', () => {
    const refs = [
      { name: 'lab.local/app:1', digest: D1 },
      { name: `lab.local/app@${D1}`, digest: D1 },
      { name: ID, digest: D1 },
      { name: 'lab.local/db:5', digest: D2 },
    ];
    expect(imagesToVerify(refs)).toEqual([
      { name: 'lab.local/app:1', refs: ['lab.local/app:1', `lab.local/app@${D1}`], digest: D1 },
      { name: 'lab.local/db:5', refs: ['lab.local/db:5'], digest: D2 },
    ]);
  });

  it('a legacy .sig tag k3s imported is a signature, not an image to verify', () => {
    const refs = [
      { name: 'lab.local/app:1', digest: D1 },
      { name: `lab.local/app:sha256-${'1'.repeat(64)}.sig`, digest: SIG },
    ];
    expect(imagesToVerify(refs).map((i) => i.digest)).toEqual([D1]);
  });

  it('an image known only by CRI’s id record is still checked, with no reference to label', () => {
    expect(imagesToVerify([{ name: ID, digest: D2 }])).toEqual([{ name: ID, refs: [], digest: D2 }]);
  });
});
