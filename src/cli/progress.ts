// Live progress on stderr for work that takes a while (inspecting an archive, uploading to and
// importing on many nodes at once). On a terminal: one line per row, redrawn in place with a few
// ANSI sequences (no library); anywhere else (a log file, CI): plain lines, never a carriage
// return or an escape sequence. How each is drawn is on ProgressBoard.
import { wrapLine } from './fit';
import { terminalSafe } from './format';

export interface ProgressStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

export interface Row {
  /** Printed first: the node's name ('' for none). */
  label: string;
  /** What is happening now, in a few words. */
  text: string;
  /** A new phase starts a new plain line and the spinner's clock. */
  phase: string;
  /** Waiting without a byte count: a spinner on a terminal. */
  busy?: boolean;
  /** 0…1 when bytes are counted: a bar on a terminal. */
  fraction?: number;
  /** Finished, well or not: a mark instead of the spinner. */
  mark?: '✓' | '✗';
}

export interface BoardOptions {
  /** Plain mode: at most one line per row this often, besides phase changes (default 5 s). */
  plainEveryMs?: number;
  /** Terminal mode: the spinner's and the redraw's pace (default 100 ms). */
  frameMs?: number;
  now?: () => number;
  /** Terminal mode runs a timer for the spinner; tests drive tick() instead. */
  timer?: boolean;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const BAR_WIDTH = 20;
const CSI = '\x1b[';

// Boards drawing now, so a question on the terminal (a passphrase) can put them aside first.
const open = new Set<ProgressBoard>();

/**
 * Runs fn (a prompt) with every live board erased and still: the question and the typing are not
 * drawn over by a spinner. The boards come back when fn settles.
 */
export async function withoutProgress<T>(fn: () => Promise<T>): Promise<T> {
  const boards = [...open];
  for (const b of boards) b.suspend();
  try {
    return await fn();
  } finally {
    for (const b of boards) b.resume();
  }
}

interface Shown extends Row {
  since: number;
  printedAt: number;
  printedText: string | null;
}

/**
 * On a terminal: one line per row (a node, or the local inspection), redrawn in place — the
 * cursor goes back up over the rows drawn last time and each line is rewritten — with a spinner
 * on rows that wait without a byte count (hashing on the node, waiting for k3s). Rows are cut to
 * the terminal's width, because a line that wraps would throw off the count of lines to go back
 * over. A few ANSI sequences do all of it, so no library: cursor up (CSI n A), erase line (CSI 2 K)
 * and erase to the end of the screen (CSI J), which every terminal emulator since the VT100 has.
 *
 * Anywhere else (a log file, CI): plain lines, one when a row changes phase and at most one per
 * row every few seconds otherwise. Never a carriage return, never an escape sequence.
 *
 * note() prints a lasting line above the live rows (wrapped at words on a terminal); close()
 * erases the live rows, so whatever comes next (a result, an error, the Ctrl-C message) starts on
 * a clean line of its own.
 */
export class ProgressBoard {
  private readonly rows = new Map<string, Shown>();
  private readonly tty: boolean;
  private readonly plainEveryMs: number;
  private readonly frameMs: number;
  private readonly now: () => number;
  private drawn = 0;
  private frame = 0;
  private lastDraw = -Infinity;
  private dirty = false;
  private closed = false;
  private suspended = 0;
  private interval: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly out: ProgressStream,
    opts: BoardOptions = {},
  ) {
    this.tty = out.isTTY === true;
    this.plainEveryMs = opts.plainEveryMs ?? 5_000;
    this.frameMs = opts.frameMs ?? 100;
    this.now = opts.now ?? (() => Date.now());
    if (this.tty) open.add(this);
    if (this.tty && opts.timer !== false) {
      this.interval = setInterval(() => this.tick(), this.frameMs);
      // The board never keeps the process alive on its own.
      this.interval.unref();
    }
  }

  /** Whether rows are redrawn in place (a terminal) rather than printed as lines. */
  get live(): boolean {
    return this.tty;
  }

  /** Adds or updates a row; rows keep the order they were first set in. */
  set(key: string, row: Row): void {
    if (this.closed) return;
    const t = this.now();
    const prev = this.rows.get(key);
    const newPhase = !prev || prev.phase !== row.phase;
    const shown: Shown = { ...row, since: newPhase ? t : prev.since, printedAt: prev?.printedAt ?? -Infinity, printedText: prev?.printedText ?? null };
    this.rows.set(key, shown);
    if (!this.tty) {
      const line = plainLine(row);
      if (line !== shown.printedText && (newPhase || row.mark || t - shown.printedAt >= this.plainEveryMs)) {
        shown.printedAt = t;
        shown.printedText = line;
        this.out.write(`${line}\n`);
      }
      return;
    }
    this.dirty = true;
    if (this.suspended) return;
    // A phase change shows at once; byte counts at the frame pace.
    if (newPhase || row.mark || t - this.lastDraw >= this.frameMs) this.draw();
  }

  /** Removes a row (its line goes at the next draw). */
  delete(key: string): void {
    if (this.closed || !this.rows.delete(key)) return;
    if (this.tty && !this.suspended) this.draw();
  }

  /** A line that stays, printed above the live rows. */
  note(line: string): void {
    if (this.closed) return;
    const safe = terminalSafe(line);
    if (!this.tty) {
      this.out.write(`${safe}\n`);
      return;
    }
    // A lasting line is wrapped at words to the terminal (a live row is cut instead: see draw).
    this.out.write(this.erase() + `${wrapLine(safe, Math.max(20, this.out.columns || 80))}\n`);
    this.drawn = 0;
    if (!this.suspended) this.draw();
  }

  /** Erases the rows and draws nothing until resume() (as often as suspend() was called). */
  suspend(): void {
    if (this.closed || !this.tty) return;
    if (this.suspended++ === 0 && this.drawn > 0) {
      this.out.write(this.erase());
      this.drawn = 0;
    }
  }

  resume(): void {
    if (this.closed || !this.tty || this.suspended === 0) return;
    if (--this.suspended === 0) this.draw();
  }

  /** Advances the spinner and draws what changed (the timer calls it). */
  tick(): void {
    if (this.closed || !this.tty || this.suspended) return;
    this.frame++;
    const spinning = [...this.rows.values()].some((r) => r.busy && !r.mark);
    if (this.dirty || spinning) this.draw();
  }

  /** Erases the live rows and stops; later calls do nothing. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    open.delete(this);
    if (this.interval) clearInterval(this.interval);
    this.interval = null;
    if (this.tty && this.drawn > 0) this.out.write(this.erase());
    this.drawn = 0;
    this.rows.clear();
  }

  /** Back to the first live row, everything below erased. */
  private erase(): string {
    return this.drawn > 0 ? `${CSI}${this.drawn}A\r${CSI}J` : `\r${CSI}J`;
  }

  private draw(): void {
    const t = this.now();
    this.lastDraw = t;
    this.dirty = false;
    const width = Math.max(20, (this.out.columns || 80) - 1);
    const all = [...this.rows.values()];
    const labelWidth = Math.max(0, ...all.map((r) => [...terminalSafe(r.label)].length));
    // More rows than the screen holds cannot be redrawn in place (the cursor stops at the top):
    // the unfinished rows first, then one line for the rest.
    const room = Math.max(2, (this.out.rows || 24) - 2);
    const shown = all.length <= room ? all : [...all.filter((r) => !r.mark), ...all.filter((r) => r.mark)].slice(0, room - 1);
    const lines = shown.map((r) => fit(this.ttyLine(r, labelWidth, t), width));
    if (shown.length < all.length) {
      const hidden = all.filter((r) => !shown.includes(r));
      const done = hidden.filter((r) => r.mark).length;
      lines.push(fit(`… and ${hidden.length} more${done ? ` (${done} finished)` : ''}`, width));
    }
    // Up over the last frame, then each line rewritten in place; CSI J clears what a shorter
    // frame leaves below.
    let s = this.drawn > 0 ? `${CSI}${this.drawn}A` : '';
    for (const l of lines) s += `\r${CSI}2K${l}\n`;
    if (lines.length < this.drawn) s += `${CSI}J`;
    this.out.write(s);
    this.drawn = lines.length;
  }

  private ttyLine(r: Shown, labelWidth: number, t: number): string {
    const label = labelWidth ? `${terminalSafe(r.label).padEnd(labelWidth)}  ` : '';
    const glyph = r.mark ?? (r.busy ? SPINNER[this.frame % SPINNER.length]! : r.fraction !== undefined ? bar(r.fraction) : ' ');
    const waited = r.busy && !r.mark ? Math.floor((t - r.since) / 1000) : 0;
    return `${label}${glyph} ${terminalSafe(r.text)}${waited >= 2 ? ` ${waited} s` : ''}`;
  }
}

function plainLine(r: Row): string {
  const text = terminalSafe(r.text);
  return r.label ? `${terminalSafe(r.label)}: ${text}` : text;
}

function bar(fraction: number): string {
  const f = Math.min(1, Math.max(0, fraction));
  const full = Math.round(f * BAR_WIDTH);
  return '━'.repeat(full) + '─'.repeat(BAR_WIDTH - full);
}

/** Cut to the terminal's width (by code point: what Holdfast writes is single-width). */
function fit(s: string, width: number): string {
  const chars = [...s];
  return chars.length <= width ? s : chars.slice(0, width - 1).join('') + '…';
}
