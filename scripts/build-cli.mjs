#!/usr/bin/env node
// `npm run build:cli`: the CLI prebuilt in out/cli, so `holdfast` starts without compiling
// TypeScript (bin/holdfast.mjs uses it while it is fresh):
//   holdfast.cjs  the CLI and its dependencies in one CommonJS file (minified). A command
//                 group's code and the core behind it are evaluated only when that command runs
//                 (each dynamic import is a lazily initialised module), and being CommonJS it can
//                 be started from a V8 code cache, which Node 20 offers only to scripts.
//   holdfast.mjs  what bin/holdfast.mjs imports: runs holdfast.cjs through that cache.
//   inputs.json   the sources it was built from, for bin/entry.mjs's freshness check.
// ssh2's native addons stay in node_modules (see nativeAddons).
import { rmSync } from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { assertAscii, buildInto, cjsOptions, common, nativeAddons, root, ssh2ClientOnly } from './cli-bundle.mjs';

export const outdir = path.join(root, 'out', 'cli');

export async function buildCli(dir = outdir) {
  // The code caches of the previous bundle (bundleEntry.ts) are no use to this one.
  rmSync(path.join(dir, '..', 'cli-cache'), { recursive: true, force: true });
  return buildInto(dir, async (scratch) => {
    const cli = await esbuild.build({
      ...cjsOptions,
      entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
      outfile: path.join(scratch, 'holdfast.cjs'),
      plugins: [nativeAddons('external'), ssh2ClientOnly()],
    });
    assertAscii(path.join(scratch, 'holdfast.cjs')); // bundleEntry reads it as latin1
    const entry = await esbuild.build({
      ...common,
      entryPoints: [path.join(root, 'src', 'cli', 'bundleEntry.ts')],
      format: 'esm',
      outfile: path.join(scratch, 'holdfast.mjs'),
    });
    return [cli, entry];
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  await buildCli();
  console.log(`built ${path.relative(process.cwd(), outdir)}/holdfast.cjs in ${Date.now() - t0} ms`);
}
