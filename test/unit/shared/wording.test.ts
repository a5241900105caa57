import { describe, expect, it } from 'vitest';
import { compressionName, pinStateWords, plural, word } from '../../../src/shared/wording';

describe('wording', () => {
  it('counts with the right noun: one image, two images, no "1 images"', () => {
    expect(plural(1, 'image')).toBe('1 image');
    expect(plural(0, 'image')).toBe('0 images');
    expect(plural(2, 'reference')).toBe('2 references');
    expect(plural(3, 'entry')).toBe('3 entries');
    expect(plural(2, 'child', 'children')).toBe('2 children');
    expect(`${plural(1, 'image')} ${word(1, 'loses')} ${word(1, 'its')} pin`).toBe('1 image loses its pin');
    expect(`${plural(4, 'image')} ${word(4, 'loses')} ${word(4, 'its')} pin`).toBe('4 images lose their pin');
  });

  it('calls no compression "uncompressed"', () => {
    expect(compressionName('none')).toBe('uncompressed');
    expect(compressionName('zstd')).toBe('zstd');
  });

  it("names each pin state for the node's distro: the distro's pin by its name", () => {
    expect(pinStateWords('distro', 'RKE2')).toEqual({ label: 'RKE2 pin', description: 'Pinned by RKE2: the pin is removed at the next RKE2 start unless the archive is re-imported.' });
    expect(pinStateWords('distro', 'k3s').label).toBe('k3s pin');
    expect(pinStateWords('durable', 'RKE2')).toEqual({ label: 'Durable', description: 'Pinned for the CRI without a distro label: RKE2 never strips it and kubelet never deletes it.' });
    expect(pinStateWords('none', 'RKE2').label).toBe('Unpinned');
  });
});
