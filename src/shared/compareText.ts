// The one text order every list uses (image names, paths, keys): English collation
// (Intl.Collator('en')), the same on every machine whatever its locale. Hand-written fast path,
// because ICU collation costs ~5 ms of a cold CLI start: for printable ASCII without capitals
// (most image references, digests, paths) English collation is plain lexicographic order over the
// ranks in ASCII_ORDER (each its own primary weight, no contractions, no ignorables), so comparing
// ranks gives the collator's answer exactly (test/unit/shared/compareText.test.ts checks it).
// Anything else (capitals, which tie with lower case at the first level; non-ASCII) goes to the
// collator, made on first need.

/** Printable ASCII without A–Z, in English collation order (read off Intl.Collator('en')). */
export const ASCII_ORDER = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz';

const RANK = new Uint8Array(128).fill(0xff);
for (let i = 0; i < ASCII_ORDER.length; i++) RANK[ASCII_ORDER.charCodeAt(i)] = i;

let collator: Intl.Collator | undefined;

/** Compares two strings as `a.localeCompare(b, 'en')` does (negative, zero or positive). */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    const rx = x < 128 ? RANK[x]! : 0xff;
    const ry = y < 128 ? RANK[y]! : 0xff;
    if (rx === 0xff || ry === 0xff) return slow(a, b);
    if (rx !== ry) {
      // The first difference decides, unless a later character needs the collator's levels.
      for (let j = i + 1; j < a.length; j++) if (a.charCodeAt(j) >= 128 || RANK[a.charCodeAt(j)] === 0xff) return slow(a, b);
      for (let j = i + 1; j < b.length; j++) if (b.charCodeAt(j) >= 128 || RANK[b.charCodeAt(j)] === 0xff) return slow(a, b);
      return rx - ry;
    }
  }
  const rest = a.length > n ? a : b;
  for (let j = n; j < rest.length; j++) if (rest.charCodeAt(j) >= 128 || RANK[rest.charCodeAt(j)] === 0xff) return slow(a, b);
  return a.length - b.length;
}

function slow(a: string, b: string): number {
  collator ??= new Intl.Collator('en');
  return collator.compare(a, b);
}

/** Whether every character of s has its own rank (compareText's fast path holds for it). */
function ranked(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || RANK[c] === 0xff) return false;
  }
  return true;
}

/**
 * items sorted by compareText of text(item), as a new array. Checks each text for the fast path
 * once, not on every comparison (compareText reads both strings to their ends each time): the
 * 5,000 image names of a large node were sorted in 17 ms, most of it those re-reads (bench:ui).
 */
export function sortByText<T>(items: readonly T[], text: (item: T) => string): T[] {
  const keys = items.map(text);
  const fast = keys.map(ranked);
  const order = keys.map((_, i) => i);
  order.sort((i, j) => {
    const a = keys[i]!;
    const b = keys[j]!;
    if (!fast[i] || !fast[j]) return compareText(a, b);
    const n = Math.min(a.length, b.length);
    for (let k = 0; k < n; k++) {
      const d = RANK[a.charCodeAt(k)]! - RANK[b.charCodeAt(k)]!;
      if (d !== 0) return d;
    }
    return a.length - b.length;
  });
  return order.map((i) => items[i]!);
}
