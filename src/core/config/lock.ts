// One writer at a time for a file in $HOLDFAST_HOME: the CLI, the desktop app and `holdfast serve`
// may all change nodes.json (or append to the audit log) at once, and a read-modify-write without
// a lock loses the other writers' changes. Across processes: proper-lockfile (`<file>.lock` by
// mkdir, atomic on local and network file systems; a lock whose mtime is older than `stale` was
// left by a crashed process; removed on exit by signal). Within a process, callers queue on a
// promise chain first, so they do not poll the lock directory against each other. Critical
// sections are a re-read, a check and one atomic write: never hold the lock across the network.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { HoldfastError } from '../errors';
import { logger } from '../log';

const log = logger('config');

/** A lock not refreshed for this long belongs to a process that died (proper-lockfile's minimum is 2 s). */
const STALE_MS = 10_000;
/** How long to wait for another process's lock before giving up with a clear error. */
const WAIT_MS = 30_000;
const RETRY_MIN_MS = 5;
const RETRY_MAX_MS = 100;

const queues = new Map<string, Promise<unknown>>();

function inProcessQueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

export interface FileLockOptions {
  /** Give up after this long waiting for another process (default 30 s). */
  waitMs?: number;
}

/**
 * Runs fn while holding the lock on `file` (which need not exist yet; its directory is created
 * 0700). fn must re-read whatever it is about to change: only what it reads inside sees every
 * earlier writer's change.
 */
export function withFileLock<T>(file: string, fn: () => Promise<T>, opts: FileLockOptions = {}): Promise<T> {
  const abs = path.resolve(file);
  return inProcessQueue(abs, async () => {
    await fs.mkdir(path.dirname(abs), { recursive: true, mode: 0o700 });
    const release = await acquire(abs, opts.waitMs ?? WAIT_MS);
    try {
      return await fn();
    } finally {
      // ERELEASED: the lock was declared compromised meanwhile (see acquire); nothing to remove.
      await release().catch((err: unknown) => log.debug('lock already released (compromised meanwhile)', { file: abs, err }));
    }
  });
}

async function acquire(file: string, waitMs: number): Promise<() => Promise<void>> {
  const started = Date.now();
  let pause = RETRY_MIN_MS;
  for (;;) {
    try {
      return await lockfile.lock(file, {
        realpath: false,
        stale: STALE_MS,
        // The default throws from a timer, which would kill the app's main process. The lock is
        // only "compromised" when its mtime could not be refreshed for STALE_MS (a machine that
        // slept); our sections are far shorter, and the write itself stays atomic.
        onCompromised: () => undefined,
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') {
        throw new HoldfastError('INTERNAL', `Cannot lock ${file}: ${(e as Error).message}.`, {
          hint: `Check that ${path.dirname(file)} is writable by this user.`,
          cause: e,
        });
      }
      if (Date.now() - started >= waitMs) {
        throw new HoldfastError('CONFLICT', `Another Holdfast process has been changing ${path.basename(file)} for over ${Number((waitMs / 1000).toFixed(1))} s; nothing was changed.`, {
          hint: `Try again. If no other Holdfast (CLI, app or serve) is running, remove the stale lock ${file}.lock.`,
          cause: e,
        });
      }
      // Randomised, growing pauses: many waiting processes do not retry in lockstep.
      await new Promise((r) => setTimeout(r, pause / 2 + Math.random() * pause));
      pause = Math.min(RETRY_MAX_MS, pause * 1.5);
    }
  }
}
