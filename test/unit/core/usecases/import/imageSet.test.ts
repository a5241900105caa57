// What one import's images are on a node, and which containerd events concern them.
import { describe, expect, it } from 'vitest';
import { concerns, digestRefFor } from '../../../../../src/core/usecases/import/imageSet';
import type { ArchiveImage } from '../../../../../src/core/archives/format/readIndex';

const img = (name: string | null): ArchiveImage => ({ name, targetDigest: null, targetMediaType: null, platforms: [] });
const D = 'sha256:' + 'd'.repeat(64);
const ID = 'sha256:' + 'e'.repeat(64);

describe('import image set', () => {
  it('names the digest reference k3s adds after its labels (PR #13221)', () => {
    expect(digestRefFor('registry.local/site/app:3', D)).toBe(`registry.local/site/app@${D}`);
    expect(digestRefFor('localhost:5000/app:3', D)).toBe(`localhost:5000/app@${D}`);
    expect(digestRefFor(`registry.local/site/app@${D}`, D)).toBeNull();
  });

  it('takes events about the names, their digest and extra-registry references and CRI\'s record; not others', () => {
    const c = concerns([img('registry.local/site/app:3')], [ID]);
    expect(c('registry.local/site/app:3')).toBe(true);
    expect(c(`registry.local/site/app@${D}`)).toBe(true);
    expect(c(`mirror.local:5000/site/app@${D}`)).toBe(true);
    expect(c('mirror.local:5000/site/app:3')).toBe(true);
    expect(c(ID)).toBe(true);
    expect(c('registry.local/site/other:3')).toBe(false);
    expect(c('sha256:' + 'f'.repeat(64))).toBe(false);
  });
});
