import { existsSync } from 'node:fs';
import path from 'node:path';
import { findAppPath } from '../appPaths';
import { protoDirOverride } from '../env';

let cached: string | undefined;
const PROBE = 'containerd/images.proto';

/**
 * In a packaged desktop app the .proto files are an extraResource: <resources>/proto, beside
 * app.asar (electron-builder.config.ts). Electron sets process.resourcesPath, also when run
 * unpackaged (then it is Electron's own resources dir, without proto/, and the search goes on).
 */
function packagedProtoDir(): string | undefined {
  const resources = (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath;
  return typeof resources === 'string' && resources ? path.join(resources, 'proto') : undefined;
}

/** proto/ with containerd's service definitions (HOLDFAST_PROTO_DIR overrides). */
export function protoDir(): string {
  if (!cached) {
    const override = protoDirOverride();
    const packaged = override ? undefined : packagedProtoDir();
    cached = (packaged && existsSync(path.join(packaged, PROBE)) ? packaged : findAppPath('proto', PROBE, override)) ?? undefined;
  }
  if (!cached) throw new Error('containerd .proto files not found; set HOLDFAST_PROTO_DIR');
  return cached;
}
