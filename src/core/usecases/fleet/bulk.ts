// `holdfast node add-bulk FILE`: nodes from a CSV file (RFC 4180), every row validated before
// anything is written; problems are reported with their line numbers. The format is on
// parseNodeCsv.
import os from 'node:os';
import path from 'node:path';
import { nodeInputSchema } from '../../../shared/contract';
import type { NodeInput } from '../../../shared/domain/nodes';
import { formatBytes } from '../../../shared/format';
import { readCsvRecords, type CsvRecord } from './csv';

export const BULK_COLUMNS = ['name', 'host', 'port', 'user', 'identity', 'group'] as const;

/** The largest node list read at once (tens of thousands of rows; the whole text is held in memory). */
export const BULK_MAX_BYTES = 4 * 1024 * 1024;

export interface BulkParse {
  nodes: NodeInput[];
  /** "line N: what is wrong", in file order; nodes is only meaningful when this is empty. */
  problems: string[];
}

/**
 *   name,host,port,user,identity,group
 *   edge-01,10.0.1.1,22,root,~/.ssh/edge,site-a
 *   edge-02,10.0.1.2,,,,site-a
 *
 * The header row is required and names the columns (any order; only name and host are
 * required columns). Empty cells take the defaults (port 22, user root, ssh-agent, no group).
 * Fields are RFC 4180: quoted fields may hold commas, quotes (doubled) and line breaks.
 * Blank lines and lines starting with `#` are ignored.
 */
export function parseNodeCsv(text: string, opts: { home?: string; knownHosts?: string } = {}): BulkParse {
  const home = opts.home ?? os.homedir();
  const problems: string[] = [];
  const nodes: NodeInput[] = [];
  if (Buffer.byteLength(text, 'utf8') > BULK_MAX_BYTES) {
    return { nodes, problems: [`the file is larger than ${formatBytes(BULK_MAX_BYTES)}: split it into several files`] };
  }
  let rows: CsvRecord[];
  try {
    rows = readCsvRecords(text);
  } catch (e) {
    return { nodes, problems: [`cannot read the CSV: ${(e as Error).message}`] };
  }
  const header = rows.shift();
  if (!header) return { nodes, problems: ['the file is empty: it needs a header row, e.g. name,host,port,user,identity,group'] };
  const cols = header.cells.map((c) => c.trim().toLowerCase());
  const unknown = cols.filter((c) => !(BULK_COLUMNS as readonly string[]).includes(c));
  if (unknown.length) problems.push(`line ${header.line}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (allowed: ${BULK_COLUMNS.join(', ')})`);
  for (const req of ['name', 'host']) if (!cols.includes(req)) problems.push(`line ${header.line}: the header has no "${req}" column`);
  if (problems.length) return { nodes, problems };
  const seen = new Map<string, number>();
  for (const r of rows) {
    if (r.cells.length !== cols.length) {
      problems.push(`line ${r.line}: ${r.cells.length} fields, the header has ${cols.length}`);
      continue;
    }
    const cell = (c: string) => {
      const i = cols.indexOf(c);
      const v = i < 0 ? '' : r.cells[i]!.trim();
      return v === '' ? undefined : v;
    };
    const port = cell('port');
    const identity = cell('identity');
    const input: Record<string, unknown> = { name: cell('name'), host: cell('host') };
    if (port !== undefined) input.port = /^\d+$/.test(port) ? Number(port) : port;
    if (cell('user')) input.user = cell('user');
    if (identity) input.identity = identity === '~' ? home : identity.startsWith('~/') ? path.join(home, identity.slice(2)) : identity;
    if (cell('group')) input.group = cell('group');
    if (opts.knownHosts) input.knownHosts = opts.knownHosts;
    const v = nodeInputSchema.safeParse(input);
    if (!v.success) {
      const issue = v.error.issues[0]!;
      problems.push(`line ${r.line}: ${issue.path.join('.') || 'row'}: ${issue.message}`);
      continue;
    }
    const prev = seen.get(v.data.name);
    if (prev !== undefined) {
      problems.push(`line ${r.line}: "${v.data.name}" is already on line ${prev}`);
      continue;
    }
    seen.set(v.data.name, r.line);
    nodes.push(v.data as NodeInput);
  }
  return { nodes, problems };
}
