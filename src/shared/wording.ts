// Counted nouns and a few names, worded once for the CLI and the app, so neither ever prints
// "1 images" or a compression called "none".
import type { Compression } from './domain';

// Nouns whose plural is not noun + "s"; anything else takes an "s".
const IRREGULAR: Record<string, string> = {
  entry: 'entries',
  its: 'their',
  is: 'are',
  was: 'were',
  has: 'have',
  loses: 'lose',
};

/** The noun for n of it: word(1, 'image') is "image", word(2, 'image') "images". */
export function word(n: number, singular: string, pluralForm?: string): string {
  if (n === 1) return singular;
  return pluralForm ?? IRREGULAR[singular] ?? `${singular}s`;
}

/** n and its noun: plural(1, 'image') is "1 image", plural(3, 'entry') "3 entries". */
export function plural(n: number, singular: string, pluralForm?: string): string {
  return `${n} ${word(n, singular, pluralForm)}`;
}

/** A compression as people say it: no compression is "uncompressed", not "none". */
export function compressionName(c: Compression): string {
  return c === 'none' ? 'uncompressed' : c;
}
