// A minimal terminal for tests: replays what a program wrote to a terminal (printable text, CR,
// LF, and the CSI sequences Holdfast's progress board uses: cursor up/down, erase line, erase to
// the end of the screen) onto a grid of lines, so a test can assert what a person saw, line by
// line, instead of matching escape sequences. Lines past `columns` wrap, as on a real terminal.
export class Screen {
  lines: string[][] = [[]];
  row = 0;
  col = 0;

  constructor(readonly columns = 80) {}

  write(data: string): this {
    for (let i = 0; i < data.length; i++) {
      const c = data[i]!;
      if (c === '\x1b' && data[i + 1] === '[') {
        // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
        const m = /^\x1b\[([?0-9;]*)([A-Za-z])/.exec(data.slice(i));
        if (!m) continue;
        i += m[0].length - 1;
        this.csi(m[1]!, m[2]!);
      } else if (c === '\r') this.col = 0;
      else if (c === '\n') this.down();
      else if (c === '\b') this.col = Math.max(0, this.col - 1);
      else if (c >= ' ') this.put(c);
    }
    return this;
  }

  /** The lines as shown, trailing blanks trimmed, blank lines at the end dropped. */
  text(): string[] {
    const out = this.lines.map((l) => l.join('').replace(/\s+$/, ''));
    while (out.length && out[out.length - 1] === '') out.pop();
    return out;
  }

  private line(): string[] {
    while (this.lines.length <= this.row) this.lines.push([]);
    return this.lines[this.row]!;
  }

  private down(): void {
    this.row++;
    this.line();
  }

  private put(c: string): void {
    if (this.col >= this.columns) {
      this.down();
      this.col = 0;
    }
    const l = this.line();
    while (l.length < this.col) l.push(' ');
    l[this.col++] = c;
  }

  private csi(params: string, cmd: string): void {
    const n = Number(params || '1') || 1;
    const l = this.line();
    switch (cmd) {
      case 'A':
        this.row = Math.max(0, this.row - n);
        break;
      case 'B':
        this.row += n;
        this.line();
        break;
      case 'K':
        if (params === '2') l.length = 0;
        else if (params === '1') for (let k = 0; k <= this.col && k < l.length; k++) l[k] = ' ';
        else l.length = Math.min(l.length, this.col);
        break;
      case 'J':
        if (params === '' || params === '0') {
          l.length = Math.min(l.length, this.col);
          this.lines.length = this.row + 1;
        }
        break;
      default:
        break; // colours, cursor visibility: nothing to lay out
    }
  }
}
