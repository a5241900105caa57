// Resolves an image target (index or manifest) to what the node would run: the image id
// (config digest of the node's platform manifest), its size and the platforms on offer.
// Content is addressed by digest, so results are cached forever per digest.
import type { ContainerdClient, Descriptor } from '../containerd/client';
import { HoldfastError } from '../errors';
import { INDEX_TYPES, MANIFEST_TYPES, formatPlatform, platformMatches, type Platform } from '../../shared/mediaTypes';

export interface ResolvedTarget {
  imageId: string | null;
  size: number;
  platforms: string[];
}

interface IndexJson {
  manifests?: { mediaType?: string; digest: string; size: number; platform?: Platform }[];
}
interface ManifestJson {
  mediaType?: string;
  config?: { digest: string; size: number };
  layers?: { digest: string; size: number }[];
  manifests?: unknown;
}
interface ConfigJson {
  os?: string;
  architecture?: string;
  variant?: string;
}

/**
 * Small blobs (indexes, manifests, configs) read once per session by digest: resolving targets,
 * checking completeness and prefetching while the node probe runs all share one read.
 */
export class BlobCache {
  private readonly blobs = new Map<string, Promise<unknown | null>>();

  constructor(private readonly cd: ContainerdClient) {}

  /** JSON body of a small blob, or null when it is absent from the content store. */
  json<T>(digest: string): Promise<T | null> {
    let p = this.blobs.get(digest);
    if (!p) {
      p = this.cd.readContent(digest).then(
        (buf) => JSON.parse(buf.toString('utf8')) as unknown,
        (e) => {
          if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
          throw e;
        },
      );
      this.blobs.set(digest, p);
      // A failed read (e.g. a dropped tunnel) must not poison the cache.
      p.catch(() => this.blobs.delete(digest));
    }
    return p as Promise<T | null>;
  }
}

export class TargetResolver {
  private readonly cache = new Map<string, Promise<ResolvedTarget>>();

  constructor(
    cd: ContainerdClient,
    private readonly platform: Platform,
    private readonly blobs: BlobCache = new BlobCache(cd),
  ) {}

  resolve(target: Descriptor): Promise<ResolvedTarget> {
    const key = target.digest;
    let p = this.cache.get(key);
    if (!p) {
      p = this.doResolve(target);
      this.cache.set(key, p);
      // A failed read (e.g. a dropped tunnel) must not poison the cache.
      p.catch(() => this.cache.delete(key));
    }
    return p;
  }

  private json<T>(digest: string): Promise<T | null> {
    return this.blobs.json<T>(digest);
  }

  private async doResolve(target: Descriptor): Promise<ResolvedTarget> {
    const body = await this.json<IndexJson & ManifestJson>(target.digest);
    if (!body) return { imageId: null, size: target.size, platforms: [] };
    const isIndex = INDEX_TYPES.has(target.mediaType) || (!target.mediaType && Array.isArray(body.manifests));
    if (isIndex) {
      const entries = (body.manifests ?? []).filter((m) => !m.platform || m.platform.os !== 'unknown');
      const platforms = [...new Set(entries.filter((m) => m.platform).map((m) => formatPlatform(m.platform!)))];
      const chosen = entries.find((m) => platformMatches(m.platform, this.platform)) ?? (entries.length === 1 ? entries[0] : undefined);
      if (!chosen) return { imageId: null, size: target.size, platforms };
      const inner = await this.manifest(chosen.digest);
      return {
        imageId: inner?.configDigest ?? null,
        size: target.size + (inner ? inner.size : chosen.size),
        platforms,
      };
    }
    if (MANIFEST_TYPES.has(target.mediaType) || body.config) {
      const m = this.summarise(target.digest, target.size, body);
      const cfg = m.configDigest ? await this.json<ConfigJson>(m.configDigest) : null;
      const platforms = cfg?.os && cfg.architecture ? [formatPlatform({ os: cfg.os, architecture: cfg.architecture, variant: cfg.variant })] : [];
      return { imageId: m.configDigest, size: m.size, platforms };
    }
    return { imageId: null, size: target.size, platforms: [] };
  }

  private async manifest(digest: string): Promise<{ configDigest: string | null; size: number } | null> {
    const body = await this.json<ManifestJson>(digest);
    if (!body) return null;
    return this.summarise(digest, 0, body);
  }

  private summarise(_digest: string, ownSize: number, m: ManifestJson): { configDigest: string | null; size: number } {
    const layers = (m.layers ?? []).reduce((n, l) => n + Number(l.size || 0), 0);
    return { configDigest: m.config?.digest ?? null, size: ownSize + Number(m.config?.size ?? 0) + layers };
  }
}
