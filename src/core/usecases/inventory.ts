// readInventory: everything Holdfast knows about one node at one moment: its images with pin state and
// fate at the next k3s start, and the files in its images dir with what they bring and
// whether they can be removed safely. Computed together so the views always agree.
import { logger } from '../log';
import type { AuditLog } from '../audit/log';
import type { ArchiveInfo, RemovalCheck } from '../../shared/domain/archives';
import type { ImageRef } from '../../shared/domain/images';
import type { NodeInfo } from '../../shared/domain/nodes';
import type { Prose, RemedyWording } from '../../shared/remedy';
import { configDigestFor, type ArchiveImage } from '../archives/format/readIndex';
import { readK3sImportCache, scanImagesDir, type IndexCache, type ScannedFile } from '../archives/scan';
import { cacheVerdict, type CacheVerdict, type K3sImportCache } from '../../shared/importCache';
import { signatureRecord } from '../../shared/signatures';
import { predictFates, type FateArchive, type FatePrepull } from '../../shared/fate';
import { checkComplete, type Completeness } from '../images/completeness';
import type { BaseImageRef } from '../images/list';
import type { Platform } from '../../shared/mediaTypes';
import { applyImageProtection, durableProtection, imageProtection, protectionKey } from '../../shared/protection';
import { criPinning, importCacheHonoured, startupWalk, type CriPinning } from '../../shared/versions';
import { distroDisplayName } from '../../shared/distro';
import { importCacheHealth } from '../../shared/importCacheHealth';
import { archiveRemedy } from '../../shared/archiveRemedy';
import { removalWarnings } from '../../shared/removalVerdict';
import type { NodeSession } from '../node/session';
import type { ImagesDirFile } from '../../shared/lostPins';
import { applyNeeds, needsKnown, type NeedsReport } from '../../shared/needs';
import { mapLimit } from '../../shared/mapLimit';
import { clusterOptions, readClusterAnswer, type ClusterAnswer } from '../needs/cluster';
import { nodeNeedsFrom } from '../needs/nodeNeeds';
import type { NeedsResolver } from '../needs/resolve';
import { readGcPolicy } from './kubeletSettings';

const log = logger('node');

/** A node's references with pin state and fate, and its images dir as read (no removal checks). */
export interface ImagesInventory {
  info: NodeInfo;
  platform: Platform;
  images: ImageRef[];
  files: ScannedFile[];
  fateArchives: FateArchive[];
  prepull: FatePrepull[];
  importCache: K3sImportCache;
  /** What the site needs on this node and what that means here (shared/needs). */
  needs: NeedsReport;
  /** The node's own answer about its cluster (a server's workloads, or why there are none). */
  cluster: ClusterAnswer;
}


export interface InventoryOptions {
  indexCache?: IndexCache;
  info?: NodeInfo | Promise<NodeInfo>;
  needs?: NeedsResolver;
  /** References Holdfast pinned on the node (its audit log): evidence of air-gap provenance. */
  auditPinned?: Promise<ReadonlySet<string>>;
}

export interface NodeInventory extends ImagesInventory {
  archives: ArchiveInfo[];
}

/** The reference an archive image becomes in containerd (by name, else by image id). */
function refsForArchiveImage<R extends BaseImageRef>(refs: R[], img: ArchiveImage, platform: Platform): { wantId: string | null; ref: R | undefined } {
  const wantId = configDigestFor(img, platform);
  const ref = img.name ? refs.find((r) => r.name === img.name) : refs.find((r) => r.imageId !== null && r.imageId === wantId);
  return { wantId, ref };
}

export async function readInventory(session: NodeSession, opts: InventoryOptions = {}): Promise<NodeInventory> {
  const inv = await readImagesInventory(session, opts);
  return { ...inv, archives: await archiveInfos(session, inv) };
}

/**
 * The images half of readInventory: what every reference's pin and fate need (the listing, the
 * images dir with its archives' indexes, k3s's import cache), without the completeness reads
 * that only the archives' removal checks use — what `images` and its lost pins show.
 */
export async function readImagesInventory(session: NodeSession, opts: InventoryOptions = {}): Promise<ImagesInventory> {
  const root = session.def.imagesDir;
  // The images dir's listing and k3s's .cache.json do not depend on what the probe finds (only
  // how the listing is classified does): both are read while the probe is under way.
  const listing = session.files.listFiles(root.replace(/\/+$/, ''));
  const importCacheRead = readK3sImportCache(session.files, root);
  // k3s compares full-precision mtimes with the cache's whole seconds: read them where it matters.
  const nanosRead = importCacheRead.then((c) => (c.enabled && c.readable ? session.files.subSecondMtimes(root) : null));
  listing.catch(() => undefined);
  nanosRead.catch(() => undefined);
  const infoRead = Promise.resolve(opts.info ?? session.detect());
  // What the cluster needs: one exec on the same connection, started as soon as the probe names
  // the distro and its data-dir, so a server's kubectl answers while containerd lists the images
  // (waiting for the list made `images` on a server node cost a second round of kubectl's time).
  const clusterRead = infoRead
    .then((info) => readClusterAnswer(session.ssh, clusterOptions(session.def, info)))
    .catch((err: unknown): ClusterAnswer => (log.debug('cluster needs not read', { node: session.def.name, err }), { kind: 'error', message: `the cluster could not be asked (${err instanceof Error ? err.message : String(err)})`, sandbox: null }));
  // kubelet's max-age GC and credential verification change the verdicts: read alongside.
  const kubeletRead = infoRead.then((info) => readGcPolicy(session, info)).catch(() => undefined);
  const [info, platform, baseRefs] = await Promise.all([infoRead, session.platform(), session.listBaseImages()]);
  const [files, importCache, nanos] = await Promise.all([
    scanImagesDir(session.files, root, {
      nodeKey: `${session.def.host}:${session.def.port}`,
      walk: startupWalk(info.distroVersion), // the node's release decides what k3s walks
      who: distroDisplayName(info.distro),
      listing,
      ...(opts.indexCache ? { cache: opts.indexCache } : {}),
    }),
    importCacheRead,
    nanosRead.catch((err: unknown) => (log.debug('sub-second mtimes not read', { node: session.def.name, err }), null)),
  ]);
  log.debug('images dir read', { node: session.def.name, files: files.length });
  for (const f of files) f.mtimeNanos = nanos?.get(f.abs) ?? null;

  const { fateArchives, prepull } = fateInputs(files, importCache, info, platform);
  const { pinnedRefs, protection, who } = protectedRefs(baseRefs, fateArchives, prepull, info);
  // Need × protection: the verdict every view shows (shared/needs).
  const cluster = await clusterRead;
  const [nodeNeeds, auditPinned] = await Promise.all([
    opts.needs ? opts.needs(session.def, cluster) : Promise.resolve(nodeNeedsFrom(session.def, cluster, null, null)),
    opts.auditPinned ?? Promise.resolve(new Set<string>()),
  ]);
  const holders = (ref: string) => files.filter((f) => f.index?.images.some((i) => i.name === ref)).map((f) => `${f.path} in the images dir`);
  // Without a source of needs, provenance decides: k3s's distribution.source labels on the
  // content of unpinned images are one more sign of an air-gap import (read only then).
  const distributionSourced = needsKnown(nodeNeeds) ? new Set<string>() : await distributionSourcedTargets(session, pinnedRefs);
  const kubelet = await kubeletRead;
  const judged = applyNeeds(pinnedRefs, protection, nodeNeeds, { auditPinned, holders, distributionSourced, who, ...(kubelet ? { kubelet } : {}) });
  return { info, platform, images: judged.refs.map(withSignature), files, fateArchives, prepull, importCache, needs: judged.report, cluster };
}

/** What the next start does with each archive and pre-pull list of the images dir (fate/predict's input). */
function fateInputs(files: ScannedFile[], importCache: K3sImportCache, info: NodeInfo, platform: Platform): { fateArchives: FateArchive[]; prepull: FatePrepull[] } {
  const fateArchives: FateArchive[] = [];
  const prepull: FatePrepull[] = [];
  for (const f of files) {
    const cache = cacheVerdict(importCache, f, info.distroVersion);
    if (f.kind === 'archive') {
      fateArchives.push({
        path: f.path,
        images: f.index
          ? f.index.images.filter((i) => i.name !== null).map((i) => ({ name: i.name!, imageId: configDigestFor(i, platform) }))
          : null,
        cachedByK3s: cache.skipped,
        cache,
        walked: f.walked,
      });
    } else if (f.kind === 'prepull' && f.prepull) {
      prepull.push({ path: f.path, list: f.prepull, cachedByK3s: cache.skipped, cache, walked: f.walked });
    }
  }
  return { fateArchives, prepull };
}

/** Every reference with its fate and its image's protection, now and after the next start. */
function protectedRefs(baseRefs: BaseImageRef[], fateArchives: FateArchive[], prepull: FatePrepull[], info: NodeInfo) {
  const fates = predictFates(baseRefs, fateArchives, info, prepull);
  const mode = criPinning(info.containerdVersion);
  const who = distroDisplayName(info.distro);
  // CRI's image-id records share their image's fate (kubelet sees images, not references).
  const perRef = applyImageProtection(
    baseRefs.map((r) => ({ ...r, ...fates.get(r.name)! })),
    mode,
    who,
  );
  // Each reference also carries its image's verdict (the one model), for scripts reading JSON.
  const protection = imageProtection(perRef, mode, who);
  const pinnedRefs: ImageRef[] = perRef.map((r) => {
    const p = protection.get(protectionKey(r))!;
    return { ...r, imagePinnedNow: p.now, imagePinnedAfterRestart: p.afterRestart };
  });
  return { pinnedRefs, protection, who };
}

/** What Holdfast verified of the reference's signature at import, from its labels (shared/signatures). */
const withSignature = (r: ImageRef): ImageRef => ({ ...r, signature: signatureRecord(r.labels) });

/** Content labels k3s sets on what it imports (k3s PR #13221), read for provenance. */
const DISTRIBUTION_SOURCE = 'containerd.io/distribution.source.';
/** Unpinned targets whose labels are read for provenance at most (each is one Content.Info). */
const MAX_PROVENANCE_READS = 256;

/** The target digests of unpinned references whose blob carries k3s's distribution.source labels. */
async function distributionSourcedTargets(session: NodeSession, refs: readonly ImageRef[]): Promise<Set<string>> {
  const digests = [...new Set(refs.filter((r) => r.pin === 'none' && !r.imagePinnedNow).map((r) => r.digest))].slice(0, MAX_PROVENANCE_READS);
  const out = new Set<string>();
  await mapLimit(digests, 8, async (d) => {
    const info = await session.containerd.contentInfo(d).catch(() => null);
    if (info && Object.keys(info.labels).some((k) => k.startsWith(DISTRIBUTION_SOURCE))) out.add(d);
  });
  return out;
}

/** What each file of the images dir brings, as ArchiveInfo.images lists it (unnamed images by id). */
function archiveImageNames(f: ScannedFile, platform: Platform): string[] {
  return f.index ? f.index.images.map((i) => i.name ?? `(unnamed) ${configDigestFor(i, platform) ?? ''}`.trim()) : [];
}

/** What k3s's import cache makes the next start do with this file (shared/importCache). */
function cacheOf(inv: ImagesInventory, f: ScannedFile): CacheVerdict | undefined {
  return inv.fateArchives.find((a) => a.path === f.path)?.cache ?? inv.prepull.find((p) => p.path === f.path)?.cache;
}

/** Whether k3s's import cache makes it skip this file at the next start. */
function cachedByK3s(inv: ImagesInventory, f: ScannedFile): boolean {
  return cacheOf(inv, f)?.skipped ?? false;
}

/** The images dir as lost-pin detection reads it (shared/lostPins ImagesDirFile). */
export function imagesDirFiles(inv: ImagesInventory): ImagesDirFile[] {
  return inv.files.map((f) => ({ path: f.path, kind: f.kind, images: archiveImageNames(f, inv.platform), cachedByK3s: cachedByK3s(inv, f) }));
}

/** Every file of the images dir with its removal check (completeness read from containerd). */
async function archiveInfos(session: NodeSession, inv: ImagesInventory): Promise<ArchiveInfo[]> {
  const { info, platform, images, files } = inv;
  const completeness = new Map<string, Promise<Completeness>>();
  const complete = (ref: BaseImageRef) => {
    let p = completeness.get(ref.digest);
    if (!p) {
      p = checkComplete(session.containerd, { digest: ref.digest, mediaType: ref.mediaType, size: 0, annotations: {} }, platform, session.blobs);
      completeness.set(ref.digest, p);
    }
    return p;
  };

  // k3s's import cache, once for the node (shared/importCacheHealth), and what each .txt list takes over.
  const importCache = importCacheHealth({
    ...inv.importCache,
    honoured: importCacheHonoured(info.distroVersion),
    distroVersion: info.distroVersion,
    root: session.def.imagesDir,
    files: files.filter((f) => f.kind !== 'ignored'),
  });
  const takesOver = (path: string) => images.filter((r) => r.listTrap?.list === path).map((r) => ({ ref: r.name, listed: r.listTrap!.listed }));
  // Every file's removal check at once (their completeness reads overlap), results in order.
  const checks = await Promise.all(files.map((f) => removalCheckFor(session.def.name, f, images, platform, complete, criPinning(info.containerdVersion), distroDisplayName(info.distro))));
  const paths = files.map((f) => f.path);
  const archives: ArchiveInfo[] = [];
  for (const [i, f] of files.entries()) {
    const check = checks[i]!;
    // Without CRI pinning no pin makes removal safe: pinning is no remedy there.
    const remedy = check.allowed || criPinning(info.containerdVersion) === 'none' ? undefined : archiveRemedy(check);
    const taken = f.kind === 'prepull' ? takesOver(f.path) : [];
    // What removing it sets off, as the removal check warns (shared/removalVerdict): the tone of every view.
    const warnings = removalWarnings(session.def.name, info.distro, paths, f.path);
    archives.push({
      path: f.path,
      kind: f.kind,
      compression: f.compression,
      size: f.size,
      mtime: new Date(f.mtime * 1000).toISOString(),
      images: archiveImageNames(f, platform),
      imported: f.kind === 'archive' && !!f.index && check.images.every((i) => i.present),
      safeToRemove: check.allowed,
      // With a warning standing, "loses nothing" is not the whole story: the warning is.
      reason: !check.allowed
        ? summarise(check.problems)
        : warnings.length
          ? `Every image it brings is complete and durably protected from kubelet's garbage collector now. ${warnings.map((w) => w.reason).join(' ')}`
          : 'Every image it brings is complete and durably protected from kubelet\'s garbage collector: removing it loses nothing.',
      cachedByK3s: cachedByK3s(inv, f),
      ...(cacheOf(inv, f) ? { cache: cacheOf(inv, f)! } : {}),
      ...(remedy ? { remedy } : {}),
      ...(warnings.length ? { removalWarnings: warnings } : {}),
      ...(f.error ? { error: f.error } : {}),
      ...(taken.length ? { takesOver: taken } : {}),
      importCache,
    });
  }
  log.debug('archives checked', { node: session.def.name, archives: archives.length });
  return archives;
}

function summarise(problems: Prose[]): Prose {
  const first = problems[0] ?? '';
  if (problems.length <= 1) return first;
  const more = ` (and ${problems.length - 1} more)`;
  if (typeof first === 'string') return `${first}${more}`;
  if ('text' in first) return { ...first, end: `${first.end}${more}` };
  return first.map((c, i) => (i === first.length - 1 ? { ...c, end: `${c.end}${more}` } : c));
}

/**
 * Can this file be removed without losing an image or a pin? Says exactly why not. An image is
 * safe once kubelet keeps it with no archive re-pinning it — the shared protection model's
 * durableProtection, per image id under the node's containerd rule `mode` — with each reference's
 * pin underneath.
 */
export async function removalCheckFor(
  node: string,
  f: ScannedFile,
  refs: ImageRef[],
  platform: Platform,
  complete: (ref: BaseImageRef) => Promise<Completeness>,
  mode: CriPinning,
  /** The distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName). */
  who = 'k3s',
): Promise<RemovalCheck> {
  const problems: Prose[] = [];
  const images: RemovalCheck['images'] = [];
  if (f.kind !== 'archive') {
    problems.push(`${f.path} is not an image archive ${who} imports; Holdfast removes such a file only with --force (logged).${f.note ? ` ${f.note}` : ''}`);
    return { node, path: f.path, allowed: false, problems, images };
  }
  if (!f.index) {
    problems.push(`The index of ${f.path} could not be read (${f.error ?? 'unknown error'}), so Holdfast cannot tell what it brings.`);
    return { node, path: f.path, allowed: false, problems, images };
  }
  // The clause pinning the archive completes: the reader words the remedy (shared/remedy Prose).
  const pinFirst = (text: string): Prose => ({ text: `${text}: make its pins durable first`, remedy: { action: 'pin', node, archive: f.path }, end: '.' });
  for (const img of f.index.images) {
    const label = img.name ?? `an unnamed image`;
    const { wantId, ref } = refsForArchiveImage(refs, img, platform);
    if (!ref || (wantId !== null && ref.imageId !== wantId)) {
      images.push({ name: label, present: false, complete: false, durable: false, missing: [] });
      problems.push(
        ref
          ? `${label} in containerd is another image than the one in the archive: ${who} has not imported this archive's version.`
          : `${label} is not in containerd: ${who} has not imported this archive (yet).`,
      );
      continue;
    }
    const c = await complete(ref);
    const siblings = ref.imageId === null ? [ref] : refs.filter((r) => r.imageId === ref.imageId);
    const kept = durableProtection(siblings, mode, who);
    images.push({
      name: label,
      present: true,
      complete: c.complete,
      durable: kept.afterRestart,
      missing: c.missing,
      refs: siblings.map((r) => ({ name: r.name, pin: r.pin })),
      protection: kept.reason,
    });
    if (!c.complete) problems.push(`${label} is incomplete in containerd (missing ${c.missing.join(', ')}): the archive is its only full copy.`);
    if (kept.afterRestart) continue;
    if (mode === 'none') {
      problems.push(`${label}: this containerd has no CRI image pinning, so no pin keeps kubelet from deleting it, and ${f.path} is what brings it back at the next ${who} start.`);
    } else if (mode === 'first-loaded') {
      problems.push(
        pinFirst(`${label}: this containerd (1.7.3–1.7.9) keeps an image only if every reference carries a durable pin, and ${kept.deciding.join(', ')} ${kept.deciding.length === 1 ? 'does' : 'do'} not`),
      );
    } else {
      problems.push(pinFirst(ref.pin === 'distro' ? `${label} is pinned by ${who} only` : `${label} is not durably pinned`));
    }
  }
  return { node, path: f.path, allowed: problems.length === 0, problems, images };
}

/** What every use case is given: the audit log, the archives' index cache, the needs resolver. */
export interface OpsContext {
  audit: AuditLog;
  indexCache?: IndexCache;
  /** How a node's needs are found beyond its own answer (the service's: lists, agents' servers). */
  needs?: NeedsResolver;
  /** How a remedy in an error or an audit note is worded (ServiceOptions.remedyCommand); without it, the prose alone. */
  word?: RemedyWording;
}

/** What every inventory is read with: the caches, the needs resolver, the pins Holdfast made there. */
export function inventoryOptions(session: NodeSession, ctx: OpsContext): InventoryOptions {
  return {
    info: session.info(),
    ...(ctx.indexCache ? { indexCache: ctx.indexCache } : {}),
    ...(ctx.needs ? { needs: ctx.needs } : {}),
    auditPinned: ctx.audit.durablePins(session.def.name).then(
      (pins) => new Set(pins.map((p) => p.ref)),
      () => new Set<string>(),
    ),
  };
}

export async function inventory(session: NodeSession, ctx: OpsContext): Promise<NodeInventory> {
  // The info's probe is still under way when the inventory starts what does not depend on it.
  return readInventory(session, inventoryOptions(session, ctx));
}

/** inventory() without the archives' removal checks: for what shows images only (their completeness reads are a third of a listing's round trips). */
export async function imagesInventory(session: NodeSession, ctx: OpsContext): Promise<ImagesInventory> {
  return readImagesInventory(session, inventoryOptions(session, ctx));
}
