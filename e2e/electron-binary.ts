// Where `require('electron')` would point, found WITHOUT running the electron package's
// index.js: that file downloads the binary when it is missing (a network request in the middle
// of an offline test run). null when no binary is installed (`npx install-electron` fetches it).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export function electronBinary(): string | null {
  try {
    const pkgDir = path.dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const pathFile = path.join(pkgDir, 'path.txt');
    if (!existsSync(pathFile)) return null;
    const rel = readFileSync(pathFile, 'utf8').trim();
    const override = process.env['ELECTRON_OVERRIDE_DIST_PATH'];
    const full = override ? path.join(override, rel || 'electron') : path.join(pkgDir, 'dist', rel);
    return rel && existsSync(full) ? full : null;
  } catch {
    return null;
  }
}
