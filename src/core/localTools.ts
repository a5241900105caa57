// Finding the laptop's own programs (OpenSSH's ssh, bzip2): one home for "is this file a program
// this process may run" and the PATH search, so every caller answers the same way.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Whether p exists and this process may execute it. */
export function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` (on Windows `name.exe`) in PATH that this process may execute, or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const file = process.platform === 'win32' ? `${name}.exe` : name;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, file);
    if (isExecutable(p)) return p;
  }
  return null;
}
