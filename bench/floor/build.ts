// Builds bench/floor into out/bench-floor (inside the repo: the bundle finds ssh2's native crypto in node_modules).
import path from 'node:path';
import * as esbuild from 'esbuild';
// @ts-expect-error -- plain .mjs build scripts, no type declarations
import { cjsOptions, common, nativeAddons, root, ssh2ClientOnly } from '../../scripts/cli-bundle.mjs';

export async function buildFloor(): Promise<string> {
  const dir = path.join(root as string, 'out', 'bench-floor');
  await esbuild.build({ ...cjsOptions, metafile: false, entryPoints: [path.join(import.meta.dirname, 'sshTrue.ts')], outfile: path.join(dir, 'floor.cjs'), plugins: [nativeAddons('external'), ssh2ClientOnly()] });
  await esbuild.build({ ...common, metafile: false, entryPoints: [path.join(import.meta.dirname, 'entry.ts')], format: 'esm', outfile: path.join(dir, 'entry.mjs') });
  return path.join(dir, 'entry.mjs');
}
