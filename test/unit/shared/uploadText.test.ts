// What a cancelled upload says once bytes were on their way: sizes as people read them, never a
// raw byte offset (issue #49).
import { describe, expect, it } from 'vitest';
import { cancelledWhileSending } from '../../../src/shared/uploadText';

describe('a cancelled upload', () => {
  it('says how much the node keeps, of how much, in human sizes', () => {
    const msg = cancelledWhileSending('apps.tar.zst', 'edge1', 179_306_496, 1_288_490_189);
    expect(msg).toBe('The upload of apps.tar.zst to edge1 was cancelled after 171 MiB of 1.2 GiB; the partial file is kept, run it again to resume.');
    expect(msg).not.toMatch(/\d{5,}/);
  });
});
