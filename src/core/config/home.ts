// Where Holdfast keeps its configuration: $HOLDFAST_HOME, else the OS's per-user config dir.
import os from 'node:os';
import path from 'node:path';
import { homeOverride } from '../env';

export function holdfastHome(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const override = homeOverride(env);
  if (override) return path.resolve(override);
  const home = env.HOME || os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Holdfast');
  if (platform === 'win32') return path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'Holdfast');
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'holdfast');
}

/** The user's OpenSSH known_hosts, the default trust store (as OpenSSH itself uses). */
export function defaultKnownHosts(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME || os.homedir(), '.ssh', 'known_hosts');
}
