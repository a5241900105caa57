// The node's image store, image by image, from containerd: every reference grouped by image id
// (as CRI groups them), the containers that name each image, and the blobs behind it. Blobs are
// found as containerd's GC follows them — target, an index's manifests, each manifest's config
// and layers — and only those present in the content store (k3s imports all platforms but skips
// missing blobs) are counted, with the sizes Content.Info reports.
import type { ImageRef } from '../../shared/domain/images';
import { deletionOrder, exclusiveBytes, imageState, type BlobIndex, type ContainerUse, type StoreImage } from '../../shared/imageStore';
import { protectionKey, protectionOfImages, refsByImage } from '../../shared/protection';
import { LABEL_CRI_PINNED, PINNED } from '../../shared/domain/labels';
import type { CriPinning } from '../../shared/versions';
import type { ContainerRecord, ContainerdClient, ContainerdImage } from '../containerd/client';
import { HoldfastError } from '../errors';
import { INDEX_TYPES, platformMatches, type Platform } from '../../shared/mediaTypes';
import { mapLimit } from '../../shared/mapLimit';
import { compareText } from '../../shared/compareText';
import { isImageIdRecord, normalizeReference } from '../../shared/imageReference';
import { workloadName } from '../../shared/needs';

/** CRI labels the containers and sandboxes it creates; kubelet sees only those. */
export const CRI_KIND_LABEL = 'io.cri-containerd.kind';

/** What one target (manifest or index) holds in the content store. */
export interface TargetFacts {
  /** Present blobs reachable from the target (all platforms present). */
  blobs: string[];
  /** The node platform's target + manifest + config + layers, as CRI sizes an image. */
  criSize: number;
  configCreated: string | null;
}

interface ManifestJson {
  config?: { digest: string };
  layers?: { digest: string }[];
  manifests?: { digest: string; platform?: Platform }[];
}

/** Walks targets once each; blob sizes and small JSON bodies are read once per digest. */
export class BlobWalker {
  private readonly info = new Map<string, Promise<number | null>>();
  private readonly bodies = new Map<string, Promise<unknown | null>>();

  constructor(
    private readonly cd: ContainerdClient,
    private readonly platform: Platform,
  ) {}

  /** Present blob sizes seen so far. */
  async sizes(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [d, p] of this.info) {
      const s = await p;
      if (s !== null) out[d] = s;
    }
    return out;
  }

  size(digest: string): Promise<number | null> {
    let p = this.info.get(digest);
    if (!p) {
      p = this.cd.contentInfo(digest).then((i) => (i ? i.size : null));
      this.info.set(digest, p);
    }
    return p;
  }

  private json<T>(digest: string): Promise<T | null> {
    let p = this.bodies.get(digest);
    if (!p) {
      p = this.cd.readContent(digest).then(
        (b) => {
          try {
            return JSON.parse(b.toString('utf8')) as unknown;
          } catch {
            return null;
          }
        },
        (e) => {
          if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
          throw e;
        },
      );
      this.bodies.set(digest, p);
    }
    return p as Promise<T | null>;
  }

  private async manifest(digest: string, forPlatform: boolean): Promise<{ blobs: string[]; platformBytes: number; configCreated: string | null }> {
    const own = await this.size(digest);
    if (own === null) return { blobs: [], platformBytes: 0, configCreated: null };
    const m = await this.json<ManifestJson>(digest);
    const parts = [...(m?.config?.digest ? [m.config.digest] : []), ...(m?.layers ?? []).map((l) => l.digest)];
    const sizes = await Promise.all(parts.map((d) => this.size(d)));
    const blobs = [digest, ...parts.filter((_, i) => sizes[i] !== null)];
    let configCreated: string | null = null;
    if (forPlatform && m?.config?.digest && sizes[0] !== null) {
      const cfg = await this.json<{ created?: unknown }>(m.config.digest);
      configCreated = typeof cfg?.created === 'string' ? cfg.created : null;
    }
    return { blobs, platformBytes: own + sizes.reduce<number>((s, x) => s + (x ?? 0), 0), configCreated };
  }

  async target(t: { digest: string; mediaType: string }): Promise<TargetFacts> {
    const own = await this.size(t.digest);
    if (own === null) return { blobs: [], criSize: 0, configCreated: null };
    const body = await this.json<ManifestJson>(t.digest);
    if (INDEX_TYPES.has(t.mediaType) || Array.isArray(body?.manifests)) {
      const entries = body?.manifests ?? [];
      const chosen = entries.find((e) => platformMatches(e.platform, this.platform)) ?? (entries.length === 1 ? entries[0] : undefined);
      const parts = await Promise.all(entries.map((e) => this.manifest(e.digest, e === chosen)));
      const mine = chosen ? parts[entries.indexOf(chosen)]! : null;
      return {
        blobs: [t.digest, ...parts.flatMap((p) => p.blobs)],
        criSize: own + (mine?.platformBytes ?? 0),
        configCreated: mine?.configCreated ?? null,
      };
    }
    const m = await this.manifest(t.digest, true);
    return { blobs: m.blobs, criSize: m.platformBytes, configCreated: m.configCreated };
  }
}

export interface StoreInput {
  /** The inventory's references (pin, fate, archive, image id). */
  refs: ImageRef[];
  /** containerd's image records (for when each last changed). */
  records: ContainerdImage[];
  containers: ContainerRecord[];
  criPinning: CriPinning;
}

/** An image key for the image a container record names, or null when it names none present. */
export function imageOfContainer(image: string, byName: Map<string, string>, byImageId: Map<string, string>, byDigest: Map<string, string>): string | null {
  if (!image) return null;
  const direct = byName.get(image);
  if (direct) return direct;
  if (isImageIdRecord(image)) return byImageId.get(image) ?? byDigest.get(image) ?? null;
  const at = image.indexOf('@sha256:');
  if (at >= 0) {
    const d = byDigest.get(image.slice(at + 1));
    if (d) return d;
  }
  try {
    return byName.get(normalizeReference(image)) ?? null;
  } catch {
    return null;
  }
}

const max = (a: string | null, b: string | null) => (!a ? b : !b ? a : a > b ? a : b);
const min = (a: string | null, b: string | null) => (!a ? b : !b ? a : a < b ? a : b);

/** Groups references into images and sizes them; pure once the targets are walked. */
export function buildStore(input: StoreInput, facts: Map<string, TargetFacts>, sizes: Record<string, number>): { images: StoreImage[]; index: BlobIndex; unmatched: ContainerRecord[] } {
  const groups = refsByImage(input.refs);
  const byName = new Map(input.refs.map((r) => [r.name, protectionKey(r)]));
  const byImageId = new Map(input.refs.filter((r) => r.imageId).map((r) => [r.imageId!, protectionKey(r)]));
  const byDigest = new Map(input.refs.map((r) => [r.digest, protectionKey(r)]));
  const uses = new Map<string, ContainerUse[]>();
  const unmatched: ContainerRecord[] = [];
  for (const c of input.containers) {
    const k = imageOfContainer(c.image, byName, byImageId, byDigest);
    if (!k) {
      if (c.image) unmatched.push(c);
      continue;
    }
    const kind = c.labels[CRI_KIND_LABEL];
    const use: ContainerUse = { id: c.id, image: c.image, kubelet: kind === 'container' || kind === 'sandbox' };
    uses.set(k, [...(uses.get(k) ?? []), use]);
  }
  const records = new Map(input.records.map((r) => [r.name, r]));
  // What kubelet sees per image (shared/protection): pinned now, by this containerd's CRI rule.
  const protection = protectionOfImages(groups, input.criPinning);
  const index: BlobIndex = { sizes, byImage: {} };
  const images: StoreImage[] = [];
  for (const [key, refs] of groups) {
    const digests = [...new Set(refs.map((r) => r.digest))];
    const targetFacts = digests.map((d) => facts.get(d)).filter((f): f is TargetFacts => f !== undefined);
    index.byImage[key] = [...new Set(targetFacts.flatMap((f) => f.blobs))];
    let createdAt: string | null = null;
    let lastChangedAt: string | null = null;
    for (const r of refs) {
      const rec = records.get(r.name);
      const c = rec?.createdAt?.toISOString() ?? r.createdAt;
      createdAt = min(createdAt, c);
      lastChangedAt = max(lastChangedAt, max(c, rec?.updatedAt?.toISOString() ?? null));
    }
    const pin = refs.some((r) => r.pin === 'distro') ? 'distro' : refs.some((r) => r.pin === 'durable') ? 'durable' : 'none';
    const usedBy = uses.get(key) ?? [];
    images.push({
      key,
      imageId: refs[0]!.imageId,
      refs: deletionOrder(refs.map((r) => r.name)),
      digests,
      state: imageState({ usedBy, pin }),
      pin,
      pinnedForKubelet: protection.get(key)?.now ?? false,
      pinnedAfterRestart: protection.get(key)?.afterRestart ?? false,
      // 1.7.3–1.7.9 with the label on some references only: CRI may take the pin from either.
      pinUncertain: input.criPinning === 'first-loaded' && !protection.get(key)?.now && refs.some((r) => r.labels[LABEL_CRI_PINNED] === PINNED),
      usedBy,
      lostPin: refs.some((r) => r.lostPin?.kind === 'label-removed'),
      archive: refs.map((r) => r.archive).find((a) => a !== null) ?? null,
      need: neededOf(refs),
      createdAt,
      lastChangedAt,
      configCreated: targetFacts.map((f) => f.configCreated).find((c) => c !== null) ?? null,
      criSize: Math.max(0, ...targetFacts.map((f) => f.criSize)),
      contentBytes: index.byImage[key]!.reduce((s, b) => s + (sizes[b] ?? 0), 0),
      exclusiveBytes: 0,
    });
  }
  const excl = exclusiveBytes(index);
  for (const i of images) i.exclusiveBytes = excl[i.key] ?? 0;
  images.sort((a, b) => compareText(a.refs[0] ?? a.key, b.refs[0] ?? b.key));
  return { images, index, unmatched };
}

/** The site's need of an image, as prune and the forecast read it (the inventory's verdict). */
function neededOf(refs: readonly Pick<ImageRef, 'need'>[]): StoreImage['need'] {
  const n = refs.find((r) => r.need?.needed)?.need;
  return n ? { because: n.neededBecause ?? n.because, workloads: n.workloads.map(workloadName) } : null;
}

/** Reads what buildStore needs from containerd (targets walked at most 8 at a time). */
export async function readStore(cd: ContainerdClient, platform: Platform, input: Omit<StoreInput, 'records' | 'containers'>): Promise<{ images: StoreImage[]; index: BlobIndex; unmatched: ContainerRecord[]; containers: ContainerRecord[] }> {
  const [records, containers] = await Promise.all([cd.listImages(), cd.listContainers()]);
  const walker = new BlobWalker(cd, platform);
  const targets = [...new Map(input.refs.map((r) => [r.digest, { digest: r.digest, mediaType: r.mediaType }])).values()];
  const facts = new Map<string, TargetFacts>();
  await mapLimit(targets, 8, async (t) => facts.set(t.digest, await walker.target(t)));
  const built = buildStore({ ...input, records, containers }, facts, await walker.sizes());
  return { ...built, containers };
}
