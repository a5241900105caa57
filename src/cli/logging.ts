// The CLI's log: silent unless asked (`--verbose`, or HOLDFAST_LOG=debug|info|warn|error), then
// one line per core record on stderr, so stdout stays what scripts parse (--json, tables, the
// URL `holdfast serve` prints). Records arrive redacted (src/core/log.ts).
import { formatRecord, logger, logLevelFromEnv, redactText, setLogSink, type LogLevel } from '../core/log';
import { logLevelSetting } from '../core/env';

/** --verbose means debug; otherwise HOLDFAST_LOG, else nothing at all. */
export function cliLogLevel(verbose: boolean, env: string | undefined = logLevelSetting()): LogLevel | 'silent' {
  if (verbose) return 'debug';
  return logLevelFromEnv(env) ?? 'silent';
}

export function startCliLog(opts: { verbose: boolean; err: (line: string) => void; env?: string }): void {
  const level = cliLogLevel(opts.verbose, opts.env ?? logLevelSetting());
  setLogSink(level === 'silent' ? null : (r) => opts.err(formatRecord(r)), level === 'silent' ? undefined : level);
}

const crashLog = logger('cli');
let installed = false;

/**
 * A bug that escapes every command (an uncaught exception, a rejection nobody awaited) is logged
 * with its stack, then ends the process with exit 1 and one clear line instead of Node's dump.
 * Once per process.
 */
export function catchCliCrashes(err: (line: string) => void, exit: (code: number) => void = (c) => process.exit(c), proc: NodeJS.EventEmitter = process): void {
  if (installed && proc === process) return;
  if (proc === process) installed = true;
  const die = (what: string, e: unknown) => {
    crashLog.error(what, { err: e });
    const message = e instanceof Error ? e.message : String(e);
    err(`holdfast: internal error: ${redactText(message)} (run again with --verbose for details)`);
    exit(1);
  };
  proc.on('uncaughtException', (e: unknown) => die('uncaught exception', e));
  proc.on('unhandledRejection', (e: unknown) => die('unhandled promise rejection', e));
}
