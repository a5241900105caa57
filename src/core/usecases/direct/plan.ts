// What direct delivery writes for a node, worked out before any byte is sent: the blobs of each
// image for the node's platform (children before parents), the labels containerd's own importer
// leaves on them, the image records, and the layers to unpack. Pure: the writer (write.ts)
// compares it with what the node holds and sends only the difference. The labels, with their
// source (docs/k3s-facts.md, "containerd's API, as Holdfast uses it"), are on GC_CONTENT.
import { createHash } from 'node:crypto';
import { formatPlatform, platformMatches, type Platform } from '../../../shared/mediaTypes';
import { parseReference } from '../../../shared/imageReference';
import type { Descriptor } from '../../containerd/client';
import type { BundleBlob, BundleImage, BundleIndex, BundleManifest } from './bundle';

/**
 * The labels, as containerd's client sets them (docs/k3s-facts.md, "containerd's API, as
 * Holdfast uses it"; measured on the lab's `ctr images import`):
 * - an index: `containerd.io/gc.ref.content.m.<i>` for each entry, in the index's order;
 * - a manifest: `containerd.io/gc.ref.content.config` and `containerd.io/gc.ref.content.l.<i>`;
 * - a config: `containerd.io/gc.ref.snapshot.<snapshotter>` = the top layer's chain ID, so the
 *   unpacked layers live as long as the image;
 * - a layer: `containerd.io/uncompressed` = its diff ID;
 * - every blob of an image: `containerd.io/distribution.source.<registry>` = its repositories
 *   (comma-separated), which k3s's embedded registry needs to serve the image to peers (#13222).
 */
export const GC_CONTENT = 'containerd.io/gc.ref.content';
export const GC_SNAPSHOT = 'containerd.io/gc.ref.snapshot';
export const UNCOMPRESSED = 'containerd.io/uncompressed';
export const DIST_SOURCE = 'containerd.io/distribution.source';

export type BlobRole = 'index' | 'manifest' | 'config' | 'layer';

export interface PlannedBlob extends BundleBlob {
  role: BlobRole;
  labels: Record<string, string>;
}

export interface UnpackStep {
  /** The platform manifest the layers belong to. */
  manifest: string;
  layers: BundleBlob[];
  diffIds: string[];
  chainIds: string[];
}

export interface PlannedImage {
  names: string[];
  target: Descriptor;
  /** The platform manifests written for it (the target itself for a single manifest). */
  manifests: string[];
  /** Their configs: the image ids CRI groups references by. */
  configs: string[];
}

export interface DeliveryPlan {
  /** Children before parents: a parent's GC labels never name a blob not yet written. */
  blobs: PlannedBlob[];
  images: PlannedImage[];
  unpack: UnpackStep[];
  /** Images the archive holds no manifest for on this platform, one phrase each: left out. */
  skipped: string[];
  /** Bytes of all planned blobs. */
  totalBytes: number;
}

const picked = (ms: BundleManifest[]): { manifests: string[]; configs: string[] } => ({ manifests: ms.map((m) => m.manifest.digest), configs: ms.map((m) => m.config.digest) });

const isIndex = (t: BundleManifest | BundleIndex): t is BundleIndex => 'entries' in t;

/** The chain IDs of a layer stack (OCI image spec: ChainID(Ln) = sha256(ChainID(Ln-1) + " " + DiffID(Ln))). */
export function chainIds(diffIds: string[]): string[] {
  const out: string[] = [];
  for (const d of diffIds) {
    const prev = out.at(-1);
    out.push(prev === undefined ? d : 'sha256:' + createHash('sha256').update(`${prev} ${d}`).digest('hex'));
  }
  return out;
}

/** The config's `rootfs.diff_ids`, checked to be one per layer. */
export function diffIdsOf(config: Buffer, layers: number, what: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(config.toString('utf8'));
  } catch {
    throw new Error(`the config of ${what} is not JSON`);
  }
  const ids = (parsed as { rootfs?: { diff_ids?: unknown } } | null)?.rootfs?.diff_ids;
  if (!Array.isArray(ids) || ids.length !== layers || !ids.every((d) => typeof d === 'string' && /^sha256:[a-f0-9]{64}$/.test(d))) {
    throw new Error(`the config of ${what} does not list one diff ID per layer (${layers} layers)`);
  }
  return ids as string[];
}

/** `containerd.io/distribution.source.<registry>` → repositories, for a set of image names. */
export function distributionSources(names: string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const n of names) {
    let p;
    try {
      p = parseReference(n);
    } catch {
      continue;
    }
    const key = `${DIST_SOURCE}.${p.domain}`;
    const set = out.get(key) ?? new Set<string>();
    set.add(p.path);
    out.set(key, set);
  }
  return out;
}

/** A distribution-source value with `repos` added to what the blob already lists. */
export function mergeSources(existing: string | undefined, repos: Iterable<string>): string {
  const all = new Set((existing ?? '').split(',').filter(Boolean));
  for (const r of repos) all.add(r);
  return [...all].sort().join(',');
}

export interface PlanOptions {
  platform: Platform;
  snapshotter: string;
  /** A config blob's bytes (from the local spool). */
  readConfig(digest: string): Buffer;
}

export function planDelivery(images: BundleImage[], opts: PlanOptions): DeliveryPlan {
  const blobs = new Map<string, PlannedBlob>();
  const sources = new Map<string, Map<string, Set<string>>>(); // digest → label → repos
  const unpack = new Map<string, UnpackStep>();
  const planned: PlannedImage[] = [];
  const skipped: string[] = [];

  const add = (b: BundleBlob, role: BlobRole, labels: Record<string, string>, srcs: Map<string, Set<string>>): void => {
    const had = blobs.get(b.digest);
    if (had) Object.assign(had.labels, labels);
    else blobs.set(b.digest, { digest: b.digest, size: b.size, mediaType: b.mediaType, role, labels: { ...labels } });
    const mine = sources.get(b.digest) ?? new Map<string, Set<string>>();
    for (const [k, repos] of srcs) mine.set(k, new Set([...(mine.get(k) ?? []), ...repos]));
    sources.set(b.digest, mine);
  };

  let chosen: BundleManifest[] = [];
  const addManifest = (m: BundleManifest, srcs: Map<string, Set<string>>, what: string): void => {
    chosen.push(m);
    const diffIds = diffIdsOf(opts.readConfig(m.config.digest), m.layers.length, what);
    const chains = chainIds(diffIds);
    m.layers.forEach((l, i) => add(l, 'layer', { [UNCOMPRESSED]: diffIds[i]! }, srcs));
    add(m.config, 'config', chains.length ? { [`${GC_SNAPSHOT}.${opts.snapshotter}`]: chains.at(-1)! } : {}, srcs);
    const gc: Record<string, string> = { [`${GC_CONTENT}.config`]: m.config.digest };
    m.layers.forEach((l, i) => (gc[`${GC_CONTENT}.l.${i}`] = l.digest));
    add(m.manifest, 'manifest', gc, srcs);
    if (!unpack.has(m.manifest.digest)) unpack.set(m.manifest.digest, { manifest: m.manifest.digest, layers: m.layers, diffIds, chainIds: chains });
  };

  /** Adds an index and, below it, what serves the platform; false when nothing does. */
  const addIndex = (ix: BundleIndex, srcs: Map<string, Set<string>>, what: string): boolean => {
    let served = false;
    for (const e of ix.entries) {
      if (e.descriptor.attestation || !e.manifest) continue;
      if (isIndex(e.manifest)) served = addIndex(e.manifest, srcs, what) || served;
      else if (platformMatches(e.descriptor.platform ?? e.manifest.platform ?? undefined, opts.platform)) {
        addManifest(e.manifest, srcs, what);
        served = true;
      }
    }
    if (!served) return false;
    const gc: Record<string, string> = {};
    ix.entries.forEach((e, i) => (gc[`${GC_CONTENT}.m.${i}`] = e.descriptor.digest));
    add(ix.index, 'index', gc, srcs);
    return true;
  };

  for (const im of images) {
    chosen = [];
    const srcs = distributionSources(im.names);
    const what = im.names[0] ?? 'an unnamed image';
    const t = im.target;
    if (isIndex(t)) {
      if (!addIndex(t, srcs, what)) {
        skipped.push(`${what}: the archive has no manifest for ${formatPlatform(opts.platform)}`);
        continue;
      }
      planned.push({ names: im.names, target: { mediaType: t.index.mediaType, digest: t.index.digest, size: t.index.size, annotations: {} }, ...picked(chosen) });
    } else {
      // A single manifest serves whatever platform it was built for; containerd imports it as is.
      addManifest(t, srcs, what);
      planned.push({ names: im.names, target: { mediaType: t.manifest.mediaType, digest: t.manifest.digest, size: t.manifest.size, annotations: {} }, ...picked(chosen) });
    }
  }

  for (const [digest, srcs] of sources) {
    const b = blobs.get(digest)!;
    for (const [k, repos] of srcs) b.labels[k] = mergeSources(undefined, repos);
  }
  const order: BlobRole[] = ['layer', 'config', 'manifest', 'index'];
  // Nested indexes: an inner index was added before the outer one, so a stable sort keeps that.
  const list = [...blobs.values()].sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role));
  return { blobs: list, images: planned, unpack: [...unpack.values()], skipped, totalBytes: list.reduce((n, b) => n + b.size, 0) };
}

