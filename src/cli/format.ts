// Human-readable output for the CLI (tables and sizes); JSON output bypasses all of this.
import Table from 'cli-table3';
import { formatBytes } from '../core/fleet/summary';

/** Binary units, as the reports print them. */
export const humanSize = (bytes: number): string => formatBytes(bytes);

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
