// Finds files shipped with Holdfast (proto/, the built renderer) whether we run from src/
// (tsx, vitest), from out/main (electron-vite build), from the CLI bundle (out/cli), from the
// standalone executable (its embedded copy) or from a packaged app (env override).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedDir } from './standalone';

export function findAppPath(relative: string, probe: string, envOverride?: string): string | null {
  const candidates: string[] = [];
  if (envOverride) candidates.push(envOverride);
  const embedded = embeddedDir(relative);
  if (embedded) candidates.push(embedded);
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    candidates.push(path.join(dir, relative));
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return candidates.find((c) => existsSync(path.join(c, probe))) ?? null;
}
