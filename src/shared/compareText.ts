// The one text order every list uses (image names, paths, keys): the order of
// `a.localeCompare(b)`, through one shared collator: localeCompare looks its collation up again
// on every call, which a sort of 1,000 image names makes 10,000 times.
// Made on first use: setting up collation costs ~14 ms at a cold start, which a command that
// sorts nothing should not pay.
let collator: Intl.Collator | undefined;

/** Compares two strings as `a.localeCompare(b)` does (negative, zero or positive). */
export function compareText(a: string, b: string): number {
  collator ??= new Intl.Collator();
  return collator.compare(a, b);
}
