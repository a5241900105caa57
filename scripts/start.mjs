#!/usr/bin/env node
// `npm start`: build, then open the desktop app. Where no Electron binary can be had (it is
// downloaded on demand with `npx install-electron`), serve the same UI on 127.0.0.1 instead.
import { spawnSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const build = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// Look for the binary without require('electron'): its index.js downloads one when missing,
// and this machine may have no network at all.
function findElectron() {
  try {
    const pkgDir = path.dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const rel = readFileSync(path.join(pkgDir, 'path.txt'), 'utf8').trim();
    return rel && existsSync(path.join(pkgDir, 'dist', rel)) ? path.join(pkgDir, 'dist', rel) : null;
  } catch {
    return null;
  }
}
const electronBinary = findElectron();

const child = electronBinary
  ? spawn('npx', ['electron-vite', 'preview', '--skipBuild'], { cwd: root, stdio: 'inherit' })
  : (console.log('No Electron binary here (fetch one with `npx install-electron`); serving the UI in your browser instead.'),
    spawn(process.execPath, [path.join(root, 'bin', 'holdfast.mjs'), 'serve', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' }));
child.on('exit', (code) => process.exit(code ?? 0));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
