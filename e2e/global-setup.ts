// Make sure out/renderer is a build of the current sources: rebuild when it is missing or older
// than any file under src/renderer or src/shared (npm test builds just before, so usually a no-op).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

export default function globalSetup(): void {
  const built = path.join(root, 'out', 'renderer', 'index.html');
  const sources = Math.max(newestMtime(path.join(root, 'src', 'renderer')), newestMtime(path.join(root, 'src', 'shared')));
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
    cwd: root,
    stdio: 'inherit',
  });
}
