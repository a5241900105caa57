// Human-readable output for the CLI (tables and sizes); JSON output bypasses all of this.
import Table from 'cli-table3';

export function humanSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function shortDigest(d: string | null | undefined): string {
  if (!d) return '-';
  return d.replace(/^sha256:/, '').slice(0, 12);
}

export function table(head: string[], rows: (string | number)[][]): string {
  const t = new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
    },
  });
  for (const r of rows) t.push(r.map(String));
  return t
    .toString()
    .split('\n')
    .map((l) => l.replace(/^ /, '').trimEnd())
    .join('\n');
}
