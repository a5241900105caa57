// The one text order every list uses (image names, paths, keys): the order of
// `a.localeCompare(b)`, through one shared collator. localeCompare sets up ICU's collation on
// every call: 1,000 image names took about 10 ms to sort that way in a cold CLI, 1 ms this way.
const collator = new Intl.Collator();

/** Compares two strings as `a.localeCompare(b)` does (negative, zero or positive). */
export const compareText: (a: string, b: string) => number = collator.compare;
