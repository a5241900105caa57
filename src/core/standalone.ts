// The standalone executable (Node's single executable application, scripts/build-cli-exe.mjs)
// carries proto/ and the built UI (out/renderer) as SEA assets, keyed by their repo-relative
// paths and listed, with a hash of them all, in the asset `manifest.json`. What reads them
// (protobufjs, the static file server) reads files, so the first run of a build writes them
// into $HOLDFAST_HOME/cache/standalone/<hash>/ (the user's own directory; complete or not at
// all) and every run finds them there like files next to the code.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { holdfastHome } from './config/home';

interface Sea {
  isSea(): boolean;
  getAsset(key: string, encoding?: string): ArrayBuffer | string;
}

export const MANIFEST_ASSET = 'manifest.json';

export interface AssetManifest {
  /** sha256 over every asset's key and content: names the extracted copy of this build. */
  id: string;
  files: string[];
}

const COMPLETE = '.complete';

let sea: Sea | null | undefined;
let root: string | undefined;

/** node:sea when running as a standalone executable, else null (node:sea exists from Node 20.12). */
function seaApi(): Sea | null {
  if (sea === undefined) {
    try {
      const api = createRequire(import.meta.url)('node:sea') as Sea;
      sea = api.isSea() ? api : null;
    } catch {
      sea = null;
    }
  }
  return sea;
}

/** An asset of the standalone executable as text, or null when not running standalone. */
export function standaloneAsset(key: string): string | null {
  const api = seaApi();
  return api ? (api.getAsset(key, 'utf8') as string) : null;
}

/** Writes every asset under dir (created fresh), the completion marker last. */
function writeAssets(api: Sea, m: AssetManifest, dir: string): void {
  for (const key of m.files) {
    const file = path.join(dir, ...key.split('/'));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Buffer.from(api.getAsset(key) as ArrayBuffer));
  }
  writeFileSync(path.join(dir, COMPLETE), m.id);
}

function extract(api: Sea): string {
  const m = JSON.parse(api.getAsset(MANIFEST_ASSET, 'utf8') as string) as AssetManifest;
  const cacheDir = path.join(holdfastHome(), 'cache', 'standalone');
  const target = path.join(cacheDir, m.id);
  if (existsSync(path.join(target, COMPLETE))) return target;
  try {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    // Written aside, then renamed into place: a concurrent run sees all of it or none.
    const scratch = mkdtempSync(`${target}.tmp-`);
    writeAssets(api, m, scratch);
    try {
      renameSync(scratch, target);
    } catch (e) {
      rmSync(scratch, { recursive: true, force: true });
      // Another run put it there first; anything else (a broken leftover) is replaced.
      if (!existsSync(path.join(target, COMPLETE))) {
        rmSync(target, { recursive: true, force: true });
        throw e;
      }
    }
    return target;
  } catch {
    // A read-only home: a private copy for this process only.
    const own = mkdtempSync(path.join(os.tmpdir(), 'holdfast-'));
    process.once('exit', () => rmSync(own, { recursive: true, force: true }));
    writeAssets(api, m, own);
    return own;
  }
}

/** Where this build's embedded files are (written there at the first call), or null when not running standalone. */
export function standaloneRoot(): string | null {
  const api = seaApi();
  if (!api) return null;
  root ??= extract(api);
  return root;
}

/**
 * The embedded directory `relative` (e.g. 'proto', 'out/renderer') as a real directory, or null
 * when not running standalone or nothing was embedded under it.
 */
export function embeddedDir(relative: string): string | null {
  const base = standaloneRoot();
  if (!base) return null;
  const dir = path.join(base, ...relative.split('/'));
  return existsSync(dir) ? dir : null;
}
