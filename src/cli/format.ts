// Human-readable output for the CLI (tables and sizes); JSON output bypasses all of this except
// terminalSafe, which the terminal sink applies to everything (context.ts defaultIo).
import { formatBytes, shortDigest as shortId } from '../shared/format';
import { visibleControls } from '../shared/visibleControls';
import { fitFooter, fitTable, GAP, textWidth, wrapText, type ColumnFit } from './fit';

/** Binary units, as the reports print them. */
export const humanSize = (bytes: number): string => formatBytes(bytes, '-');

/** The 12 hex digits docker and crictl print, '-' when unknown. */
export const shortDigest = (d: string | null | undefined): string => shortId(d, '-');

/**
 * Text from a node made harmless for a terminal (shared/visibleControls: the one rule for every
 * output): no escape sequence can recolour, move the cursor, retitle the window or hide text, and
 * a name cannot fake extra lines. `keepLines` keeps line feeds and tabs (for whole blocks of
 * output that Holdfast laid out).
 */
export function terminalSafe(s: string, opts: { keepLines?: boolean } = {}): string {
  return visibleControls(s, opts);
}

/** A table cell: text, a number, or lines (one per element, e.g. the images an archive brings). */
export type Cell = string | number | readonly string[];

/** How `table` fits the terminal: its width and how each column gives way (src/cli/fit.ts). */
export interface TableFit {
  width: number;
  columns?: readonly ColumnFit[];
}

/**
 * The table as the CLI prints it. Without `fit` (a pipe, a file, --wide): every cell whole, in the
 * layout cli-table3 gave it (columns as wide as their widest line, four spaces between them), as
 * scripts have always read it. With `fit`: narrowed to the terminal (src/cli/fit.ts), and a line
 * under it says what was left out.
 */
export function table(head: string[], rows: Cell[][], fit?: TableFit): string {
  // Each cell's lines, with nothing a terminal would act on (measured after escaping).
  const cells = rows.map((r) => r.map((c) => (Array.isArray(c) ? c.map((l) => terminalSafe(l)) : [terminalSafe(String(c))])));
  if (fit) return fittedTable(head.map((h) => terminalSafe(h)), cells, fit);
  // Laid out here, not by cli-table3: its layout took time cubic in a multi-line cell's lines
  // (748 s for an archive naming 400 images). Each line is measured once, here.
  const all = [head.map((h) => [h]), ...cells];
  const measured = all.map((r) => r.map((c) => c.map((l) => textWidth(l))));
  const widths: number[] = [];
  for (const r of measured) r.forEach((c, i) => (widths[i] = c.reduce((m, w) => Math.max(m, w), widths[i] ?? 0)));
  return layOut(all, measured, widths, PLAIN_GAP).join('\n');
}

/** Columns between the cells of an unfitted table (cli-table3's padding and its two-space border). */
const PLAIN_GAP = 4;

/**
 * The lines of rows whose cells fit their columns: each line of a cell padded to its column's
 * width (`measured` holds every line's width), `gap` spaces between columns, no trailing blanks.
 * Linear in the output.
 */
function layOut(rows: readonly (readonly (readonly string[])[])[], measured: readonly (readonly number[])[][], widths: readonly number[], gap: number): string[] {
  const between = ' '.repeat(gap);
  const lines: string[] = [];
  rows.forEach((cells, r) => {
    const height = cells.reduce((h, c) => Math.max(h, c.length), 1);
    for (let n = 0; n < height; n++) {
      let line = '';
      for (let i = 0; i < widths.length; i++) {
        const l = cells[i]?.[n] ?? '';
        line += (i === 0 ? '' : between) + l + ' '.repeat(Math.max(0, widths[i]! - (measured[r]![i]?.[n] ?? 0)));
      }
      lines.push(line.trimEnd());
    }
  });
  return lines;
}

/** A fitted table: cells fitted to their columns, GAP spaces between columns, the footer under it. */
function fittedTable(head: string[], rows: string[][][], fit: TableFit): string {
  const f = fitTable(head, rows, fit.columns ?? [], fit.width);
  // Every cell already fits its column: each line measured once more, to pad it.
  const all = [f.head.map((h) => h.split('\n')), ...f.rows];
  const lines = layOut(all, all.map((r) => r.map((c) => c.map((l) => textWidth(l)))), f.widths, GAP);
  const footer = fitFooter(f);
  if (footer) lines.push(wrapText(footer, fit.width));
  return lines.join('\n');
}
