// Runs the CLI bundle (one CommonJS file) with a V8 code cache, so a start deserializes the
// bytecode of the code it runs instead of parsing and compiling ~1.7 MB of JavaScript again.
// Node 20 has only vm.Script's cachedData (module.enableCompileCache() is Node 22). One cache per
// command (the first word of argv): V8 deserializes a whole cache at start, so `--help` must not
// pay for what `images` compiled. Written after a command's first run (missing, or rejected by V8),
// then left alone; HOLDFAST_CODE_CACHE=off skips it. A cache is code this process runs: it is read
// only from a file owned by this user or by the bundle's owner, in a directory next to the bundle
// (or the user's own Holdfast home).
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { codeCacheOff } from '../core/env';

export interface CachedRun<T> {
  exports: T;
  /** Whether V8 took the cache (false: none, rejected, or not trusted). */
  fromCache: boolean;
  /** Writes this command's cache unless V8 took it (a run compiles what the command needs). */
  save(): void;
}

/**
 * The cache's name for a run: its command (first non-option argument), `_` for none, `_other`
 * for anything that is not a plain command word (it becomes part of a file name).
 */
export function cacheKey(args: readonly string[]): string {
  const cmd = args.find((a) => !a.startsWith('-'));
  if (cmd === undefined) return '_';
  return /^[a-z][a-z-]{0,31}$/.test(cmd) ? cmd : '_other';
}

function trusted(file: string, owner: number | undefined): boolean {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid === undefined) return true; // Windows: no uids; the directory is the install's or the user's own
  const st = statSync(file);
  return st.uid === uid || st.uid === owner;
}

/**
 * Evaluates `source` (CommonJS) as the module `filename`, with the code cache in `cacheDir`
 * named `<prefix>-<key>.bin`. `owner`: the uid whose caches are trusted besides this user's.
 */
export function runWithCodeCache<T>(opts: {
  source: string;
  filename: string;
  cacheDir: string;
  prefix: string;
  key: string;
  owner?: number;
  require?: NodeJS.Require;
  env?: NodeJS.ProcessEnv;
}): CachedRun<T> {
  const off = codeCacheOff(opts.env);
  const cacheFile = path.join(opts.cacheDir, `${opts.prefix}-${opts.key}.bin`);
  let cachedData: Buffer | undefined;
  if (!off) {
    try {
      if (trusted(cacheFile, opts.owner)) cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined; // none yet
    }
  }
  const script = new vm.Script(Module.wrap(opts.source), { filename: opts.filename, ...(cachedData ? { cachedData } : {}) });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const mod = { exports: {} as T };
  const fn = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void;
  fn.call(mod.exports, mod.exports, opts.require ?? createRequire(opts.filename), mod, opts.filename, path.dirname(opts.filename));
  return {
    exports: mod.exports,
    fromCache,
    save() {
      if (off || fromCache) return;
      try {
        mkdirSync(opts.cacheDir, { recursive: true });
        // Written beside, then renamed over: a concurrent start reads a whole cache or none.
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // A read-only install: every start compiles, as without a cache.
      }
    },
  };
}
