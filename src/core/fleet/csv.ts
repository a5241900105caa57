// CSV (RFC 4180): comma-separated, CRLF line ends, fields with `,` `"` CR or LF double-quoted
// and inner quotes doubled. One row per node × reference.
import type { FleetReport } from '../../shared/fleet';

export const FLEET_CSV_COLUMNS = ['node', 'reachable', 'reference', 'digest', 'imageId', 'pin', 'afterRestart', 'reason', 'archive'] as const;

export function csvField(v: string | number | boolean | null | undefined): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(fields: (string | number | boolean | null | undefined)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

/**
 * One row per node × reference. A node with no images gets one row with an empty reference; an
 * unreachable node one row with reachable=false and its error in `reason`.
 */
export function fleetCsv(report: Pick<FleetReport, 'nodes'>): string {
  let out = csvLine([...FLEET_CSV_COLUMNS]);
  for (const n of report.nodes) {
    if (!n.reachable || !n.images) {
      out += csvLine([n.node, false, '', '', '', '', '', n.error ? n.error.message : 'unreachable', '']);
      continue;
    }
    if (n.images.length === 0) out += csvLine([n.node, true, '', '', '', '', '', 'no images', '']);
    for (const i of n.images) out += csvLine([n.node, true, i.name, i.digest, i.imageId, i.pin, i.afterRestart, i.reason, i.archive]);
  }
  return out;
}

/** Parses RFC 4180 text into rows (quoted fields may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  let any = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      any = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      any = true;
      i++;
    } else if (c === '\r' || c === '\n') {
      if (any || field !== '') {
        row.push(field);
        rows.push(row);
      }
      row = [];
      field = '';
      any = false;
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      any = true;
      i++;
    }
  }
  if (quoted) throw new Error('unterminated quoted field');
  if (any || field !== '') {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
