// Counted nouns and a few names, worded once for the CLI and the app, so neither ever prints
// "1 images", a compression called "none", or k3s's pin on an RKE2 node.
import type { Compression } from './domain/archives';
import type { PinState } from './domain/pins';

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

/**
 * A pin state's name and what it means on a node whose distro is `who` ("k3s", "RKE2": ./distro
 * distroDisplayName). `who` is required: a view that forgot it once called an RKE2 pin "k3s pin".
 * The app's pin badges (Images tab, pin preview, log) read it; the CLI's PIN column prints the
 * short form (src/cli/pinText).
 */
export function pinStateWords(pin: PinState, who: string): { label: string; description: string } {
  switch (pin) {
    case 'durable':
      return { label: 'Durable', description: `Pinned for the CRI without a distro label: ${who} never strips it and kubelet never deletes it.` };
    case 'distro':
      return { label: `${who} pin`, description: `Pinned by ${who}: the pin is removed at the next ${who} start unless the archive is re-imported.` };
    case 'none':
      return { label: 'Unpinned', description: 'Not pinned: kubelet image garbage collection may delete it.' };
  }
}
