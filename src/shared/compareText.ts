// The one text order every list uses (image names, paths, keys): the order of
// `a.localeCompare(b)`, through one shared collator: localeCompare looks its collation up again
// on every call, which a sort of 1,000 image names makes 10,000 times.
const collator = new Intl.Collator();

/** Compares two strings as `a.localeCompare(b)` does (negative, zero or positive). */
export const compareText: (a: string, b: string) => number = collator.compare;
