// What a node's guard last did (#50), as `holdfast guard` records it on the node after every run
// and `holdfast inspect` and the app read it back over SSH: the record's format, its bounded and
// never-throwing parse (the file is the node's, so anything may be in it), and the one rule that
// judges it: running, failing, stale (not run for over two of its intervals), absent or unreadable.
import * as z from 'zod';
import type { LostPinKind } from './domain/lostPins';
import { jsonNestingDepth } from './jsonDepth';

export const GUARD_STATE_API_VERSION = 'holdfast/v1';
export const GUARD_STATE_KIND = 'GuardState';
/** References listed per list; the counts say how many there were in all. */
export const GUARD_STATE_MAX_LIST = 200;
/** A guard is called stopped when its last run is older than this many of its intervals. */
export const GUARD_STALE_INTERVALS = 2;
const MAX_REF = 512;
const MAX_TEXT = 1000;
const MAX_DEPTH = 8;

const lostKind = z.enum(['label-removed', 'ref-deleted', 'image-deleted', 'k3s-managed-again'] satisfies LostPinKind[]);

export const guardStateSchema = z.strictObject({
  apiVersion: z.literal(GUARD_STATE_API_VERSION),
  kind: z.literal(GUARD_STATE_KIND),
  node: z.string().min(1).max(253),
  pinSet: z.strictObject({
    name: z.string().min(1).max(253),
    /** sha256 of the pin set file's bytes; null when the run could not read it. */
    digest: z.string().regex(/^sha256:[0-9a-f]{64}$/).nullable(),
  }),
  /** When the run ended (the node's clock). */
  time: z.iso.datetime({ offset: true }),
  /** How often the guard runs (its loop or timer), in seconds. */
  intervalSeconds: z.number().int().min(1).max(31 * 86_400),
  ok: z.boolean(),
  /** Why the run failed (ok false): the error as guard printed it. */
  error: z.string().max(MAX_TEXT).optional(),
  fixed: z.array(z.strictObject({ ref: z.string().max(MAX_REF), restored: lostKind.optional() })).max(GUARD_STATE_MAX_LIST),
  fixedCount: z.number().int().min(0),
  missing: z.array(z.string().max(MAX_REF)).max(GUARD_STATE_MAX_LIST),
  missingCount: z.number().int().min(0),
  /** References pinned although they fail the pin set's signature requirement (absent in older records). */
  unverified: z.array(z.string().max(MAX_REF)).max(GUARD_STATE_MAX_LIST).default([]),
  unverifiedCount: z.number().int().min(0).default(0),
  durable: z.number().int().min(0),
  warnings: z.array(z.string().max(MAX_TEXT)).max(20).optional(),
});

export type GuardState = z.infer<typeof guardStateSchema>;

/** What was found at the node's guard state path. */
export type GuardStateRead = { found: 'absent' } | { found: 'unreadable'; why: string } | { found: 'read'; record: GuardState };

export type GuardStatus = 'running' | 'failing' | 'stale' | 'absent' | 'unreadable';

/** A state in two or three words, for a badge; guardWords says the rest. */
export const GUARD_STATUS_LABEL: Record<GuardStatus, string> = {
  running: 'guard running',
  failing: 'guard failing',
  stale: 'guard stopped',
  absent: 'no guard',
  unreadable: 'guard state unreadable',
};

/** The judged state of a node's guard, as JSON, CSV, HTML, the terminal and the app show it. */
export interface GuardView {
  status: GuardStatus;
  /** One line in plain words (guardWords). */
  words: string;
  /** Unreadable: why. */
  why?: string;
  pinSet?: { name: string; digest: string | null };
  lastRun?: string;
  intervalSeconds?: number;
  error?: string;
  fixed?: GuardState['fixed'];
  fixedCount?: number;
  missing?: string[];
  missingCount?: number;
  unverified?: string[];
  unverifiedCount?: number;
  durable?: number;
}

/** A run as the record keeps it: every list cut at GUARD_STATE_MAX_LIST, the counts whole. */
export function guardStateRecord(run: Omit<GuardState, 'apiVersion' | 'kind' | 'fixedCount' | 'missingCount' | 'unverified' | 'unverifiedCount'> & { unverified?: string[] }): GuardState {
  const unverified = run.unverified ?? [];
  const cut = (s: string) => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s);
  return {
    apiVersion: GUARD_STATE_API_VERSION,
    kind: GUARD_STATE_KIND,
    ...run,
    ...(run.error !== undefined ? { error: cut(run.error) } : {}),
    fixed: run.fixed.slice(0, GUARD_STATE_MAX_LIST),
    fixedCount: run.fixed.length,
    missing: run.missing.slice(0, GUARD_STATE_MAX_LIST),
    missingCount: run.missing.length,
    unverified: unverified.slice(0, GUARD_STATE_MAX_LIST),
    unverifiedCount: unverified.length,
    ...(run.warnings ? { warnings: run.warnings.slice(0, 20).map(cut) } : {}),
  };
}

/** A state file over the bound, unread. */
export function guardStateTooLarge(bytes: number, maxBytes: number): GuardStateRead {
  return { found: 'unreadable', why: `it is ${bytes} bytes, more than a guard writes (${maxBytes})` };
}

/** The text of a state file (null: there is none), never throwing: a record, or why it is unreadable. */
export function parseGuardState(text: string | null, maxBytes: number): GuardStateRead {
  if (text === null) return { found: 'absent' };
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) return guardStateTooLarge(bytes, maxBytes);
  if (jsonNestingDepth(text, MAX_DEPTH) > MAX_DEPTH) return { found: 'unreadable', why: 'it nests deeper than a guard writes' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { found: 'unreadable', why: 'it is not JSON' };
  }
  const parsed = guardStateSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'the record';
    return { found: 'unreadable', why: `it is not a guard's record (${field}: ${issue.message.slice(0, 120)})` };
  }
  const r = parsed.data;
  if (r.fixedCount < r.fixed.length || r.missingCount < r.missing.length || r.unverifiedCount < r.unverified.length) return { found: 'unreadable', why: "it is not a guard's record (a count is below its list)" };
  return { found: 'read', record: r };
}

/** "2026-12-07 22:40 UTC": a run's time, the same in every view. */
export function guardTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const every = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);
const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;

/** The view's one line: what a person reads in a table cell. */
export function guardWords(v: Omit<GuardView, 'words'>): string {
  if (v.status === 'absent') return 'no guard';
  if (v.status === 'unreadable') return `unreadable guard state: ${v.why ?? 'unknown'}`;
  const set = `pin set ${v.pinSet?.name ?? '?'}`;
  const last = guardTime(v.lastRun ?? '');
  if (v.status === 'stale') return `guard not running since ${last} (${set}, runs every ${every(v.intervalSeconds ?? 0)})`;
  if (v.status === 'failing') return `guard failing: its run at ${last} failed (${v.error ?? 'no reason recorded'})`;
  const fixed = v.fixed ?? [];
  const restored = fixed.filter((f) => f.restored).length;
  const made = v.fixedCount ? `made ${n(v.fixedCount, 'reference')} durable${restored ? ` (${restored} restored)` : ''}` : 'nothing to fix';
  const missing = v.missingCount ? `; could not fix ${n(v.missingCount, 'missing image')}` : '';
  const unverified = v.unverifiedCount ? `; ${n(v.unverifiedCount, 'unverified image')}` : '';
  return `guard keeps ${set}, last ran ${last}: ${made}${missing}${unverified}`;
}

/**
 * The rule (pure): absent and unreadable as found; a record whose run is older than
 * GUARD_STALE_INTERVALS of its intervals at `nowMs` is stale, whatever it says; else failing when
 * its run failed, running when not. `nowMs` is the inspection's clock, the record's the node's.
 */
export function judgeGuard(read: GuardStateRead, nowMs: number): GuardView {
  if (read.found === 'absent') return withWords({ status: 'absent' });
  if (read.found === 'unreadable') return withWords({ status: 'unreadable', why: read.why });
  const r = read.record;
  const age = (nowMs - Date.parse(r.time)) / 1000;
  const status: GuardStatus = age > GUARD_STALE_INTERVALS * r.intervalSeconds ? 'stale' : r.ok ? 'running' : 'failing';
  return withWords({
    status,
    pinSet: r.pinSet,
    lastRun: r.time,
    intervalSeconds: r.intervalSeconds,
    ...(r.error !== undefined ? { error: r.error } : {}),
    fixed: r.fixed,
    fixedCount: r.fixedCount,
    missing: r.missing,
    missingCount: r.missingCount,
    unverified: r.unverified,
    unverifiedCount: r.unverifiedCount,
    durable: r.durable,
  });
}

function withWords(v: Omit<GuardView, 'words'>): GuardView {
  return { ...v, words: guardWords(v) };
}
