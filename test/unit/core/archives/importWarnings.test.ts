// importWarnings on indexes as readArchiveIndex gives them (the real-tool archives are checked
// end to end in test/integration/corpus.test.ts): one finding per platform k3s skips, unnamed
// image and bare-tag name; nothing for a plain archive.
import { describe, expect, it } from 'vitest';
import type { ArchiveImage, ArchiveIndex } from '../../../../src/core/archives/format/readIndex';
import { importWarnings } from '../../../../src/core/archives/importWarnings';

const id = (c: string) => `sha256:${c.repeat(64)}`;
const platform = (p: string, missing: string[] = []) => ({ platform: p, manifestDigest: id('1'), configDigest: id('2'), layers: [], missing });
const index = (format: 'oci' | 'docker', images: ArchiveImage[]): ArchiveIndex => ({ format, images, members: 1, uncompressedBytes: 1 });
const img = (name: string | null, platforms = [platform('linux/amd64')]): ArchiveImage => ({ name, targetDigest: id('3'), targetMediaType: null, platforms });

describe('importWarnings', () => {
  it('says nothing about a complete, named archive', () => {
    expect(importWarnings(index('oci', [img('localhost/app:1'), img('registry.example/x@' + id('4'))]))).toEqual([]);
    expect(importWarnings(index('docker', [img('docker.io/library/app:1')]))).toEqual([]);
  });

  it('names the platform a partial export lacks, and what k3s imports instead', () => {
    const [w, ...rest] = importWarnings(index('oci', [img('localhost/m:1', [platform('linux/amd64'), platform('linux/arm64', [id('5'), id('6')])])]));
    expect(rest).toEqual([]);
    expect(w).toMatch(/^localhost\/m:1: linux\/arm64 is listed but its blobs are not in the archive \(2 missing, e\.g\. sha256:555555555555…/);
    expect(w).toContain('k3s imports linux/amd64 and skips linux/arm64');
  });

  it('an unnamed image is not kept; a bare tag is no usable name', () => {
    const ws = importWarnings(index('oci', [img(null), img('1.0')]));
    expect(ws).toHaveLength(2);
    expect(ws[0]).toMatch(/^the unnamed image sha256:222222222222… has no name in the archive: k3s imports its content but creates no image/);
    expect(ws[1]).toMatch(/^1\.0 is only a tag, not an image name: k3s stores the image under the bare name "1\.0"/);
  });
});
