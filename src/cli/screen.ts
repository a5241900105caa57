// Where output goes, as the commands lay it out: a person's terminal (its width, unless --wide)
// or a pipe, a file, a test (no width: every line as scripts have always read it).
import { elideReference, textWidth, wrapText, type ColumnFit } from './fit';
import { table, terminalSafe, type Cell } from './format';
import { commandLine } from './commandLine';

/**
 * The line after output whose reasons were cut to one short clause: where their whole text is.
 * `node`: the node `holdfast explain` asks about (NODE when the output covers several).
 */
export const whyHint = (node?: string): string => `(--why: reasons in full${node === undefined ? '' : `; ${commandLine(['explain', node, 'REF'])}: one reference in full`})`;

/** The narrowest an elided reference gets in a line of text, whatever else the line holds. */
const MIN_REF = 24;

export class Screen {
  /**
   * `terminal`: stdout is a terminal, so the output is for a person (short clauses, CRI's
   * `sha256:` records worded as their image's). `width`: the columns to fit, null when nothing is
   * fitted (not a terminal, or --wide).
   */
  constructor(
    readonly terminal: boolean,
    readonly width: number | null,
  ) {}

  /** Output as it has always been: no terminal, nothing fitted. */
  static readonly plain = new Screen(false, null);

  /** A table, fitted to the width when there is one (`columns`: how each column gives way). */
  table(head: string[], rows: Cell[][], columns?: readonly ColumnFit[]): string {
    return table(head, rows, this.width === null ? undefined : { width: this.width, ...(columns ? { columns } : {}) });
  }

  /**
   * Lines of prose, each wrapped to the width under its own indent. Made terminal-safe here,
   * before measuring: the sink's escapes (context.ts) would otherwise widen a line after it was fitted.
   */
  text(s: string): string {
    return this.width === null ? s : wrapText(terminalSafe(s, { keepLines: true }), this.width);
  }

  /**
   * A command to copy: never elided, and a line wider than the terminal is continued with ` \`
   * between its words, so that it still runs when pasted. (A single word wider than the terminal,
   * a very long image name, stays whole: cut, it would not run.)
   */
  command(line: string): string {
    const safe = terminalSafe(line);
    if (this.width === null || textWidth(safe) <= this.width) return safe;
    const width = this.width;
    const indent = /^ */.exec(safe)![0].length;
    const words = safe.trim().split(' ');
    const out: string[] = [];
    let current = ' '.repeat(indent) + words.shift()!;
    words.forEach((w, n) => {
      // room for ' \' at the end of every line but the last
      const tail = n === words.length - 1 ? 0 : 2;
      if (textWidth(`${current} ${w}`) + tail <= width) current += ` ${w}`;
      else {
        out.push(`${current} \\`);
        // continued two columns in, or less for a word that would not fit so
        current = ' '.repeat(Math.max(0, Math.min(indent + 2, width - textWidth(w) - tail))) + w;
      }
    });
    return [...out, current].join('\n');
  }

  /** A reference in a line where `used` columns are taken: elided in the middle to what is left. */
  ref(r: string, used = 0): string {
    return this.width === null ? r : elideReference(terminalSafe(r), Math.max(MIN_REF, this.width - used));
  }
}
