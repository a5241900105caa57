// Is an image complete in containerd's content store? Image records are shallow (Create
// accepts a target whose blobs are absent), so before an archive is removed Holdfast checks
// the target, the node platform's manifest, its config and every layer with Content.Info.
import type { ContainerdClient, Descriptor } from '../containerd/client';
import { HoldfastError } from '../errors';
import { INDEX_TYPES, formatPlatform, platformMatches, type Platform } from '../../shared/mediaTypes';
import type { BlobCache } from './resolve';

export interface Completeness {
  complete: boolean;
  /** Digests (with what they are) that are absent. */
  missing: string[];
}

async function readJson(cd: ContainerdClient, digest: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse((await cd.readContent(digest)).toString('utf8')) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
    throw e;
  }
}

/**
 * `cached`: the session's blob cache. A body read earlier is still that blob's body (content is
 * addressed by digest), but the blob may have been deleted since: a body taken from the cache is
 * re-checked with Content.Info together with the config and layers, so presence is always live.
 */
export async function checkComplete(cd: ContainerdClient, target: Descriptor, platform: Platform, cached?: BlobCache): Promise<Completeness> {
  const missing: string[] = [];
  const recheck: { digest: string; what: string }[] = [];
  const read = async (digest: string, what: string) => {
    const body = cached ? await cached.json<Record<string, unknown>>(digest) : null;
    if (body) {
      recheck.push({ digest, what });
      return body;
    }
    return readJson(cd, digest);
  };
  const top = await read(target.digest, 'image target');
  if (!top) return { complete: false, missing: [`${target.digest} (image target)`] };

  let manifest: Record<string, unknown> | null = top;
  let manifestDigest = target.digest;
  const isIndex = INDEX_TYPES.has(target.mediaType) || Array.isArray(top.manifests);
  if (isIndex) {
    const entries = (top.manifests as { digest: string; platform?: Platform }[] | undefined) ?? [];
    const chosen = entries.find((m) => platformMatches(m.platform, platform)) ?? (entries.length === 1 ? entries[0] : undefined);
    if (!chosen) return { complete: false, missing: [`no manifest for ${formatPlatform(platform)} in ${target.digest}`] };
    manifestDigest = chosen.digest;
    manifest = await read(chosen.digest, `manifest for ${formatPlatform(platform)}`);
    if (!manifest) return { complete: false, missing: [`${chosen.digest} (manifest for ${formatPlatform(platform)})`] };
  }
  const config = manifest.config as { digest?: string } | undefined;
  const layers = (manifest.layers as { digest: string }[] | undefined) ?? [];
  if (!config?.digest) return { complete: false, missing: [`config of ${manifestDigest}`] };
  const blobs = [...recheck, { digest: config.digest, what: 'config' }, ...layers.map((l, i) => ({ digest: l.digest, what: `layer ${i + 1}/${layers.length}` }))];
  const infos = await Promise.all(blobs.map((b) => cd.contentInfo(b.digest)));
  infos.forEach((info, i) => {
    if (!info) missing.push(`${blobs[i]!.digest} (${blobs[i]!.what})`);
  });
  return { complete: missing.length === 0, missing };
}
