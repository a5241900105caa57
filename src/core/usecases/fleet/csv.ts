// CSV (RFC 4180): comma-separated, CRLF line ends, fields with `,` `"` CR or LF double-quoted
// and inner quotes doubled. One row per node × reference. Control and bidi characters in text
// are shown as `\uXXXX` (shared/visibleControls), so no field holds a line break.
// Spreadsheets run a cell that starts with = + - @ (or tab/CR before one) as a formula, and much
// of a row comes from nodes (names, file names, error output): such text cells get a leading `'`
// (OWASP "CSV injection"), which spreadsheets show as text and never evaluate.
import { parse } from 'csv-parse/sync';
import type { FleetReport } from '../../../shared/fleet';
import { LOST_PIN_KIND_TEXT, pinnedByText } from '../../../shared/lostPins';
import type { LostPin } from '../../../shared/domain/lostPins';
import { inParens, proseText, type RemedyWording } from '../../../shared/remedy';
import { pinReading, protectionKey, refsByImage } from '../../../shared/protection';
import { workloadName } from '../../../shared/needs';
import { signatureSentence } from '../../../shared/signatures';
import { visibleControls } from '../../../shared/visibleControls';
import { protectionOf, warningsOf } from './summary';

/**
 * afterRestart and reason are the reference's own; imageAfterRestart and imageReason are its
 * image's as kubelet sees it (shared/protection: per image id, the node's containerd rule);
 * signature is what Holdfast verified of it at import (shared/signatures signatureSentence).
 */
export const FLEET_CSV_COLUMNS = ['node', 'reachable', 'reference', 'digest', 'imageId', 'pin', 'afterRestart', 'reason', 'archive', 'imageAfterRestart', 'imageReason', 'siteNeed', 'atRisk', 'neededBy', 'signature'] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(v: string | number | boolean | null | undefined): string {
  // Text may come from a node: its control and bidi characters shown as `\uXXXX` (a `cat` of the
  // file runs no escape sequence, a name is one line), then no formula can start it either.
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? visibleControls(v) : String(v);
  // Numbers and booleans are Holdfast's own values; only text can smuggle in a formula.
  if (typeof v === 'string' && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(fields: (string | number | boolean | null | undefined)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

/** "Durable pin lost (pin label removed; made durable by …): summary Likely: … Remedy: …" (`word`: how a remedy in it is said, shared/remedy). */
export function lostPinReason(l: LostPin, word?: RemedyWording): string {
  return `Durable pin lost (${LOST_PIN_KIND_TEXT[l.kind]}; ${pinnedByText(l)}): ${l.summary} Likely: ${l.causes[0] ?? 'unknown'} Remedy: ${proseText(l.remedy.text, word && inParens(word))}`;
}

/**
 * One row per node × reference. A node with no images gets one row with an empty reference; an
 * unreachable node one row with reachable=false and its error in `reason`. A node capability
 * warning is a row with an empty reference and the warning as reason, and so is a guard's state; a reference whose durable
 * pin is lost has the loss first in its reason, and a lost reference that is gone gets a row of
 * its own (no digest, pin or fate: it is not on the node; archive: the one that brings it back).
 */
export function fleetCsv(report: Pick<FleetReport, 'nodes'>, word?: RemedyWording): string {
  let out = csvLine([...FLEET_CSV_COLUMNS]);
  for (const n of report.nodes) {
    if (!n.reachable || !n.images) {
      out += csvLine([n.node, false, '', '', '', '', '', n.error ? n.error.message : 'unreachable', '', '', '', '', '', '', '']);
      continue;
    }
    for (const w of warningsOf(n)) out += csvLine([n.node, true, '', '', '', '', '', `warning: ${w.message}`, '', '', '', '', '', '', '']);
    // A node with a guard (or an unreadable record of one): its state in the rule's words (shared/guardState).
    if (n.guard && n.guard.status !== 'absent') out += csvLine([n.node, true, '', '', '', '', '', `guard ${n.guard.status}: ${n.guard.words}`, '', '', '', '', '', '', '']);
    if (n.images.length === 0) out += csvLine([n.node, true, '', '', '', '', '', 'no images', '', '', '', '', '', '', '']);
    const lost = new Map((n.lostPins ?? []).map((l) => [l.ref, l]));
    const protection = protectionOf(n);
    const byImage = refsByImage(n.images);
    for (const i of n.images) {
      const l = lost.get(i.name);
      lost.delete(i.name);
      const p = protection.get(protectionKey(i));
      const image = p ? (p.afterRestart ? 'pinned' : 'unpinned') : '';
      out += csvLine([
        n.node, true, i.name, i.digest, i.imageId, pinReading(i, byImage.get(protectionKey(i))!).pin, i.afterRestart, l ? `${lostPinReason(l, word)} ${i.reason}` : i.reason, i.archive, image, p?.reason ?? '',
        i.need?.verdict ?? '', i.need ? i.need.atRisk : '', i.need ? (i.need.workloads.map(workloadName).join('; ') || i.need.neededBecause) : '', signatureSentence(i.signature),
      ]);
    }
    for (const l of lost.values()) out += csvLine([n.node, true, l.ref, '', l.imageId, '', '', lostPinReason(l, word), l.remedy.archive ?? '', '', '', '', '', '', '']);
    // A needed image the node lacks: a row of its own (no digest or pin: it is not there).
    for (const m of n.needs?.missing ?? []) {
      out += csvLine([n.node, true, m.ref, '', '', '', '', m.because, m.heldBy.join('; '), '', '', 'missing', true, m.workloads.map(workloadName).join('; '), '']);
    }
  }
  return out;
}

export interface CsvRecord {
  /** The line the record starts on (1-based; a quoted line break inside a field does not start a new record). */
  line: number;
  cells: string[];
}

/**
 * RFC 4180 text (csv-parse) into records with their line numbers: quoted fields may hold commas,
 * quotes and line breaks. Blank lines and lines starting with `#` (after blanks) are skipped;
 * records may differ in length (the caller says which is wrong). Throws on malformed quoting.
 */
export function readCsvRecords(text: string): CsvRecord[] {
  const body = text.replace(/^\uFEFF/, '');
  // With `info`, each record comes as { record, info } (csv-parse's types do not follow the option).
  const parsed = parse(body, { info: true, comment: '#', comment_no_infix: true, skip_empty_lines: true, relax_column_count: true }) as unknown as {
    record: string[];
    info: { bytes: number };
  }[];
  // info.bytes is where the record ends (UTF-8 bytes); its start line is the end line less the
  // line breaks inside its quoted fields.
  const buf = Buffer.from(body, 'utf8');
  const out: CsvRecord[] = [];
  let pos = 0;
  let newlines = 0;
  for (const { record, info } of parsed) {
    const end = Math.max(0, info.bytes - 1);
    for (; pos < end; pos++) if (buf[pos] === 0x0a) newlines++;
    const inside = record.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0);
    if (record.length === 1 && record[0]!.trim() === '') continue;
    if (record[0]!.trim().startsWith('#')) continue;
    out.push({ line: newlines + 1 - inside, cells: record });
  }
  return out;
}

/** Parses RFC 4180 text into rows (quoted fields may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  return parse(text, { skip_empty_lines: true, relax_column_count: true }) as string[][];
}
