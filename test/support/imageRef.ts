// One ImageRef for unit tests: every field a reference always has, filled with plain values, and
// the ones a test is about given. The shape lives here once, so a new field is added in one place.
import type { ImageRef } from '../../src/shared/domain/images';

/** `id`: one hex digit repeated into the manifest digest (and, first digit `c`, the image id). */
export function imageRef(name: string, over: Partial<ImageRef> = {}, id = 'd'): ImageRef {
  return {
    name,
    digest: `sha256:${id.repeat(64)}`,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    imageId: `sha256:${id.repeat(64).replace(/^./, 'c')}`,
    size: 1,
    platforms: ['linux/amd64'],
    createdAt: null,
    labels: {},
    pin: 'none',
    afterRestart: 'unpinned',
    reason: 'Not pinned.',
    archive: null,
    ...over,
  };
}
