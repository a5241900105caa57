#!/usr/bin/env node
// `npm start`: build, then open the desktop app. Where no Electron binary can be had (it is
// downloaded on demand with `npx install-electron`), serve the same UI on 127.0.0.1 instead.
import { spawnSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const build = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

let electronBinary = null;
try {
  electronBinary = createRequire(import.meta.url)('electron');
} catch {
  electronBinary = null;
}

const child = electronBinary
  ? spawn('npx', ['electron-vite', 'preview', '--skipBuild'], { cwd: root, stdio: 'inherit' })
  : (console.log('No Electron binary here (fetch one with `npx install-electron`); serving the UI in your browser instead.'),
    spawn(process.execPath, [path.join(root, 'bin', 'holdfast.mjs'), 'serve', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' }));
child.on('exit', (code) => process.exit(code ?? 0));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
