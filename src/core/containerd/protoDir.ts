import { findAppPath } from '../appPaths';

let cached: string | undefined;

/** proto/ with containerd's service definitions (HOLDFAST_PROTO_DIR overrides). */
export function protoDir(): string {
  cached ??= findAppPath('proto', 'containerd/images.proto', process.env.HOLDFAST_PROTO_DIR) ?? undefined;
  if (!cached) throw new Error('containerd .proto files not found; set HOLDFAST_PROTO_DIR');
  return cached;
}
