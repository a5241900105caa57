// Fitting output to a terminal (src/cli/fit.ts, src/cli/format.ts table, src/cli/screen.ts):
// references keep their registry and their end, prose wraps under its indent, columns hide least
// important first and say so, and without a width every byte is as scripts have always read it.
import { describe, expect, it } from 'vitest';
import Table from 'cli-table3';
import { elidePath, elideReference, fitFooter, fitTable, textWidth, widthCalls, wrapLine, wrapWords, type ColumnFit } from '../../../src/cli/fit';
import { table } from '../../../src/cli/format';
import { Screen } from '../../../src/cli/screen';

const HEX = '5ad44c18f986aa7248c670b93d916a56e6842d83356edab2ce28663409f11e8d';
const DIGEST_REF = `docker.io/library/holdfast-sample@sha256:${HEX}`;
const TAG_REF = 'docker.io/library/holdfast-sample:1.0';
const ID_RECORD = 'sha256:80d33178572614ce785d634ae2f2a92238a1cdd21696999ba58eed75e51ee551';

const widest = (s: string) => Math.max(...s.split('\n').map(textWidth));

describe('elideReference', () => {
  it('leaves what fits alone', () => {
    expect(elideReference(TAG_REF, TAG_REF.length)).toBe(TAG_REF);
  });

  it('shortens a digest first: repository whole, the digest by its first and last digits', () => {
    expect(elideReference(DIGEST_REF, 60)).toBe('docker.io/library/holdfast-sample@sha256:5ad44c18f986aa…1e8d');
    expect(elideReference(DIGEST_REF, 52)).toBe('docker.io/library/holdfast-sample@sha256:5ad44c…1e8d');
  });

  it('then the repository in its middle, at whole path segments: registry and name stay', () => {
    const r = elideReference(DIGEST_REF, 46);
    expect(r).toBe('docker.io/…/holdfast-sample@sha256:5ad44c…1e8d');
    expect(textWidth(r)).toBeLessThanOrEqual(46);
    expect(elideReference(TAG_REF, 32)).toBe('docker.io/…/holdfast-sample:1.0');
  });

  it("keeps the registry and the tag of a name whose last segment is long", () => {
    const long = 'registry.example.com:5000/team/platform/very-long-image-name-here:v1.2.3-build.456';
    const r = elideReference(long, 60);
    expect(textWidth(r)).toBe(60);
    expect(r.startsWith('registry.example.com:5000/…')).toBe(true);
    expect(r.endsWith(':v1.2.3-build.456')).toBe(true);
  });

  it("shows CRI's sha256:<id> record with the 12 digits IMAGE ID shows, and its last 4", () => {
    expect(elideReference(ID_RECORD, 24)).toBe('sha256:80d331785726…e551');
  });

  it('never exceeds the width, however narrow', () => {
    for (const ref of [DIGEST_REF, TAG_REF, ID_RECORD, '/var/lib/rancher/k3s/agent/images', 'x'.repeat(90)]) {
      for (let w = 1; w <= 100; w++) expect(textWidth(elideReference(ref, w)), `${ref} at ${w}`).toBeLessThanOrEqual(w);
    }
  });
});

describe('elidePath', () => {
  it('keeps the top directory and the file', () => {
    expect(elidePath('/var/lib/rancher/k3s/agent/images', 20)).toBe('/var/…/agent/images');
  });
});

describe('wrapping prose', () => {
  it('wraps at spaces; a word longer than a line is cut, not joined with a space', () => {
    expect(wrapWords('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrapWords(`pin ${'x'.repeat(12)}`, 5)).toEqual(['pin', 'xxxxx', 'xxxxx', 'xx']);
  });

  it('continues a line under its own indent (two more for a plain line, under the text of a list item)', () => {
    expect(wrapLine('  note: one two three four five', 16)).toBe('  note: one two\n    three four\n    five');
    expect(wrapLine('  - ref: one two three four', 14)).toBe('  - ref: one\n    two three\n    four');
    expect(wrapLine('short', 80)).toBe('short');
  });
});

describe('fitTable', () => {
  const head = ['REFERENCE', 'PIN', 'AFTER RESTART', 'SITE NEED', 'IMAGE ID', 'SIZE', 'PLATFORMS'];
  const columns: ColumnFit[] = [
    { kind: 'ref', min: 36, want: 56 },
    { kind: 'text', min: 7 },
    { kind: 'text', min: 13 },
    { kind: 'text', min: 12, hide: 4 },
    { hide: 2, extra: true },
    { hide: 3, extra: true },
    { kind: 'text', min: 12, hide: 1, extra: true },
  ];
  const rows = [DIGEST_REF, TAG_REF, ID_RECORD].map((r) => [[r], ['k3s'], ['pinned'], ['at risk at restart'], ['80d331785726'], ['2.1 KiB'], ['linux/amd64, linux/arm64']]);

  it('takes the natural widths when they fit', () => {
    const f = fitTable(head, rows, columns, 500);
    expect(f.hidden).toEqual([]);
    expect(f.elided).toBe(false);
    expect(f.rows[0]![0]).toEqual([DIGEST_REF]);
  });

  it('hides details (extra) before the reference gets less than it wants, least important first', () => {
    const at100 = fitTable(head, rows, columns, 100);
    expect(at100.hidden).toEqual(['IMAGE ID', 'PLATFORMS']);
    expect(at100.widths[0]).toBeGreaterThanOrEqual(56);
    const at80 = fitTable(head, rows, columns, 80);
    expect(at80.hidden).toEqual(['IMAGE ID', 'SIZE', 'PLATFORMS']);
    expect(at80.head).toEqual(['REFERENCE', 'PIN', 'AFTER RESTART', 'SITE NEED']);
    // the verdict wraps instead of going
    expect(at80.rows[0]![3]).toEqual(['at risk at', 'restart']);
    expect(at80.elided).toBe(true);
  });

  it('hides a column that is not extra only when even the narrowest widths do not fit', () => {
    expect(fitTable(head, rows, columns, 70).hidden).toEqual(['IMAGE ID', 'SIZE', 'PLATFORMS']);
    expect(fitTable(head, rows, columns, 60).hidden).toEqual(['SITE NEED', 'IMAGE ID', 'SIZE', 'PLATFORMS']);
  });

  it('never exceeds the width, down to a terminal too narrow for any table', () => {
    for (let w = 10; w <= 160; w++) {
      const f = fitTable(head, rows, columns, w);
      const total = f.widths.reduce((a, b) => a + b, 0) + 2 * (f.widths.length - 1);
      expect(total, `width ${w}`).toBeLessThanOrEqual(w);
      for (const r of f.rows) r.forEach((cell, i) => cell.forEach((l) => expect(textWidth(l), `width ${w}`).toBeLessThanOrEqual(f.widths[i]!)));
    }
  });

  it("says in a footer which columns --wide shows, and whether names were shortened", () => {
    expect(fitFooter({ hidden: ['IMAGE ID', 'PLATFORMS'], elided: true })).toBe('--wide also shows IMAGE ID, PLATFORMS and whole names.');
    expect(fitFooter({ hidden: ['SOCKET'], elided: false })).toBe('--wide also shows SOCKET.');
    expect(fitFooter({ hidden: [], elided: true })).toBe('… marks a shortened name: --wide shows it whole.');
    expect(fitFooter({ hidden: [], elided: false })).toBeNull();
  });
});

describe('table', () => {
  const head = ['REFERENCE', 'PIN'];
  const rows = [[DIGEST_REF, 'k3s'], [ID_RECORD, 'none']];

  it('without a width: the layout scripts read, every cell whole, four spaces between columns', () => {
    const plain = table(head, rows);
    expect(plain.split('\n')).toEqual([
      `REFERENCE${' '.repeat(DIGEST_REF.length - 'REFERENCE'.length)}    PIN`,
      `${DIGEST_REF}    k3s`,
      `${ID_RECORD}${' '.repeat(DIGEST_REF.length - ID_RECORD.length)}    none`,
    ]);
    // a Screen without a width (a pipe, --wide) prints the same bytes
    expect(Screen.plain.table(head, rows, [{ kind: 'ref' }, {}])).toBe(plain);
    expect(new Screen(true, null).table(head, rows, [{ kind: 'ref' }, {}])).toBe(plain);
  });

  it('with a width: every line fits, references elided in the middle, a footer saying so', () => {
    const fitted = new Screen(true, 50).table(head, rows, [{ kind: 'ref' }, {}]);
    expect(widest(fitted)).toBeLessThanOrEqual(50);
    const lines = fitted.split('\n');
    expect(lines[1]).toMatch(/^docker\.io\/….*@sha256:5ad44c…1e8d +k3s$/);
    expect(lines[lines.length - 1]).toBe('… marks a shortened name: --wide shows it whole.');
  });

  it('escapes control characters before measuring them', () => {
    const fitted = new Screen(true, 30).table(['NAME'], [['evil\u001b[2Jname-that-is-quite-long-indeed']], [{ kind: 'ref' }]);
    expect(fitted).not.toContain('\u001b');
    expect(widest(fitted)).toBeLessThanOrEqual(30);
  });

  // The layout cli-table3 gave unfitted tables (scripts read it): the reference the table must match.
  const cliTable3 = (h: string[], rs: (string | string[])[][]) => {
    const t = new Table({
      head: h,
      style: { head: [], border: [], compact: true },
      chars: {
        top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
        bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
        left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
      },
    });
    for (const r of rs) t.push(r.map((c) => (Array.isArray(c) ? c.join('\n') : c)));
    return t
      .toString()
      .split('\n')
      .map((l) => l.replace(/^ /, '').trimEnd())
      .join('\n');
  };

  it('without a width: byte for byte the layout cli-table3 gave (multi-line, blank, short, long and wide cells)', () => {
    const h = ['ARCHIVE', 'IMAGES', 'STATE'];
    const cases: (string | string[])[][][] = [
      [],
      [['a.tar', ['x:1', 'longer/name:2'], '']],
      [[' lead', 'b', 'c'], ['', '', ''], ['only']],
      [['a', 'b', 'c', 'd']],
      [['界面.tar', ['镜像:1', 'x'], 'ok'], ['b.tar', [], 'gone']],
    ];
    for (const rs of cases) expect(table(h, rs), JSON.stringify(rs)).toBe(cliTable3(h, rs));
  });

  it('lays out a 400-line cell and 400 rows correctly, measuring each line once (linear, not cubic)', () => {
    const n = 400;
    const images = Array.from({ length: n }, (_, i) => `docker.io/library/image-${i}:1.${i}`);
    const rows = [['big.tar', images, 'ok'], ...Array.from({ length: n }, (_, i) => [`b${i}.tar`, `x/y:${i}`, 'ok'])];
    const before = widthCalls.count;
    const out = table(['ARCHIVE', 'IMAGES', 'STATE'], rows).split('\n');
    // The head, each of its cells and every line of every cell, measured once each.
    expect(widthCalls.count - before).toBe(3 + (2 + n) + 3 * n);
    expect(out).toHaveLength(1 + n + n);
    const imagesAt = 'b399.tar'.length + 4;
    const stateAt = imagesAt + images[n - 1]!.length + 4;
    expect(out[0]).toBe(`ARCHIVE${' '.repeat(imagesAt - 7)}IMAGES${' '.repeat(stateAt - imagesAt - 6)}STATE`);
    expect(out[1]).toBe(`big.tar${' '.repeat(imagesAt - 7)}${images[0]}${' '.repeat(stateAt - imagesAt - images[0]!.length)}ok`);
    for (let i = 1; i < n; i++) expect(out[1 + i]).toBe(`${' '.repeat(imagesAt)}${images[i]}`);
    for (let i = 0; i < n; i++) expect(out[1 + n + i]).toBe(`b${i}.tar${' '.repeat(imagesAt - `b${i}.tar`.length)}x/y:${i}${' '.repeat(stateAt - imagesAt - `x/y:${i}`.length)}ok`);
    // Fitted to a terminal: every line within it, the big cell's lines in order, a bounded number of measurements per line.
    const fitBefore = widthCalls.count;
    const fitted = new Screen(true, 60).table(['ARCHIVE', 'IMAGES', 'STATE'], rows, [{ kind: 'ref' }, { kind: 'ref' }, {}]).split('\n');
    expect(widthCalls.count - fitBefore).toBeLessThanOrEqual(8 * (3 + 4 * n));
    expect(fitted.slice(0, 1 + 2 * n).every((l) => textWidth(l) <= 60)).toBe(true);
    expect(fitted.slice(1, 1 + n).map((l) => l.trim().split(/ {2,}/).find((p) => p.includes('image-')))).toEqual(images);
  });
});
