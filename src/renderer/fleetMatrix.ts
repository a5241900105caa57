// Pure view model of the fleet matrix: rows are image names (tags; a digest reference is folded
// into the tag of the same image on that node), columns are nodes. Works on partial results
// (nodes that have not answered yet are "pending") so the matrix fills in as fleet.node events
// arrive. No React, no DOM — unit-tested in test/unit/renderer.
import type { GuardView } from '../shared/guardState';
import type { ErrorInfo } from '../shared/domain/errors';
import type { ImageRef } from '../shared/domain/images';
import type { Distro, NodeWarning } from '../shared/domain/nodes';
import type { PinState } from '../shared/domain/pins';
import type { FleetNodeResult, FleetReport } from '../shared/fleet';
import { nodeWarnings } from '../shared/nodeWarnings';
import { imageProtection, losesPin, losingOf, protectionKey, type ImageProtection } from '../shared/protection';
import { criPinning } from '../shared/versions';
import { foldRefs, isDrift, isDriftRow, isPinnedNow, strongestPin } from '../shared/drift';
import { compareText } from '../shared/compareText';
import { distroDisplayName } from '../shared/distro';
import { atRiskOf, satisfies, type AtRiskImage } from '../shared/needs';
import { unverifiedImageCount } from '../shared/signatures';

export { foldRefs };

export type CellPin = PinState | 'missing' | 'unknown';

export interface MatrixCell {
  pin: CellPin;
  /** The image of this row on this node loses its pin at the next k3s start, as kubelet sees it (shared/protection). */
  atRisk: boolean;
  /** The references folded into this cell (the tag and its digest references). */
  refs: string[];
  reason: string;
  /**
   * The site needs this image on this node and it is at risk there — missing, not pinned, or
   * losing its pin (shared/needs atRiskOf, as the node's result says); null otherwise.
   */
  need: AtRiskImage | null;
}

export interface MatrixColumn {
  node: string;
  group: string | null;
  status: 'pending' | 'ok' | 'unreachable';
  error: ErrorInfo | null;
  /** Images on this node losing their pin at the next start (shared/protection, per image id). */
  losingPins: number;
  /** Durable pins Holdfast made on this node that are gone already. */
  lostPins: number;
  /** Needed images at risk on this node (shared/needs atRiskOf), missing ones included. */
  neededAtRisk: number;
  /** Images on this node without a verified signature (shared/signatures); null while its images are unknown. */
  unverified: number | null;
  /** What the node's versions mean for pins (as the report says, else from its versions). */
  warnings: NodeWarning[];
  /** The node's guard as the inspection judged it (shared/guardState); null while unknown or unreachable. */
  guard: GuardView | null;
  /** null while unknown (no report yet, or no disk figures). */
  lowDisk: boolean | null;
  freeBytes: number | null;
  /** The node's distro ('unknown' until its versions are read): its texts name it (shared/distro distroDisplayName). */
  distro: Distro;
}

export interface MatrixRow {
  name: string;
  /** One per column, in column order. */
  cells: MatrixCell[];
  /** Missing on some reachable node, or pinned now on some and not on others. */
  drift: boolean;
  missing: boolean;
  atRisk: boolean;
  /** A node that needs the image has it at risk, or lacks it. */
  neededAtRisk: boolean;
}

export interface FleetMatrix {
  columns: MatrixColumn[];
  rows: MatrixRow[];
}

export type ProblemFilter = 'all' | 'needed' | 'atRisk' | 'drift' | 'missing' | 'unreachable';

/** One node's cell: the strongest pin label among the row's references, the image's verdict from the one model. */
function cellOf(refs: ImageRef[], protection: Map<string, ImageProtection>): MatrixCell {
  const pin = strongestPin(refs);
  const images = refs.map((r) => protection.get(protectionKey(r))).filter((p): p is ImageProtection => p !== undefined);
  const risky = images.find(losesPin);
  return { pin, atRisk: Boolean(risky), refs: refs.map((r) => r.name), reason: (risky ?? images[0])?.reason ?? refs[0]?.reason ?? '', need: null };
}

/** Drift of a row over the given cells (shared/drift, the rule of the fleet report); unknown cells do not count. */
function rowDrift(name: string, cells: readonly MatrixCell[]): boolean {
  if (!isDriftRow(name)) return false;
  const states = cells.flatMap((c) => (c.pin === 'unknown' ? [] : [c.pin === 'missing' ? ('missing' as const) : isPinnedNow({ pin: c.pin })]));
  return isDrift(states);
}

const MISSING: MatrixCell = { pin: 'missing', atRisk: false, refs: [], reason: '', need: null };
const UNKNOWN: MatrixCell = { pin: 'unknown', atRisk: false, refs: [], reason: '', need: null };

/** A node's needed images at risk (shared/needs atRiskOf), by reference for the ones it has, and the ones it lacks. */
interface NodeNeedsAtRisk {
  byRef: Map<string, AtRiskImage>;
  missing: AtRiskImage[];
  count: number;
}

function needsAtRiskOf(r: FleetNodeResult): NodeNeedsAtRisk {
  const list = atRiskOf(r.images, r.needs);
  const byRef = new Map<string, AtRiskImage>();
  const missing: AtRiskImage[] = [];
  for (const a of list) {
    if (a.verdict === 'missing') missing.push(a);
    else for (const ref of a.refs) byRef.set(ref, a);
  }
  return { byRef, missing, count: list.length };
}

/**
 * Build the matrix for `nodes` (column order) from the results received so far. `report`, when
 * complete, supplies the low-disk verdicts (its rule); `groups` maps node → group.
 */
export function buildMatrix(
  nodes: readonly string[],
  results: Readonly<Record<string, FleetNodeResult>>,
  opts: { report?: FleetReport | null; groups?: Readonly<Record<string, string | undefined>> } = {},
): FleetMatrix {
  const lowDisk = new Map(opts.report?.summary.atRisk.map((r) => [r.node, r.lowDisk]) ?? []);
  const folded = new Map<string, Map<string, ImageRef[]>>();
  const protections = new Map<string, Map<string, ImageProtection>>();
  const needs = new Map<string, NodeNeedsAtRisk>();
  const columns: MatrixColumn[] = nodes.map((node) => {
    const r = results[node];
    const status = !r ? 'pending' : r.reachable ? 'ok' : 'unreachable';
    const distro = r?.versions?.distro ?? 'unknown';
    const protection = imageProtection(r?.images ?? [], criPinning(r?.versions?.containerdVersion), distroDisplayName(distro));
    if (r?.reachable && r.images) {
      folded.set(node, foldRefs(r.images));
      protections.set(node, protection);
      needs.set(node, needsAtRiskOf(r));
    }
    return {
      node,
      group: opts.groups?.[node] ?? null,
      status,
      error: r?.error ?? null,
      losingPins: losingOf(protection).length,
      lostPins: r?.lostPins?.length ?? 0,
      neededAtRisk: needs.get(node)?.count ?? 0,
      unverified: r?.reachable && r.images ? unverifiedImageCount(r.images) : null,
      warnings: r ? (r.warnings ?? nodeWarnings(r.versions)) : [],
      guard: r?.guard ?? null,
      lowDisk: opts.report ? (lowDisk.get(node) ?? false) : null,
      freeBytes: r?.disk?.freeBytes ?? null,
      distro,
    };
  });
  const names = new Set<string>();
  for (const m of folded.values()) for (const k of m.keys()) names.add(k);
  // A needed image a node lacks is a row: the row of another node's image that satisfies the
  // need (the same name, or for a pull by digest a reference of its repository with that digest),
  // else a row of its own.
  const missingNeeds = new Map<string, Map<string, AtRiskImage>>();
  for (const [node, n] of needs) {
    for (const m of n.missing) {
      const ref = m.refs[0]!;
      let row = names.has(ref) ? ref : undefined;
      for (const rows of folded.values()) {
        if (row) break;
        for (const [name, refs] of rows) {
          if (refs.some((x) => satisfies(ref, x))) {
            row = name;
            break;
          }
        }
      }
      row ??= ref;
      names.add(row);
      if (!missingNeeds.has(node)) missingNeeds.set(node, new Map());
      missingNeeds.get(node)!.set(row, m);
    }
  }
  const rows: MatrixRow[] = [];
  for (const name of [...names].sort(compareText)) {
    const cells = columns.map((c) => {
      if (c.status !== 'ok') return UNKNOWN;
      const refs = folded.get(c.node)?.get(name);
      if (!refs) {
        const need = missingNeeds.get(c.node)?.get(name);
        return need ? { ...MISSING, need } : MISSING;
      }
      const cell = cellOf(refs, protections.get(c.node)!);
      const byRef = needs.get(c.node)?.byRef;
      const need = byRef ? refs.map((x) => byRef.get(x.name)).find((a) => a !== undefined) : undefined;
      return need ? { ...cell, need } : cell;
    });
    const missing = cells.some((c) => c.pin === 'missing');
    rows.push({ name, cells, missing, drift: rowDrift(name, cells), atRisk: cells.some((c) => c.atRisk), neededAtRisk: cells.some((c) => c.need !== null) });
  }
  return { columns, rows };
}

/** Rows and columns left after the filters. Column indexes refer to `matrix.columns`. */
export function filterMatrix(
  matrix: FleetMatrix,
  f: { group: string; problem: ProblemFilter; query: string },
): { columns: number[]; rows: MatrixRow[] } {
  let columns = matrix.columns.map((_, i) => i).filter((i) => !f.group || matrix.columns[i]!.group === f.group);
  if (f.problem === 'unreachable') columns = columns.filter((i) => matrix.columns[i]!.status === 'unreachable');
  const q = f.query.trim().toLowerCase();
  const rows = matrix.rows.filter((r) => {
    if (q && !r.name.toLowerCase().includes(q)) return false;
    const cells = columns.map((i) => r.cells[i]!);
    if (f.problem === 'needed') return cells.some((c) => c.need !== null);
    if (f.problem === 'atRisk') return cells.some((c) => c.atRisk);
    if (f.problem === 'missing') return cells.some((c) => c.pin === 'missing');
    if (f.problem === 'drift') return rowDrift(r.name, cells);
    // Any other view: rows with nothing in the visible columns are noise.
    return f.group ? cells.some((c) => c.pin !== 'missing' || c.need !== null) || cells.every((c) => c.pin === 'unknown') : true;
  });
  return { columns, rows };
}

export interface MatrixSummary {
  answered: number;
  total: number;
  unreachable: number;
  nodesAtRisk: number;
  /** Needed images at risk over the nodes that answered (missing ones included). */
  neededAtRisk: number;
  losingPins: number;
  lostPins: number;
  drift: number;
  /** null until the report's disk verdicts are in. */
  lowDisk: number | null;
}

export function summarizeMatrix(m: FleetMatrix): MatrixSummary {
  const answered = m.columns.filter((c) => c.status !== 'pending').length;
  const known = m.columns.every((c) => c.lowDisk !== null);
  return {
    answered,
    total: m.columns.length,
    unreachable: m.columns.filter((c) => c.status === 'unreachable').length,
    nodesAtRisk: m.columns.filter((c) => c.status === 'unreachable' || c.neededAtRisk > 0 || c.losingPins > 0 || c.lostPins > 0 || c.warnings.length > 0 || c.lowDisk === true).length,
    neededAtRisk: m.columns.reduce((s, c) => s + c.neededAtRisk, 0),
    losingPins: m.columns.reduce((s, c) => s + c.losingPins, 0),
    lostPins: m.columns.reduce((s, c) => s + c.lostPins, 0),
    drift: m.rows.filter((r) => r.drift).length,
    lowDisk: known && m.columns.length > 0 ? m.columns.filter((c) => c.lowDisk).length : null,
  };
}
