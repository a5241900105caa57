#!/usr/bin/env node
// `npm run build:cli-exe`: `holdfast` as one executable file for machines without Node — a
// copy of this machine's own Node binary (process.execPath; nothing is downloaded) with the CLI,
// proto/ and the web UI (out/renderer, for `holdfast serve`) injected as a single executable
// application (https://nodejs.org/api/single-executable-applications.html): the main script is
// src/cli/exe.ts, and the CLI bundle (as npm's, without native addons), proto/ and out/renderer
// are its assets. The file runs on the OS and CPU it was built on: build it on each platform.
//
//   node scripts/build-cli-exe.mjs [--out out/exe/holdfast]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { cjsOptions, nativeAddons, root, ssh2ClientOnly } from './cli-bundle.mjs';

const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const MANIFEST_ASSET = 'manifest.json'; // src/core/standalone.ts reads it
const CLI_ASSET = 'holdfast.cjs'; // src/cli/exe.ts runs it

const exeName = process.platform === 'win32' ? 'holdfast.exe' : 'holdfast';

/** Every file under base/dir, as '/'-separated paths relative to base. */
function filesUnder(base, dir) {
  return readdirSync(path.join(base, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(base, path.join(d.parentPath ?? d.path, d.name)).split(path.sep).join('/'))
    .sort();
}

/**
 * proto/ and the built UI (built once if missing), copied into dir — what gets embedded is what
 * was checked, even if a build rewrites out/renderer meanwhile — and refused when index.html
 * names an asset that is not there (copied while a build was running).
 */
function embeddedFiles(dir) {
  if (!existsSync(path.join(root, 'out', 'renderer', 'index.html'))) {
    console.log('out/renderer is missing: building it (npx electron-vite build)');
    execFileSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
  }
  for (const d of ['proto', 'out/renderer']) cpSync(path.join(root, d), path.join(dir, d), { recursive: true });
  const files = [...filesUnder(dir, 'proto'), ...filesUnder(dir, 'out/renderer')];
  const html = readFileSync(path.join(dir, 'out', 'renderer', 'index.html'), 'utf8');
  for (const [, ref] of html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)) {
    if (!files.includes(`out/renderer/${ref}`)) throw new Error(`out/renderer/index.html names ${ref}, which is missing: rebuild with \`npx electron-vite build\``);
  }
  return files;
}

/** src/cli/exe.ts (the main script) and the CLI bundle, both CommonJS, into dir. */
async function bundle(dir) {
  const main = path.join(dir, 'main.cjs');
  const cli = path.join(dir, CLI_ASSET);
  await esbuild.build({ ...cjsOptions, entryPoints: [path.join(root, 'src', 'cli', 'exe.ts')], outfile: main, plugins: [nativeAddons('absent')] });
  await esbuild.build({ ...cjsOptions, entryPoints: [path.join(root, 'src', 'cli', 'main.ts')], outfile: cli, plugins: [nativeAddons('absent'), ssh2ClientOnly()] });
  // The main script of a SEA cannot import(), nor can a vm.Script without a loader for it:
  // esbuild must have turned every dynamic import into a lazy require.
  for (const f of [main, cli]) if (/\bimport\(/.test(readFileSync(f, 'utf8'))) throw new Error(`${f} still calls import()`);
  return { main, cli };
}

export async function buildExe(outFile = path.join(root, 'out', 'exe', exeName)) {
  mkdirSync(path.dirname(outFile), { recursive: true });
  const work = mkdtempSync(path.join(path.dirname(outFile), '.build-'));
  try {
    const { main, cli } = await bundle(work);

    const assets = path.join(work, 'assets');
    const files = embeddedFiles(assets);
    const hash = createHash('sha256');
    for (const f of files) hash.update(`${f}\0`).update(readFileSync(path.join(assets, f)));
    const manifest = path.join(work, MANIFEST_ASSET);
    writeFileSync(manifest, JSON.stringify({ id: hash.digest('hex').slice(0, 16), files }));

    const blob = path.join(work, 'sea-prep.blob');
    const config = path.join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        main,
        output: blob,
        disableExperimentalSEAWarning: true,
        // The CLI itself runs from the code cache exe.ts keeps; the main script is small.
        useCodeCache: false,
        assets: Object.fromEntries([[MANIFEST_ASSET, manifest], [CLI_ASSET, cli], ...files.map((f) => [f, path.join(assets, f)])]),
      }),
    );
    execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });

    const exe = path.join(work, exeName);
    copyFileSync(process.execPath, exe);
    chmodSync(exe, 0o755);
    // macOS refuses a binary whose signature no longer matches: drop it before, sign ad hoc after.
    // On Windows the injected file's Authenticode signature would be invalid: drop it too, when
    // the Windows SDK's signtool is on PATH (else postject warns; sign the result yourself).
    if (process.platform === 'darwin') execFileSync('codesign', ['--remove-signature', exe]);
    if (process.platform === 'win32') {
      try {
        execFileSync('signtool', ['remove', '/s', exe], { stdio: 'ignore' });
      } catch {
        console.warn('signtool not found: the file keeps a signature that no longer matches (sign it before handing it out)');
      }
    }
    const { inject } = await import('postject');
    await inject(exe, 'NODE_SEA_BLOB', readFileSync(blob), {
      sentinelFuse: SENTINEL_FUSE,
      ...(process.platform === 'darwin' ? { machoSegmentName: 'NODE_SEA' } : {}),
    });
    if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', exe]);
    renameSync(exe, outFile);
    return outFile;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const t0 = Date.now();
  const file = await buildExe(values.out ? path.resolve(values.out) : undefined);
  const mib = (readFileSync(file).length / 1024 / 1024).toFixed(1);
  console.log(`built ${path.relative(process.cwd(), file)} (${mib} MiB, Node ${process.version}, ${process.platform}-${process.arch}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
