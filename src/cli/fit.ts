// Fitting output to the terminal it prints to: tables narrowed to its width (long references and
// paths elided in the middle, prose wrapped, the least important columns hidden last) and lines
// of prose wrapped under their own indent. Pure: the width is an argument; src/cli/screen.ts
// decides when there is one (stdout is a terminal and --wide was not given).
//
// Widths are measured with string-width (what cli-table3 measures unfitted tables with): wide
// characters count twice, so a fitted line is as wide on screen as it was measured.
import stringWidth from 'string-width';

/** Calls of textWidth so far: tests check that laying out a table measures each line a bounded number of times. */
export const widthCalls = { count: 0 };

export const textWidth = (s: string): number => {
  widthCalls.count++;
  return stringWidth(s);
};

const ELLIPSIS = '…';

/** The longest start (or end) of `s` at most `w` columns wide. */
function take(s: string, w: number, fromEnd = false): string {
  const chars = Array.from(s);
  if (fromEnd) chars.reverse();
  let used = 0;
  let n = 0;
  for (const c of chars) {
    const cw = stringWidth(c);
    if (used + cw > w) break;
    used += cw;
    n++;
  }
  const kept = chars.slice(0, n);
  return (fromEnd ? kept.reverse() : kept).join('');
}

/** `s` cut to `w` columns at its end, with `…` saying so. */
export function truncateEnd(s: string, w: number): string {
  if (textWidth(s) <= w) return s;
  if (w <= 0) return '';
  return take(s, w - 1) + ELLIPSIS;
}

/** `s` cut to `w` columns in its middle: a third of the start and the rest of its end stay. */
export function elideMiddle(s: string, w: number): string {
  if (textWidth(s) <= w) return s;
  if (w <= 1) return take(ELLIPSIS, w);
  const room = w - 1;
  const head = Math.floor(room / 3);
  return take(s, head) + ELLIPSIS + take(s, room - head, true);
}

/** A '/'-separated name's segments, each with its separator: 'docker.io/', 'library/', 'app' ('/var/' keeps a leading '/'). */
const segmentsOf = (s: string): string[] => s.match(/^\/?[^/]*\/?|[^/]*\/?/g)?.filter((p) => p !== '') ?? [s];

/**
 * A '/'-separated name cut at whole segments to `w` columns: the first segment (the registry, the
 * top directory) and the last (the image name, the file) stay, then as many segments next to them
 * as fit, the end first; `…/` marks what is gone. null when the first and last do not fit together.
 */
function elideSegments(s: string, w: number): string | null {
  const parts = segmentsOf(s);
  if (parts.length < 3) return null;
  const joined = (from: number, to: number) => parts.slice(from, to).join('');
  const fits = (h: number, t: number) => textWidth(joined(0, h)) + 2 + textWidth(joined(parts.length - t, parts.length)) <= w;
  if (!fits(1, 1)) return null;
  let head = 1;
  let tail = 1;
  while (head + tail + 1 < parts.length && fits(head, tail + 1)) tail++;
  while (head + tail + 1 < parts.length && fits(head + 1, tail)) head++;
  return `${joined(0, head)}${ELLIPSIS}/${joined(parts.length - tail, parts.length)}`;
}

/**
 * The first segment whole (the registry, the top directory), `…`, and as much of the end as fits
 * (nothing rather than a scrap of under 6 columns); null without `least` columns for the end.
 */
function keepFirst(s: string, w: number, least: number): string | null {
  const first = segmentsOf(s)[0]!;
  const room = w - textWidth(first) - 1;
  if (first === s || room < Math.max(0, least)) return null;
  return `${first}${ELLIPSIS}${room < 6 ? '' : take(s.slice(first.length), room, true)}`;
}

/**
 * A path (or any '/'-separated name) cut to `w` columns in its middle: at whole segments
 * (`/var/…/agent/images`), else its first segment and as much of its end as fit, else a third of
 * its start and the rest of its end.
 */
export function elidePath(s: string, w: number): string {
  if (textWidth(s) <= w) return s;
  return elideSegments(s, w) ?? (textWidth(segmentsOf(s)[0]!) <= w / 2 ? keepFirst(s, w, 6) : null) ?? elideMiddle(s, w);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** 64 hex digits cut to `room` columns: the start (12 digits, as IMAGE ID shows them, when it fits) and the last 4. */
function shortHex(hex: string, room: number): string {
  if (room >= hex.length) return hex;
  const head = Math.max(1, room - 5);
  return `${hex.slice(0, head)}${ELLIPSIS}${hex.slice(-4)}`;
}

/** The narrowest a digest's digits get: `5ad44c…1e8d`. */
const MIN_HEX = 11;
const AT_SHA = '@sha256:';

/**
 * An image reference cut to `w` columns so that what identifies it stays, in this order: its end
 * (the tag; a digest reference's `@sha256:` with the digest's first and last digits), the
 * registry, the image's name, the path between. `docker.io/library/holdfast-sample@sha256:5ad44c…1e8d`,
 * `docker.io/…/holdfast-sample:1.0`, `registry.example.com:5000/…collector:2.5.1-build.1234`;
 * CRI's `sha256:<id>` record keeps the 12 digits IMAGE ID shows: `sha256:80d331785726…e551`.
 * A name too odd for that (a registry wider than the column) is cut in its middle.
 */
export function elideReference(ref: string, w: number): string {
  if (textWidth(ref) <= w) return ref;
  const id = /^sha256:([0-9a-f]{64})$/.exec(ref);
  if (id) return w >= 'sha256:'.length + MIN_HEX ? `sha256:${shortHex(id[1]!, w - 'sha256:'.length)}` : elideMiddle(ref, w);
  const at = ref.lastIndexOf(AT_SHA);
  const hex = at > 0 ? ref.slice(at + AT_SHA.length) : '';
  const digest = at > 0 && HEX64.test(hex);
  const colon = ref.lastIndexOf(':');
  const tagAt = !digest && colon > ref.lastIndexOf('/') ? colon : -1;
  const repo = digest ? ref.slice(0, at) : tagAt > 0 ? ref.slice(0, tagAt) : ref;
  // The end, given the columns the repository leaves it.
  const end = (room: number) => (digest ? `${AT_SHA}${shortHex(hex, room - AT_SHA.length)}` : ref.slice(repo.length));
  const endWidth = digest ? AT_SHA.length + MIN_HEX : textWidth(ref) - textWidth(repo);
  // The whole repository and a shorter digest; else the repository shortened, the end kept.
  if (digest && w - textWidth(repo) >= endWidth) return repo + end(w - textWidth(repo));
  // (a digest reference keeps its registry even with little or nothing of the name: its tag's row names it)
  const shortRepo = elideSegments(repo, w - endWidth) ?? keepFirst(repo, w - endWidth, digest ? 0 : 6);
  if (shortRepo !== null) return shortRepo + end(w - textWidth(shortRepo));
  return elideMiddle(ref, w);
}

/**
 * Prose wrapped at spaces to `first` columns on its first line and `w` on the others; a word
 * longer than a line is cut across lines. Returns the lines (at least one).
 */
export function wrapWords(s: string, w: number, first = w): string[] {
  const out: string[] = [];
  const room = () => Math.max(1, out.length === 0 ? first : w);
  let line = '';
  for (const word of s.split(' ')) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (textWidth(candidate) <= room()) {
      line = candidate;
      continue;
    }
    if (line !== '') out.push(line);
    let rest = word;
    while (textWidth(rest) > room()) {
      const piece = take(rest, room());
      out.push(piece);
      rest = rest.slice(piece.length);
    }
    line = rest;
  }
  out.push(line);
  return out;
}

// A list item's marker: its wrapped lines go under the item's text, not under the marker.
// (• and → written as escapes: the CLI bundle must stay ASCII, and esbuild leaves regular expressions as written.)
const MARKER = /^(\s*)((?:[-!\u2022\u2192]|\d+\.)\s+)?/;

/**
 * One line of prose wrapped to `w` columns: the next lines keep its indent (and go under the text
 * of a list item: `- `, `1. `, `! `, `→ `), plus two more columns for a plain line, so a wrapped
 * line reads as one. A line that fits is returned as it is.
 */
export function wrapLine(line: string, w: number): string {
  if (textWidth(line) <= w) return line;
  const m = MARKER.exec(line)!;
  const lead = m[0];
  const hang = ' '.repeat(textWidth(m[1]!) + (m[2] ? textWidth(m[2]) : 2));
  // Very narrow: no room to indent.
  const indent = textWidth(hang) > w / 2 ? '' : hang;
  return wrapWords(line.slice(lead.length), w - textWidth(indent), w - textWidth(lead))
    .map((l, n) => (n === 0 ? lead : indent) + l)
    .map((l) => l.trimEnd())
    .join('\n');
}

/** Every line of a block wrapped (wrapLine). */
export const wrapText = (text: string, w: number): string =>
  text
    .split('\n')
    .map((l) => wrapLine(l, w))
    .join('\n');

// ---------------------------------------------------------------------------------------------
// Tables

/**
 * How a column gives way when the table is wider than the terminal:
 * - ref:   image references and paths, elided in the middle (elideReference);
 * - text:  prose, wrapped onto more lines;
 * - fixed: short values (a state, a size, an id), never shortened while the terminal allows.
 */
export type ColumnKind = 'ref' | 'text' | 'fixed';

export interface ColumnFit {
  kind?: ColumnKind;
  /** The narrowest a ref or text column gets before a column is hidden (never below its heading). */
  min?: number;
  /** The width a ref or text column gets before any `extra` column is shown (default: `min`). */
  want?: number;
  /**
   * When it is hidden, as a last resort: the column with the lowest number goes first. Absent:
   * never hidden.
   */
  hide?: number;
  /** Shown only where every column also gets its `want` (details: an id, a size); needs `hide`. */
  extra?: boolean;
}

/** Columns between cells of a fitted table. */
export const GAP = 2;

const DEFAULT_MIN: Record<ColumnKind, number> = { ref: 24, text: 16, fixed: 0 };

/** The longest word a text column keeps whole (a longer one is cut across lines). */
const MAX_WHOLE_WORD = 16;

export interface FittedTable {
  /** The headings (a text column's wrapped onto lines) and rows of the columns shown, each cell's lines fitted to its column. */
  head: string[];
  rows: string[][][];
  widths: number[];
  /** Headings of the columns hidden to fit. */
  hidden: string[];
  /** Some cell was elided (`…`): --wide shows it whole. */
  elided: boolean;
}

/**
 * Fits a table to `width` columns (each row a list of cells, each cell its lines). Columns get
 * their natural width while the total fits; else ref and text columns narrow (towards `min`),
 * sharing what room there is; if even that is too wide, columns are hidden by `hide`; in a
 * terminal too narrow for what is left, every column narrows. Pure.
 */
export function fitTable(head: readonly string[], rows: readonly (readonly string[])[][], columns: readonly ColumnFit[], width: number): FittedTable {
  const spec = (i: number): Required<Pick<ColumnFit, 'kind'>> & ColumnFit => ({ kind: 'fixed', ...columns[i] });
  // Measured once per column (a node's images table can have thousands of rows).
  const widest = (i: number, of: (line: string) => number) => rows.reduce((m, r) => (r[i] ?? []).reduce((mm, l) => Math.max(mm, of(l)), m), 0);
  const longestWordOf = (l: string) => l.split(' ').reduce((m, w) => Math.max(m, textWidth(w)), 0);
  const natural = head.map((h, i) => Math.max(textWidth(h), widest(i, textWidth)));
  const mins = head.map((h, i) => {
    const s = spec(i);
    if (s.kind === 'fixed') return natural[i]!;
    // A text column's heading may wrap at its spaces (AFTER / RESTART), and its short words are
    // never cut ("durable", "reclaimable"); other headings stay whole.
    const floor = s.kind === 'text' ? Math.max(longestWordOf(h), Math.min(MAX_WHOLE_WORD, widest(i, longestWordOf))) : textWidth(h);
    return Math.min(natural[i]!, Math.max(floor, s.min ?? DEFAULT_MIN[s.kind]));
  });
  const minOf = (i: number) => mins[i]!;
  const wantOf = (i: number) => Math.max(mins[i]!, Math.min(natural[i]!, spec(i).want ?? 0));
  let shown = head.map((_, i) => i);
  const need = (cols: number[], of: (i: number) => number) => cols.reduce((sum, i) => sum + of(i), 0) + GAP * Math.max(0, cols.length - 1);
  /** Hides the shown column (of those `may` allows) hidden first; false when there is none. */
  const hideOne = (may: (i: number) => boolean) => {
    const first = shown.filter((i) => spec(i).hide !== undefined && may(i)).sort((a, b) => spec(a).hide! - spec(b).hide!)[0];
    if (first === undefined) return false;
    shown = shown.filter((i) => i !== first);
    return true;
  };
  // Details give way to the columns that matter getting their room, then, least important first,
  // any column while even the narrowest do not fit.
  while (need(shown, wantOf) > width && hideOne((i) => spec(i).extra === true));
  while (need(shown, minOf) > width && hideOne(() => true));
  const widths = new Map(shown.map((i) => [i, minOf(i)]));
  let spare = width - need(shown, (i) => widths.get(i)!);
  // What is left goes first to the columns that want more than their minimum, in column order…
  for (const i of shown) {
    const give = Math.max(0, Math.min(wantOf(i) - widths.get(i)!, spare));
    widths.set(i, widths.get(i)! + give);
    spare -= give;
  }
  // …then to every flexible column, evenly, none past its natural width.
  for (;;) {
    const open = shown.filter((i) => widths.get(i)! < natural[i]!);
    if (spare <= 0 || open.length === 0) break;
    const share = Math.max(1, Math.floor(spare / open.length));
    for (const i of open) {
      if (spare <= 0) break;
      const give = Math.min(share, natural[i]! - widths.get(i)!, spare);
      widths.set(i, widths.get(i)! + give);
      spare -= give;
    }
  }
  // Still too wide (a very narrow terminal, or nothing left to hide): the widest columns give.
  let over = need(shown, (i) => widths.get(i)!) - width;
  while (over > 0) {
    const widest = shown.reduce((a, b) => (widths.get(b)! > widths.get(a)! ? b : a));
    if (widths.get(widest)! <= 1) break;
    widths.set(widest, widths.get(widest)! - 1);
    over--;
  }
  let elided = false;
  const fitCell = (i: number, lines: readonly string[]): string[] => {
    const w = widths.get(i)!;
    const kind = spec(i).kind;
    const out: string[] = [];
    for (const l of lines) {
      if (textWidth(l) <= w) out.push(l);
      else if (kind === 'text') out.push(...wrapWords(l, w));
      else {
        elided = true;
        out.push(kind === 'ref' ? elideReference(l, w) : truncateEnd(l, w));
      }
    }
    return out;
  };
  return {
    head: shown.map((i) => (spec(i).kind === 'text' ? wrapWords(head[i]!, widths.get(i)!).join('\n') : truncateEnd(head[i]!, widths.get(i)!))),
    rows: rows.map((r) => shown.map((i) => fitCell(i, r[i] ?? []))),
    widths: shown.map((i) => widths.get(i)!),
    hidden: head.filter((_, i) => !shown.includes(i)),
    elided,
  };
}

/** The line under a fitted table that says what it leaves out, and how to see it; null when nothing is. */
export function fitFooter(t: Pick<FittedTable, 'hidden' | 'elided'>): string | null {
  if (t.hidden.length) return `--wide also shows ${t.hidden.join(', ')}${t.elided ? ' and whole names' : ''}.`;
  if (t.elided) return '… marks a shortened name: --wide shows it whole.';
  return null;
}
