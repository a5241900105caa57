// Direct delivery to one node: the images of a spooled archive written straight into the node's
// containerd over the tunnel, as containerd's own client imports (see plan.ts for the labels),
// sending only the blobs the node lacks. Nothing lands in the images dir, so no k3s watcher is
// involved and it works the same on RKE2 and through sudo's containerd bridge. The steps and
// what a failed run leaves are on deliverDirect.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { LABEL_CRI_PINNED, PINNED } from '../../../shared/domain/labels';
import { formatPlatform, type Platform } from '../../../shared/mediaTypes';
import { mapLimit } from '../../../shared/mapLimit';
import type { ContainerdWriter, Descriptor } from '../../containerd/client';
import { HoldfastError } from '../../errors';
import { formatLimit, limit } from '../../limits';
import type { NodeSession } from '../../node/session';
import type { OpsContext } from '../inventory';
import { applyPinChange } from '../pin/apply';
import { digestRefFor } from '../import/imageSet';
import { verifyDurable, type Verification } from '../import/verify';
import type { ArchiveImage } from '../../archives/format/readIndex';
import type { SpooledBundle } from './bundle';
import { DIST_SOURCE, mergeSources, planDelivery, type DeliveryPlan, type PlannedBlob } from './plan';
import { criSnapshotter } from './snapshotter';
import { bundleDiffId } from './diffId';

export type DirectPhase = 'checking' | 'sending' | 'unpacking' | 'pinning' | 'verifying' | 'done';

export interface DirectProgress {
  phase: DirectPhase;
  /** Bytes the node lacked / sent so far (a resumed blob counts from where it resumed). */
  bytesToSend: number;
  bytesSent: number;
  blobsToSend: number;
  blobsSent: number;
}

export interface DirectNodeResult {
  node: string;
  /** Every reference written or updated (names and digest references). */
  references: string[];
  images: number;
  blobs: number;
  blobsPresent: number;
  blobsSent: number;
  /** Bytes the node lacked before the run, and bytes put on the wire now (resumes send less). */
  bytesMissing: number;
  bytesSent: number;
  layersUnpacked: number;
  snapshotter: string;
  platform: string;
  /** Images left out: the archive has nothing for the node's platform. */
  skipped: string[];
  verification: Verification;
}

export interface DirectOptions {
  signal?: AbortSignal;
  onProgress?: (p: DirectProgress) => void;
}

const LEASE_HOURS = 24;
const MAX_CONFIG = limit('archive.jsonMemberBytes');
/** Blob lookups in flight at once (each a small unary call on the one channel). */
const INFO_PARALLEL = 16;
/** Blob writes in flight at once per node. */
const WRITE_PARALLEL = 3;

const aborted = (signal?: AbortSignal): void => {
  if (signal?.aborted) throw signal.reason ?? Object.assign(new Error('cancelled'), { name: 'AbortError' });
};

/** The blobs' current state in the node's content store, a few calls at a time. */
async function presentLabels(session: NodeSession, blobs: PlannedBlob[]): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < blobs.length) {
      const b = blobs[next++]!;
      const info = await session.containerd.contentInfo(b.digest);
      if (info && info.size === b.size) out.set(b.digest, info.labels);
    }
  };
  await Promise.all(Array.from({ length: Math.min(INFO_PARALLEL, blobs.length) }, worker));
  return out;
}

/** The labels a present blob still needs (distribution sources merged with what it lists). */
function missingLabels(b: PlannedBlob, has: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b.labels)) {
    const want = k.startsWith(`${DIST_SOURCE}.`) ? mergeSources(has[k], v.split(',')) : v;
    if (has[k] !== want) out[k] = want;
  }
  return out;
}

/** The plan as the import's verification reads archives: names, target, the platform's config and layers. */
function asArchiveImages(plan: DeliveryPlan, platform: string): ArchiveImage[] {
  const steps = new Map(plan.unpack.map((u) => [u.manifest, u]));
  return plan.images.flatMap((im) => {
    const platforms = im.manifests.slice(0, 1).map((m, i) => ({
      platform,
      manifestDigest: m,
      configDigest: im.configs[i]!,
      layers: (steps.get(m)?.layers ?? []).map((l) => ({ digest: l.digest, size: l.size })),
      missing: [],
    }));
    return im.names.map((name) => ({ name, targetDigest: im.target.digest, targetMediaType: im.target.mediaType, platforms }));
  });
}

/**
 *   plan ─▶ ask the content store what it holds ─▶ lease ─▶ write what is missing (resumable)
 *        ─▶ labels on what was there ─▶ unpack for CRI's snapshotter ─▶ image records, pinned
 *        durably at creation ─▶ pin every reference (the one pin rule) ─▶ release the lease ─▶ verify
 *
 * The lease (with containerd's 24 h expiry label) keeps what was written from the garbage
 * collector until the labels and records that keep it for good are in place. A failed or
 * cancelled run leaves its lease to expire instead of deleting it: the blobs it committed stay
 * for the next run, which sends only what is still missing, and resumes a half-sent blob from
 * where containerd's ingest stopped (the ingest ref is the digest's, the same on every run).
 */
export async function deliverDirect(session: NodeSession, ctx: OpsContext, bundle: SpooledBundle, opts: DirectOptions = {}): Promise<DirectNodeResult> {
  const node = session.def.name;
  const writer = session.writer;
  if (!writer) throw new HoldfastError('REFUSED', `${node}: this connection cannot write into containerd`, { hint: 'Import the archive through the images dir instead (without --direct).' });
  const progress: DirectProgress = { phase: 'checking', bytesToSend: 0, bytesSent: 0, blobsToSend: 0, blobsSent: 0 };
  const report = (): void => opts.onProgress?.({ ...progress });
  report();

  const [platform, snapshotter] = await Promise.all([session.platform(), criSnapshotter(session)]);
  const plan = planForNode(node, bundle, platform, snapshotter);
  const { present, missing } = await blobsToSend(session, bundle, plan);
  progress.bytesToSend = missing.reduce((n, b) => n + b.size, 0);
  progress.blobsToSend = missing.length;
  const bytesMissing = progress.bytesToSend;
  aborted(opts.signal);

  const lease = `holdfast-direct-${randomBytes(6).toString('hex')}`;
  await writer.createLease(lease, { 'containerd.io/gc.expire': new Date(Date.now() + LEASE_HOURS * 3600_000).toISOString() });
  const d: Delivery = { writer, bundle, signal: opts.signal, progress, report, snapshotter, lease };
  progress.phase = 'sending';
  report();
  await sendMissing(d, missing);
  for (const b of plan.blobs) {
    const has = present.get(b.digest);
    if (!has) continue;
    const add = missingLabels(b, has);
    if (Object.keys(add).length) await writer.updateContentLabels(b.digest, add, lease);
  }

  progress.phase = 'unpacking';
  report();
  const unpacked = await unpackLayers(d, plan);

  progress.phase = 'pinning';
  report();
  const references = await putRecords(session, ctx, d, plan);
  await writer.deleteLease(lease);

  progress.phase = 'verifying';
  report();
  const verification = await verifyDelivery(session, plan, formatPlatform(platform));
  progress.phase = 'done';
  report();
  return {
    node,
    references,
    images: plan.images.length,
    blobs: plan.blobs.length,
    blobsPresent: plan.blobs.length - missing.length,
    blobsSent: missing.length,
    bytesMissing,
    bytesSent: progress.bytesSent,
    layersUnpacked: unpacked,
    snapshotter,
    platform: formatPlatform(platform),
    skipped: plan.skipped,
    verification,
  };
}

/** One delivery, as its steps after the lease share it. */
interface Delivery {
  writer: ContainerdWriter;
  bundle: SpooledBundle;
  signal: AbortSignal | undefined;
  progress: DirectProgress;
  report: () => void;
  snapshotter: string;
  lease: string;
}

/** What the node gets of the archive: its platform's images, refused when there are none. */
function planForNode(node: string, bundle: SpooledBundle, platform: Platform, snapshotter: string): DeliveryPlan {
  const plan = planDelivery(bundle.images, {
    platform,
    snapshotter,
    readConfig: (digest) => {
      const file = bundle.files.get(digest);
      if (!file) throw new HoldfastError('INVALID_INPUT', `the archive lacks the image config ${digest}`, { hint: 'The archive is incomplete: export it again.' });
      // A config is small JSON; a hostile archive could name a huge blob as one.
      if (statSync(file).size > MAX_CONFIG) throw new HoldfastError('INVALID_INPUT', `the image config ${digest} is larger than ${formatLimit('archive.jsonMemberBytes')}`, { hint: 'This is not an image archive Holdfast can deliver.' });
      return readFileSync(file);
    },
  });
  if (plan.images.length === 0) {
    throw new HoldfastError('INVALID_INPUT', `nothing in the archive runs on ${node} (${formatPlatform(platform)}): ${plan.skipped.join('; ') || 'it holds no named image'}`, {
      hint: 'Export the images for the node\'s platform (e.g. `docker save` on a machine of that architecture, or a multi-platform OCI archive).',
    });
  }
  return plan;
}

/** The blobs the node holds (with their labels) and the ones it lacks, each of which the archive must have. */
async function blobsToSend(session: NodeSession, bundle: SpooledBundle, plan: DeliveryPlan): Promise<{ present: Map<string, Record<string, string>>; missing: PlannedBlob[] }> {
  const present = await presentLabels(session, plan.blobs);
  const missing = plan.blobs.filter((b) => !present.has(b.digest));
  const lacking = missing.find((b) => !bundle.files.has(b.digest));
  if (lacking) {
    throw new HoldfastError('INVALID_INPUT', `the archive lacks ${lacking.role} ${lacking.digest}, and ${session.def.name} does not hold it either`, {
      hint: 'The archive is incomplete for this node: export it again with every layer.',
    });
  }
  return { present, missing };
}

/**
 * A few blobs at a time (one stream each: SSH and containerd's hashing are per stream), and each
 * role only once the one below it is in: layers and configs, then manifests, then indexes.
 */
async function sendMissing(d: Delivery, missing: PlannedBlob[]): Promise<void> {
  const { progress, report, signal } = d;
  const sentOf = new Map<string, number>();
  const send = async (b: PlannedBlob): Promise<void> => {
    aborted(signal);
    const file = d.bundle.files.get(b.digest)!;
    let resumedAt: number | null = null;
    await retryWhileLocked(signal, () =>
      d.writer.writeBlob(
        {
          ref: `holdfast-${b.digest}`,
          digest: b.digest,
          size: b.size,
          labels: b.labels,
          read: (offset) => (b.size === 0 ? emptyStream() : createReadStream(file, { start: offset, highWaterMark: 1024 * 1024 })),
          onProgress: (at) => {
            resumedAt ??= at;
            sentOf.set(b.digest, at - resumedAt);
            progress.bytesSent = [...sentOf.values()].reduce((n, x) => n + x, 0);
            report();
          },
          ...(signal ? { signal } : {}),
        },
        d.lease,
      ),
    );
    progress.blobsSent++;
    report();
  };
  for (const roles of [['layer', 'config'], ['manifest'], ['index']]) {
    await mapLimit(missing.filter((b) => roles.includes(b.role)), WRITE_PARALLEL, send);
  }
}

/** Every layer unpacked into CRI's snapshotter unless the node has its snapshot; how many were. */
async function unpackLayers(d: Delivery, plan: DeliveryPlan): Promise<number> {
  const { writer, snapshotter, lease } = d;
  let unpacked = 0;
  const notItsConfig = (layer: { digest: string }, got: string, want: string): HoldfastError =>
    new HoldfastError('INVALID_INPUT', `layer ${layer.digest} unpacks to ${got}, but the image's config says ${want}`, {
      hint: 'The archive does not match its own config: export it again.',
    });
  for (const step of plan.unpack) {
    for (let i = 0; i < step.layers.length; i++) {
      aborted(d.signal);
      const chain = step.chainIds[i]!;
      const layer = step.layers[i]!;
      if (await writer.statSnapshot(snapshotter, chain)) {
        // The node holds the snapshot the config names, so nothing is unpacked: the archive's
        // layer is checked against the config here instead (diffId.ts says why). A layer the
        // archive lacks is the node's own, unpacked by containerd, which checked it then.
        const file = d.bundle.files.get(layer.digest);
        const got = file ? await bundleDiffId(d.bundle, layer.digest, file, d.signal) : step.diffIds[i]!;
        if (got !== step.diffIds[i]) throw notItsConfig(layer, got, step.diffIds[i]!);
        continue;
      }
      const key = `holdfast-extract-${randomBytes(6).toString('hex')} ${chain}`;
      const mounts = await writer.prepareSnapshot(snapshotter, key, i > 0 ? step.chainIds[i - 1]! : '', lease);
      try {
        const applied = await writer.applyDiff({ mediaType: layer.mediaType, digest: layer.digest, size: layer.size, annotations: {} }, mounts, lease);
        if (applied.digest !== step.diffIds[i]) throw notItsConfig(layer, applied.digest, step.diffIds[i]!);
        await writer.commitSnapshot(snapshotter, chain, key, lease);
        unpacked++;
      } catch (e) {
        await writer.removeSnapshot(snapshotter, key, lease).catch(() => undefined);
        // Another unpack (kubelet, a second run) committed the same layer meanwhile: fine.
        if (!(e instanceof HoldfastError && e.code === 'CONFLICT' && (await writer.statSnapshot(snapshotter, chain)))) throw e;
      }
    }
  }
  return unpacked;
}

/** Every name's record and digest reference, pinned (created ones audited); the references. */
async function putRecords(session: NodeSession, ctx: OpsContext, d: Delivery, plan: DeliveryPlan): Promise<string[]> {
  const references: string[] = [];
  const created: { ref: string; after: Record<string, string> }[] = [];
  for (const im of plan.images) {
    const refs = [...im.names, ...im.names.map((n) => digestRefFor(n, im.target.digest)).filter((r): r is string => r !== null)];
    for (const ref of new Set(refs)) {
      aborted(d.signal);
      references.push(ref);
      await putRecord(session, ref, im.target, d.lease, created);
    }
  }
  if (created.length) {
    await ctx.audit.append({ node: session.def.name, action: 'pin', changes: created.map((c) => ({ ref: c.ref, imageId: null, before: {}, after: c.after })), note: 'direct delivery: created pinned' });
  }
  // Existing records the import re-pointed may still carry k3s's pin: the one pin rule makes
  // them durable in the right order (and audits it).
  await applyPinChange(session, ctx, 'pin', { refs: references });
  return references;
}

async function* emptyStream(): AsyncIterable<Buffer> {}

/**
 * containerd holds an ingest's lock until it notices that the stream writing it has gone (a run
 * killed a moment ago): "ref … locked". Waits for it, a bounded number of times.
 */
async function retryWhileLocked<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= 20 || !(e instanceof HoldfastError && /\blocked\b/.test(e.message))) throw e;
      aborted(signal);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Creates the record pinned, or points an existing one at the target (its other labels stay). */
async function putRecord(session: NodeSession, ref: string, target: Descriptor, lease: string, created: { ref: string; after: Record<string, string> }[]): Promise<void> {
  const writer = session.writer!;
  const had = await session.containerd.getImage(ref);
  if (!had) {
    try {
      const labels = { [LABEL_CRI_PINNED]: PINNED };
      await writer.createImage({ name: ref, labels, target }, lease);
      created.push({ ref, after: labels });
      return;
    } catch (e) {
      if (!(e instanceof HoldfastError && e.code === 'CONFLICT')) throw e;
    }
  }
  const now = had ?? (await session.containerd.getImage(ref));
  if (now && now.target.digest === target.digest && now.labels[LABEL_CRI_PINNED] === PINNED) return;
  await writer.updateImage(ref, target, { [LABEL_CRI_PINNED]: PINNED }, lease);
}

/**
 * Every reference read back: durable and protected as kubelet sees it (the import's own check),
 * every blob of the node's platform in the content store, and CRI's record of each image (CRI
 * marks what it has loaded with `io.cri-containerd.image=managed`).
 */
async function verifyDelivery(session: NodeSession, plan: DeliveryPlan, platform: string): Promise<Verification> {
  const v = await verifyDurable(session, asArchiveImages(plan, platform));
  const problems = [...v.problems];
  for (const b of plan.blobs) {
    const info = await session.containerd.contentInfo(b.digest);
    if (!info) problems.push(`${b.role} ${b.digest} is not in the content store`);
  }
  for (const im of plan.images) {
    const name = im.names[0]!;
    let managed = false;
    for (let waited = 0; waited <= 10_000 && !managed; waited += 250) {
      managed = (await session.containerd.getImage(name))?.labels['io.cri-containerd.image'] === 'managed';
      if (!managed) await new Promise((r) => setTimeout(r, 250));
    }
    if (!managed) problems.push(`CRI has not loaded ${name}`);
  }
  return { ...v, ok: problems.length === 0, problems };
}
