// Builds bench/floor's two programs into out/bench-floor (inside the repo: the bundle finds ssh2's native crypto in node_modules).
import path from 'node:path';
import * as esbuild from 'esbuild';
// @ts-expect-error -- plain .mjs build scripts, no type declarations
import { cjsOptions, common, nativeAddons, root, ssh2ClientOnly } from '../../scripts/cli-bundle.mjs';

export async function buildFloor(): Promise<string> {
  const dir = path.join(root as string, 'out', 'bench-floor');
  for (const [entry, out] of [['sshTrue.ts', 'floor.cjs'], ['listNames.ts', 'names.cjs']]) {
    await esbuild.build({ ...cjsOptions, metafile: false, entryPoints: [path.join(import.meta.dirname, entry!)], outfile: path.join(dir, out!), plugins: [nativeAddons('external'), ssh2ClientOnly()] });
  }
  await esbuild.build({ ...common, metafile: false, entryPoints: [path.join(import.meta.dirname, 'entry.ts')], format: 'esm', outfile: path.join(dir, 'entry.mjs') });
  return path.join(dir, 'entry.mjs');
}
