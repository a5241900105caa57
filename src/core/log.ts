// The one logger of the core. Silent until a host process (the app, the CLI, `holdfast serve`)
// installs a sink, so library use and tests print nothing unless they ask. Every record is
// redacted BEFORE any sink sees it: a sink cannot forget to, and a secret that slips into a
// message or a context value (an error's message, a URL with ?token=…, a key file read by
// mistake) is replaced where it stands.
//
// Redaction is defence in depth, not the first line: code never passes passwords, passphrases
// or key material to the logger in the first place.
import { logLevelSetting } from './env';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogContext = Record<string, unknown>;

export interface LogRecord {
  time: Date;
  level: LogLevel;
  /** Which part of Holdfast wrote it: "ssh", "tunnel", "serve", … */
  scope: string;
  message: string;
  /** Already redacted, plain JSON values only. */
  context: LogContext;
}

export type LogSink = (record: LogRecord) => void;

export interface Logger {
  debug(message: string, context?: LogContext): void;
  info(message: string, context?: LogContext): void;
  warn(message: string, context?: LogContext): void;
  error(message: string, context?: LogContext): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

let installed: { sink: LogSink; min: number } | null = null;

/** Installs the process's one sink (null: silent again). Records below `level` are dropped unbuilt. */
export function setLogSink(sink: LogSink | null, level: LogLevel = 'info'): void {
  installed = sink ? { sink, min: ORDER[level] } : null;
}

export function isLogEnabled(level: LogLevel): boolean {
  return installed !== null && ORDER[level] >= installed.min;
}

/**
 * HOLDFAST_LOG as a level: debug|info|warn|error, or silent/off/none. Unset or unknown: null
 * (the caller's default applies), so a typo never silences a host that logs by default.
 */
export function logLevelFromEnv(value: string | undefined = logLevelSetting()): LogLevel | 'silent' | null {
  const v = value?.trim().toLowerCase();
  if (!v) return null;
  if (v === 'silent' || v === 'off' || v === 'none') return 'silent';
  if (v === 'verbose' || v === 'trace') return 'debug';
  return (LOG_LEVELS as string[]).includes(v) ? (v as LogLevel) : null;
}

/** A logger for one part of Holdfast. Cheap: create one per module. */
export function logger(scope: string): Logger {
  const at = (level: LogLevel) => (message: string, context?: LogContext) => emit(level, scope, message, context);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function emit(level: LogLevel, scope: string, message: string, context?: LogContext): void {
  const target = installed;
  if (!target || ORDER[level] < target.min) return;
  let record: LogRecord;
  try {
    record = { time: new Date(), level, scope, message: redactText(message), context: (context ? redact(context) : {}) as LogContext };
  } catch {
    // Logging must never break the operation it describes (e.g. a getter that throws).
    record = { time: new Date(), level, scope, message: redactText(message), context: { context: '[unloggable]' } };
  }
  try {
    target.sink(record);
  } catch {
    // A sink that fails (a full disk, a closed stderr) must not take the caller down with it;
    // there is nowhere left to report it.
  }
}

// ---------------------------------------------------------------------------------------------
// Redaction

export const REDACTED = '[redacted]';

/**
 * Context keys whose values are secrets whatever they hold: passwords, passphrases, tokens
 * (the serve token, bearer headers), secrets, private keys and keyboard-interactive answers.
 * A node's `identity` is a file path and stays; the key's contents are caught by the text rules.
 */
const SECRET_KEY = /pass(word|phrase|wd)|^pw$|token|secret|private_?key|^answers?$|authorization|cookie|credential/i;

/** PEM/OpenSSH private key blocks, including a truncated one that runs to the end of the text. */
const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(-----END ([A-Z0-9]+ )*PRIVATE KEY-----|$)/g;
/** PuTTY's .ppk private part. */
const PUTTY_PRIVATE = /Private-Lines: *\d+[\s\S]*?(Private-MAC: *[0-9a-fA-F]+|$)/g;
/** ?token=… and &token=… in URLs (the address the serve command prints). */
const TOKEN_PARAM = /([?&#](?:access_)?token=)[^&#\s"'<>]+/gi;
/** "password: x", "passphrase=x" in free text. */
const INLINE_SECRET = /\b(password|passphrase|passwd|secret|token)(\s*[=:]\s*)(?!\[redacted\])[^\s,;'"]+/gi;

const secrets = new Set<string>();

/**
 * Registers a value that must never appear in a log line (the serve token: it is printed to the
 * terminal on purpose, so it exists as text). Short values are refused: replacing every "ab"
 * would garble the log without protecting anything. Returns the unregister function.
 */
export function registerSecret(value: string): () => void {
  if (typeof value !== 'string' || value.length < 8) return () => {};
  secrets.add(value);
  return () => void secrets.delete(value);
}

export function redactText(text: string): string {
  let s = text;
  for (const v of secrets) if (s.includes(v)) s = s.split(v).join(REDACTED);
  return s
    .replace(PRIVATE_KEY_BLOCK, '[redacted private key]')
    .replace(PUTTY_PRIVATE, '[redacted private key]')
    .replace(TOKEN_PARAM, `$1${REDACTED}`)
    .replace(INLINE_SECRET, `$1$2${REDACTED}`);
}

const MAX_DEPTH = 6;
const MAX_ITEMS = 100;

/** A JSON-safe, redacted copy of a context value (errors flattened, buffers summarised). */
export function redact(value: unknown): unknown {
  return walk(value, 0, new WeakSet());
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (typeof value !== 'object') return String(value);
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[…]';
  seen.add(value);
  if (value instanceof Error) return walkError(value, depth, seen);
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => walk(v, depth + 1, seen));
    if (value.length > MAX_ITEMS) items.push(`[… ${value.length - MAX_ITEMS} more]`);
    return items;
  }
  if (value instanceof Map) return walk(Object.fromEntries(value), depth, seen);
  if (value instanceof Set) return walk([...value], depth, seen);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (SECRET_KEY.test(k)) {
      out[k] = REDACTED;
      continue;
    }
    const w = walk(v, depth + 1, seen);
    if (w !== undefined) out[k] = w;
  }
  return out;
}

function walkError(err: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const e = err as Error & { code?: unknown; hint?: unknown; level?: unknown; cause?: unknown };
  const out: Record<string, unknown> = { name: e.name, message: redactText(e.message) };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = e.code;
  if (typeof e.hint === 'string') out.hint = redactText(e.hint);
  if (typeof e.level === 'string') out.level = e.level; // ssh2's error levels (client-socket, …)
  if (e.cause !== undefined) out.cause = walk(e.cause, depth + 1, seen);
  // Expected failures (HoldfastError) say everything in their sentence; anything else is a bug
  // whose stack is what finds it. The stack repeats the message, so it is redacted too.
  if (e.name !== 'HoldfastError' && typeof e.stack === 'string') out.stack = redactText(e.stack);
  return out;
}

/** One line per record, for stderr: `2026-…Z debug [ssh] connected {"where":"…"}`. */
export function formatRecord(r: LogRecord): string {
  const ctx = Object.keys(r.context).length ? ` ${JSON.stringify(r.context)}` : '';
  return `${r.time.toISOString()} ${r.level} [${r.scope}] ${r.message.replace(/\r?\n/g, ' ⏎ ')}${ctx}`;
}
