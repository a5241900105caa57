// What the two CLI builds share (scripts/build-cli.mjs: the npm bundle; scripts/build-cli-exe.mjs:
// the standalone executable): esbuild options, the native-addon rule and the freshness manifest
// bin/entry.mjs reads.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');

/** Options both builds use. */
export const common = {
  bundle: true,
  platform: 'node',
  target: 'node20.10',
  // Smaller code parses faster at every start; names are kept short too (nothing in the CLI
  // depends on function or class names: errors are told apart by code, not by name).
  minify: true,
  // No source maps: errors reach the user as one line, and a stack trace is for the sources (tsx).
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
  absWorkingDir: root,
};

/** The CLI as one CommonJS file (src/cli/main.ts exports main). */
export const cjsOptions = {
  ...common,
  format: 'cjs',
  // appPaths finds proto/ and out/renderer from import.meta.url, which CommonJS has not: the
  // bundle's own location (the executable's, in the standalone file).
  define: { 'import.meta.url': '__hf_import_meta_url' },
  banner: { js: 'var __hf_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
};

/**
 * ssh2's optional native parts (cpu-features, its sshcrypto.node) are compiled by npm for the
 * Node that installed them. `mode: 'external'` keeps loading them from the installed ssh2
 * (a bare path, so npm's hoisting does not matter); `mode: 'absent'` (the standalone file,
 * which can load no addon) makes each require throw, which ssh2 catches: it falls back to its
 * pure-JS ciphers.
 */
export function nativeAddons(mode) {
  return {
    name: 'holdfast:native-addons',
    setup(build) {
      build.onResolve({ filter: /\.node$|^cpu-features$/ }, (args) => {
        if (mode === 'absent') return { path: args.path, namespace: 'holdfast-absent' };
        if (args.path === 'cpu-features') return { path: args.path, external: true };
        const abs = path.resolve(args.resolveDir, args.path);
        const marker = `${path.sep}node_modules${path.sep}`;
        const i = abs.lastIndexOf(marker);
        if (i < 0) throw new Error(`native addon outside node_modules: ${abs}`);
        return { path: abs.slice(i + marker.length).split(path.sep).join('/'), external: true };
      });
      build.onLoad({ filter: /.*/, namespace: 'holdfast-absent' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`${args.path} is not part of the standalone executable`)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * `ssh2` as the CLI uses it: its Client, its key parser and BaseAgent (the default key files are
 * offered as an agent, src/core/ssh/auth.ts). ssh2's index also loads its SSH
 * server, key generator and HTTP(S) agents (and with them node:http, node:https and node:tls),
 * about 40 % of its load time at every start, for nothing the CLI calls. Anything else read from
 * it throws, naming this file, so a new use shows up in the first test that runs the bundle
 * rather than as `undefined` somewhere.
 */
export function ssh2ClientOnly() {
  return {
    name: 'holdfast:ssh2-client-only',
    setup(build) {
      build.onResolve({ filter: /^ssh2$/ }, () => ({ path: 'ssh2', namespace: 'holdfast-ssh2' }));
      build.onLoad({ filter: /.*/, namespace: 'holdfast-ssh2' }, () => ({
        contents: `const used = { Client: require('ssh2/lib/client.js'), BaseAgent: require('ssh2/lib/agent.js').BaseAgent, utils: { parseKey: require('ssh2/lib/protocol/keyParser.js').parseKey } };
module.exports = new Proxy(used, {
  get(t, k) {
    if (k in t || typeof k === 'symbol' || k === '__esModule') return t[k];
    throw new Error('ssh2.' + String(k) + ' is not in the CLI bundle (see ssh2ClientOnly in scripts/cli-bundle.mjs)');
  },
});`,
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}

/** The repo-relative source files a build read (node_modules excepted), for freshness checks. */
export function sourceInputs(metafile) {
  return Object.keys(metafile.inputs)
    .filter((p) => !p.includes('node_modules/') && !p.includes(':'))
    .sort();
}

/**
 * Runs `build(scratch)` (esbuild runs writing into scratch, resolving to their results) in a
 * scratch directory next to `outdir`, then swaps it in, so a concurrent `holdfast` (or a second
 * build) never sees a half-written bundle.
 */
export async function buildInto(outdir, build) {
  const builtAt = Date.now();
  const scratch = `${outdir}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const results = await build(scratch);
  // When the build started (a source saved while esbuild ran is newer than the bundle), and
  // what it read; dependencies count too: a new lock file means new node_modules.
  const inputs = new Set(results.flatMap((r) => sourceInputs(r.metafile)));
  const manifest = { builtAt, inputs: [...inputs, 'package.json', 'package-lock.json'] };
  writeFileSync(path.join(scratch, 'inputs.json'), JSON.stringify(manifest, null, 1) + '\n');
  const old = `${outdir}.old-${process.pid}`;
  rmSync(old, { recursive: true, force: true });
  try {
    renameSync(outdir, old);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  renameSync(scratch, outdir);
  rmSync(old, { recursive: true, force: true });
  return results;
}

/**
 * Throws unless `file` is plain ASCII. The CLI's entry reads its bundle as latin1, which for
 * ASCII is the same text and about twice as fast to read as UTF-8 at every start. esbuild
 * escapes every other character itself, except inside tagged templates (whose raw text the tag
 * can read): write those with an escape or an HTML entity.
 */
export function assertAscii(file) {
  const bytes = readFileSync(file);
  const i = bytes.findIndex((b) => b > 0x7f);
  const text = bytes.toString('latin1');
  if (i >= 0) throw new Error(`${file} is not ASCII at offset ${i} (…${text.slice(Math.max(0, i - 40), i + 10)}…): escape the character in its source`);
}
