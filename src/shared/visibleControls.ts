// Text a node supplies (image names, file names, labels, error output) made harmless for every
// output that shows it: the terminal, the CSV and HTML reports and the app. Control characters
// could recolour or clear a terminal, retitle its window or plant an OSC 8 link (in a CSV someone
// `cat`s too); the Unicode bidirectional overrides and isolates make a line read differently than
// it is (U+202E turns `evil.io/bidi‮gnp.exe:1` into `…1:exe.png`); a line feed splits one name
// into two. Each becomes a visible `\uXXXX`: nothing is dropped, so two names stay distinct.

// C0 controls (ESC, BEL, CR, backspace…), DEL, C1 controls (U+0080–U+009F: 8-bit CSI/OSC), the
// Arabic letter mark, LRM/RLM, the bidi embeddings/overrides U+202A–U+202E and isolates U+2066–U+2069.
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_KEEP_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Every character above shown as `\uXXXX`. Written as a JSON escape, the result is still valid
 * (and equal) JSON when applied to JSON output. `keepLines` keeps line feeds and tabs (for whole
 * blocks of text that Holdfast laid out itself).
 */
export function visibleControls(s: string, opts: { keepLines?: boolean } = {}): string {
  return s.replace(opts.keepLines ? UNSAFE_KEEP_LINES : UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
