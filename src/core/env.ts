// Every HOLDFAST_* environment variable Holdfast reads, with its meaning and default, and the one
// place they are read from: a file elsewhere in src/ that reads process.env.HOLDFAST_* fails
// test/unit/core/env.test.ts, which also checks each one is in docs/cli.md's Environment table.
// The accessors take the environment as a parameter (default: the process's) so a test can pass
// its own. No imports: the CLI loads this at start, before anything else is needed.

type Env = NodeJS.ProcessEnv;

/** The variables, what each means, and what applies when it is unset. */
export const HOLDFAST_ENV = {
  HOLDFAST_HOME: { meaning: 'where configuration, the audit log and caches live', default: "the OS's per-user config dir (~/.config/holdfast on Linux)" },
  HOLDFAST_LOG: { meaning: 'log level: debug, info, warn or error (silent/off/none: no log)', default: 'the CLI logs nothing (--verbose: debug); the app logs info' },
  HOLDFAST_CODE_CACHE: { meaning: '`off`: the CLI keeps no V8 code cache in out/cli-cache', default: 'the code cache is used' },
  HOLDFAST_OPENSSH: { meaning: '`off`: uploads over SFTP only; or the path of the ssh client to use', default: '`ssh` on PATH' },
  HOLDFAST_PROTO_DIR: { meaning: "the directory holding containerd's .proto files", default: 'the packaged app\'s resources, else proto/ in the checkout' },
  HOLDFAST_RENDERER_DIR: { meaning: 'the serve command: the directory of the built UI (index.html)', default: 'out/renderer of the app' },
  HOLDFAST_BZIP2_JS: { meaning: '`1`: decompress bzip2 archives in JavaScript, not with the bzip2 program', default: 'the bzip2 program when on PATH' },
  // Read by bin/entry.mjs (plain JavaScript, before any of src/ loads), listed here to be documented with the others.
  HOLDFAST_CLI: { meaning: '`bundle` or `tsx`: in a checkout, which build bin/holdfast.mjs runs', default: 'the bundle while it is fresh' },
} as const satisfies Record<string, { meaning: string; default: string }>;

export type HoldfastVariable = keyof typeof HOLDFAST_ENV;

/** A variable's value; unset and empty both give undefined (an empty value means "not set"). */
function read(name: HoldfastVariable, env: Env): string | undefined {
  return env[name] || undefined;
}

export const homeOverride = (env: Env = process.env): string | undefined => read('HOLDFAST_HOME', env);
/** The raw level text; src/core/log.ts (logLevelFromEnv) says what it means. */
export const logLevelSetting = (env: Env = process.env): string | undefined => read('HOLDFAST_LOG', env);
export const codeCacheOff = (env: Env = process.env): boolean => read('HOLDFAST_CODE_CACHE', env) === 'off';
/** `off`, a path to an ssh client, or undefined (find `ssh` on PATH). */
export const opensshSetting = (env: Env = process.env): string | undefined => read('HOLDFAST_OPENSSH', env);
export const protoDirOverride = (env: Env = process.env): string | undefined => read('HOLDFAST_PROTO_DIR', env);
export const rendererDirOverride = (env: Env = process.env): string | undefined => read('HOLDFAST_RENDERER_DIR', env);
export const bzip2InJs = (env: Env = process.env): boolean => read('HOLDFAST_BZIP2_JS', env) === '1';
