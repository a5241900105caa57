// Lost pins on a live node: the audit log's durable pins (read incrementally, see AuditLog)
// against the node's references now, through the one pure rule in shared/lostPins.ts.
import type { ImageRef } from '../../shared/domain/images';
import type { LostPin } from '../../shared/domain/lostPins';
import type { NodeInfo } from '../../shared/domain/nodes';
import { findLostPins, type CurrentRef, type ImagesDirFile } from '../../shared/lostPins';
import { scanImagesDir, type IndexCache } from '../archives/scan';
import type { NodeSession } from '../node/session';
import type { AuditLog } from './log';
import { logger } from '../log';

const log = logger('audit');

/** What an inventory already holds: the references, the images dir and the versions. */
export interface LostPinSources {
  refs: readonly CurrentRef[];
  imagesDir?: readonly ImagesDirFile[];
  info?: Pick<NodeInfo, 'containerdVersion'> | null;
}

export async function lostPinsFrom(node: string, audit: AuditLog, src: LostPinSources): Promise<LostPin[]> {
  const pins = await audit.durablePins(node);
  if (pins.length === 0) return [];
  return findLostPins({ node, pins, refs: src.refs, imagesDir: src.imagesDir ?? [], info: src.info ?? null });
}

/**
 * Lost pins of a node without a full inventory: nothing is asked of the node when Holdfast
 * holds no durable pin there; otherwise one image listing and one images-dir scan (archive
 * indexes come from the local cache), without completeness checks, fate prediction or k3s's
 * import cache.
 */
export async function lostPinsOnNode(session: NodeSession, audit: AuditLog, opts: { indexCache?: IndexCache } = {}): Promise<LostPin[]> {
  const pins = await audit.durablePins(session.def.name);
  if (pins.length === 0) return [];
  const root = session.def.imagesDir;
  const [refs, files, info] = await Promise.all([
    session.listBaseImages(),
    scanImagesDir(session.files, root, { nodeKey: `${session.def.host}:${session.def.port}`, ...(opts.indexCache ? { cache: opts.indexCache } : {}) }),
    session.info().catch((err: unknown) => (log.debug('node versions unknown; lost pins judged without them', { node: session.def.name, err }), null)),
  ]);
  // Whether k3s would skip an archive (.cache.json) is left unknown here: the remedy then names both ways in.
  const imagesDir: ImagesDirFile[] = files.map((f) => ({
    path: f.path,
    kind: f.kind,
    images: f.index ? f.index.images.flatMap((i) => (i.name ? [i.name] : [])) : [],
  }));
  return findLostPins({ node: session.def.name, pins, refs, imagesDir, info });
}

/** The references with the lost pin that concerns each (references that are gone are not in the list). */
export function withLostPins(images: ImageRef[], lost: readonly LostPin[]): ImageRef[] {
  if (lost.length === 0) return images;
  const byRef = new Map(lost.map((l) => [l.ref, l]));
  return images.map((i) => {
    const l = byRef.get(i.name);
    return l && (l.kind === 'label-removed' || l.kind === 'k3s-managed-again') ? { ...i, lostPin: l } : i;
  });
}
