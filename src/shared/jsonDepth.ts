// How deeply a JSON text nests its objects and arrays, read without parsing it: JSON.parse of a
// few MiB of brackets builds millions of objects (a 3.8 MiB .cache.json cost 316 MiB, issue #51)
// before any check on the result could run. One pass over the characters, strings skipped.

/**
 * The deepest nesting of `{` and `[` in `text` (0 for a scalar), counting only until it passes
 * `stopAbove` (then that + 1 is returned at once). Not a validator: JSON.parse still decides
 * whether the text is JSON.
 */
export function jsonNestingDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character (\" among them)
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
