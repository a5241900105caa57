import { describe, expect, it } from 'vitest';
import { compressionName, plural, word } from '../../../src/shared/wording';

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
});
