// The desktop app's log: every core record (already redacted by src/core/log.ts) goes to a
// rotating file in the app's logs dir, written by electron-log's file transport. electron-log/node
// rather than electron-log/main: the main flavour registers an IPC listener and handler
// (__ELECTRON_LOG__) on import, for renderers to log through, and Holdfast's sandboxed renderer
// reaches main only through the contract's channels. The path is the one the main flavour would
// pick: app.getPath('logs') — ~/.config/holdfast/logs on Linux, ~/Library/Logs/holdfast on macOS,
// %APPDATA%\holdfast\logs on Windows. No electron runtime import here, so tests run it in Node.
import log from 'electron-log/node';
import path from 'node:path';
import { formatRecord, logger, logLevelFromEnv, setLogSink, type LogLevel } from '../core/log';

export const LOG_FILE_NAME = 'main.log';
/** main.log is renamed to main.old.log past this size (electron-log's rotation), so ≤ 2 × this on disk. */
export const LOG_MAX_BYTES = 2 * 1024 * 1024;

export interface FileLogOptions {
  /** app.getPath('logs') in the app. */
  dir: string;
  /** Default: HOLDFAST_LOG, else info. */
  level?: LogLevel;
  maxBytes?: number;
  /** Also print to stderr (development). */
  console?: boolean;
}

/** Installs the file sink; returns the log file's path (for the "details in …" of an error box). */
export function startFileLog(opts: FileLogOptions): string {
  const file = path.join(opts.dir, LOG_FILE_NAME);
  const env = logLevelFromEnv();
  const level: LogLevel | 'silent' = opts.level ?? env ?? 'info';

  const t = log.transports;
  t.file.resolvePathFn = () => file;
  t.file.maxSize = opts.maxBytes ?? LOG_MAX_BYTES;
  // The record is formatted already (time, level, scope, message, context): one line as is.
  t.file.format = '{text}';
  t.file.level = 'silly';
  // Only this user may read it: hosts, users and node names are in it (never a secret).
  t.file.writeOptions = { flag: 'a', mode: 0o600, encoding: 'utf8' };
  t.console.level = opts.console ? 'silly' : false;
  t.console.format = '{text}';
  // No network, ever: electron-log's HTTP transport (off by default) and its renderer bridge go.
  const all = t as unknown as Record<string, unknown>;
  all.remote = null;
  all.ipc = null;

  if (level === 'silent') {
    setLogSink(null);
    return file;
  }
  setLogSink((r) => log[r.level](formatRecord(r)), level);
  return file;
}

const crashLog = logger('main');

/**
 * Main-process errors nobody caught: logged (redacted, with their stack) instead of lost.
 * `report` is told about uncaught exceptions so the person sees one (Electron's own dialog is
 * replaced by listening at all); rejections are logged only, as Electron would go on.
 */
export function catchProcessErrors(report: (err: unknown) => void, proc: NodeJS.EventEmitter = process): void {
  proc.on('uncaughtException', (err: unknown) => {
    crashLog.error('uncaught exception', { err });
    try {
      report(err);
    } catch {
      // the report itself failed (no display?): the log has it
    }
  });
  proc.on('unhandledRejection', (reason: unknown) => {
    crashLog.error('unhandled promise rejection', { reason });
  });
}
