// Image trees of an OCI layout whose blobs are spooled (spool.ts): what each index.json entry
// references, down to config and layers, as the writer walks it. readArchiveIndex has already
// read and bounded the same layout (sizes, counts, depth, expansion); this builds the typed tree,
// keeping what the flat index leaves out: attestation entries and missing manifests.
import { isAttestation } from '../../archives/format/readIndex';
import { ArchiveError, overLimit } from '../../archives/format/errors';
import { formatLimit, limit } from '../../limits';
import { INDEX_TYPES, formatPlatform, type Platform } from '../../../shared/mediaTypes';
import type { BundleBlob, BundleIndex, BundleIndexEntry, BundleManifest } from './bundle';

const MAX_INDEX_DEPTH = limit('archive.indexDepth');
const MAX_INDEX_ENTRIES = limit('archive.indexEntries');
const MAX_LAYERS = limit('archive.layersPerImage');
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

export interface BlobSource {
  /** Size of the spooled blob, or undefined when the archive lacks it. */
  size(digest: string): number | undefined;
  /** The blob parsed as JSON (null when the archive lacks it); throws when it is not JSON or too large. */
  json(digest: string, what: string): Promise<unknown>;
}

/** A descriptor as JSON gave it. */
export interface RawDescriptor {
  digest: string;
  mediaType?: string;
  size?: number;
  platform?: Platform;
  annotations?: Record<string, string>;
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function platformOf(v: unknown): Platform | undefined {
  if (!isObject(v) || typeof v['os'] !== 'string' || typeof v['architecture'] !== 'string' || !v['os'] || !v['architecture']) return undefined;
  return typeof v['variant'] === 'string' && v['variant'] ? { os: v['os'], architecture: v['architecture'], variant: v['variant'] } : { os: v['os'], architecture: v['architecture'] };
}

/** A descriptor from JSON, or null when `v` has no string digest. */
export function rawDescriptor(v: unknown): RawDescriptor | null {
  if (!isObject(v) || typeof v['digest'] !== 'string') return null;
  const d: RawDescriptor = { digest: v['digest'] };
  if (typeof v['mediaType'] === 'string') d.mediaType = v['mediaType'];
  if (typeof v['size'] === 'number') d.size = v['size'];
  const p = platformOf(v['platform']);
  if (p) d.platform = p;
  if (isObject(v['annotations'])) {
    const ann: Record<string, string> = {};
    for (const [k, val] of Object.entries(v['annotations'])) if (typeof val === 'string') ann[k] = val;
    d.annotations = ann;
  }
  return d;
}

export class OciTrees {
  /** Built nodes by digest and platform: a manifest shared by many indexes is built once. */
  private readonly built = new Map<string, Promise<BundleManifest | BundleIndex | null>>();

  constructor(private readonly blobs: BlobSource) {}

  /** The descriptor as the writer sends it: the blob's real size checked against the one written. */
  blob(d: RawDescriptor, fallbackType: string): BundleBlob {
    const actual = this.blobs.size(d.digest);
    if (actual !== undefined && d.size !== undefined && d.size !== actual) {
      throw new ArchiveError('corrupt', `corrupt: blob ${d.digest} is ${actual} bytes, but a descriptor says ${d.size}`);
    }
    return { digest: d.digest, size: actual ?? d.size ?? 0, mediaType: d.mediaType ?? fallbackType };
  }

  /** The tree under a descriptor; null when the archive lacks its blob. */
  node(d: RawDescriptor, depth: number, seen: readonly string[] = []): Promise<BundleManifest | BundleIndex | null> {
    // Verified digests make a cycle impossible (a blob cannot hold its own hash); the check stays
    // so that one could never wait on its own pending build.
    if (seen.includes(d.digest)) return Promise.reject(new ArchiveError('corrupt', `corrupt: image index ${d.digest} lists itself`));
    const key = `${d.digest}\0${d.platform ? formatPlatform(d.platform) : ''}\0${d.mediaType ?? ''}`;
    let hit = this.built.get(key);
    if (!hit) {
      hit = this.build(d, depth, seen);
      this.built.set(key, hit);
    }
    return hit;
  }

  private async build(d: RawDescriptor, depth: number, seen: readonly string[]): Promise<BundleManifest | BundleIndex | null> {
    const body = await this.blobs.json(d.digest, 'index or manifest');
    if (body === null) return null;
    if (!isObject(body)) throw new ArchiveError('corrupt', `corrupt: ${d.digest} is not a JSON object`);
    const manifests = body['manifests'];
    const isIndex = d.mediaType ? INDEX_TYPES.has(d.mediaType) : Array.isArray(manifests);
    const ownType = typeof body['mediaType'] === 'string' ? body['mediaType'] : isIndex ? OCI_INDEX : OCI_MANIFEST;
    const self = this.blob(d, ownType);
    if (isIndex) {
      if (depth > MAX_INDEX_DEPTH) throw overLimit('archive.indexDepth', `image indexes are nested more than ${MAX_INDEX_DEPTH} deep at ${d.digest}`);
      if (!Array.isArray(manifests)) throw new ArchiveError('corrupt', `corrupt: image index ${d.digest} has no manifests list`);
      if (manifests.length > MAX_INDEX_ENTRIES) throw overLimit('archive.indexEntries', `image index ${d.digest} lists ${manifests.length} manifests`);
      const entries: BundleIndexEntry[] = [];
      for (const raw of manifests) {
        const child = rawDescriptor(raw);
        if (!child) throw new ArchiveError('corrupt', `corrupt: image index ${d.digest} has an entry without a digest`);
        const childType = child.mediaType ?? OCI_MANIFEST;
        entries.push({
          descriptor: { ...this.blob(child, childType), platform: child.platform ?? null, attestation: isAttestation(child) },
          manifest: await this.node(child, depth + 1, [...seen, d.digest]),
        });
      }
      return { index: self, entries };
    }
    return this.manifest(self, body, d.platform);
  }

  private async manifest(self: BundleBlob, body: Record<string, unknown>, given: Platform | undefined): Promise<BundleManifest> {
    const config = rawDescriptor(body['config']);
    if (!config) throw new ArchiveError('corrupt', `corrupt: manifest ${self.digest} has no config`);
    const rawLayers = Array.isArray(body['layers']) ? body['layers'] : [];
    if (rawLayers.length > MAX_LAYERS) throw overLimit('archive.layersPerImage', `manifest ${self.digest} has ${rawLayers.length} layers, more than ${formatLimit('archive.layersPerImage')}`);
    const layers = rawLayers.map((l) => {
      const d = rawDescriptor(l);
      if (!d) throw new ArchiveError('corrupt', `corrupt: manifest ${self.digest} has a layer without a digest`);
      return this.blob(d, '');
    });
    let platform = given ?? null;
    // The config names the platform when the index entry does not (a plain, single-platform entry).
    if (!platform && this.blobs.size(config.digest) !== undefined) {
      try {
        platform = platformOf(await this.blobs.json(config.digest, 'config')) ?? null;
      } catch {
        platform = null; // an artifact's config need not be JSON: no platform, not an error
      }
    }
    return { manifest: self, platform, config: this.blob(config, ''), layers };
  }
}
