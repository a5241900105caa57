// rm-archive's path: an absolute path inside the node's images dir means the same file as its
// relative name; one outside is refused naming the images dir (src/core/archives/imagesDirPath.ts).
import { describe, expect, it } from 'vitest';
import { inImagesDir } from '../../../../src/core/archives/imagesDirPath';
import { HoldfastError } from '../../../../src/core/errors';

const DIR = '/var/lib/rancher/k3s/agent/images';

describe('inImagesDir', () => {
  it('maps an absolute path inside the images dir to its relative name; a relative one is kept', () => {
    expect(inImagesDir(DIR, `${DIR}/app.tar`, 'n1')).toBe('app.tar');
    expect(inImagesDir(`${DIR}/`, `${DIR}//apps/./web.tar.zst`, 'n1')).toBe('apps/web.tar.zst');
    expect(inImagesDir(DIR, 'apps/web.tar.zst', 'n1')).toBe('apps/web.tar.zst');
  });

  it.each([`${DIR}`, `${DIR}/`, `${DIR}/../app.tar`, '/tmp/app.tar', `${DIR}-old/app.tar`])('refuses %s, naming the images dir', (p) => {
    let e: unknown;
    try {
      inImagesDir(DIR, p, 'n1');
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(HoldfastError);
    expect((e as HoldfastError).code).toBe('INVALID_INPUT');
    expect((e as HoldfastError).message).toBe(`${p} is not in the images dir of n1 (${DIR})`);
  });
});
