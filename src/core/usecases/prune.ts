// Prune, applied: plan on a fresh read of the node (shared/prunePlan), check each image again
// just before touching it (a pod may have started, someone may have pinned it), delete every
// reference of each image (Images.Delete per reference, tags first, CRI's id record last), then
// verify the references are gone, measure which blobs went, and log it all in the audit log.
// containerd collects unreferenced blobs itself after a delete; the run's very last delete asks
// it to do so before answering (sync), so the bytes reported freed are measured, not assumed.
import type { PrunedRecord } from '../../shared/domain/audit';
import { pinState } from '../../shared/pinState';
import { distroDisplayName } from '../../shared/distro';
import { planPrune, type PruneOptions, type PrunePlan, type PruneRemoval, type PruneResult } from '../../shared/prunePlan';
import { proseText } from '../../shared/remedy';
import { localUser } from '../audit/log';
import type { ContainerdClient } from '../containerd/client';
import { HoldfastError } from '../errors';
import type { OpsContext } from './inventory';
import type { NodeSession } from '../node/session';
import { readNodeStore, type NodeStore } from './diskPicture';
import { imageOfContainer } from '../disk/store';
import { peerKeeps } from '../node/embeddedRegistry';

export async function planPruneOnNode(session: NodeSession, ctx: OpsContext, opts: PruneOptions): Promise<PrunePlan> {
  const store = await readNodeStore(session, ctx);
  return planPrune(session.def.name, store.images, store.index, opts, await peerKeeps(session, store.images), await distroNameOf(session));
}

/** The node's distro as the texts name it (k3s when it cannot be read: the rules assumed are k3s's). */
const distroNameOf = (session: NodeSession): Promise<string> => session.info().then((i) => distroDisplayName(i.distro), () => distroDisplayName('unknown'));

const pinnedLabels = (labels: Record<string, string>) => pinState(labels) !== 'none';

/** Why an image planned for removal must be left after all, checked against containerd now. */
async function recheck(cd: ContainerdClient, r: PruneRemoval, inUse: Set<string>): Promise<string | null> {
  if (inUse.has(r.key)) return 'A container started using it after the plan was made: left in place.';
  for (const ref of r.refs) {
    const rec = await cd.getImage(ref);
    if (rec && pinnedLabels(rec.labels)) return `${ref} was pinned after the plan was made: left in place (prune never unpins).`;
  }
  return null;
}

export interface ApplyPruneOptions extends PruneOptions {
  /**
   * The image keys the person saw in the preview and confirmed. Only those are removed; one the
   * fresh plan keeps now is refused with the plan's reason. Absent (the CLI): the fresh plan.
   */
  expect?: string[];
}

export async function applyPrune(session: NodeSession, ctx: OpsContext, opts: ApplyPruneOptions): Promise<PruneResult> {
  const cd = session.containerd;
  const node = session.def.name;
  const store = await readNodeStore(session, ctx);
  // Images peers pull from this node through k3s's embedded registry are kept (shared/embeddedRegistry).
  const plan = planPrune(node, store.images, store.index, opts, await peerKeeps(session, store.images), await distroNameOf(session));
  const refused: PruneResult['refused'] = [];
  const todo = opts.expect ? confirmedRemovals(plan, opts.expect, refused) : plan.remove;
  const inUse = await imagesInUse(cd, store);
  const go: PruneRemoval[] = [];
  for (const r of todo) {
    const why = await recheck(cd, r, inUse);
    if (why) refused.push({ key: r.key, refs: r.refs, text: why });
    else go.push(r);
  }

  // A removal the audit log could not record is not made.
  if (go.length) await ctx.audit.assertWritable();
  const { removed, failed } = await deleteImages(cd, go);

  // Measured: the removed images' blobs that the content store no longer has.
  const candidates = [...new Set(removed.flatMap((r) => store.index.byImage[r.key] ?? []))];
  const gone = await Promise.all(candidates.map(async (d) => ((await cd.contentInfo(d)) === null ? (store.index.sizes[d] ?? 0) : 0)));
  const freedBytes = gone.reduce((s, b) => s + b, 0);
  const plannedBytes = removed.reduce((s, r) => s + r.bytes, 0);

  const audit = removed.length || failed.length ? await recordPrune(ctx, node, { plan, removed, failed, refused, plannedBytes, freedBytes }) : null;
  return { node, keepVersions: plan.keepVersions, removed, refused, failed, plannedBytes, freedBytes, audit };
}

/** The fresh plan's removals the person confirmed; a confirmed key it keeps now is refused with its reason. */
function confirmedRemovals(plan: PrunePlan, expect: string[], refused: PruneResult['refused']): PruneRemoval[] {
  const want = new Set(expect);
  const todo = plan.remove.filter((r) => want.has(r.key));
  for (const key of want) {
    if (todo.some((r) => r.key === key)) continue;
    const kept = plan.kept.find((k) => k.key === key);
    refused.push({ key, refs: kept?.refs ?? [], text: kept ? kept.text : 'It is no longer on the node.' });
  }
  return todo;
}

/** The keys of images some container names now (the plan's list is a moment old), CRI-made or not. */
async function imagesInUse(cd: ContainerdClient, store: NodeStore): Promise<Set<string>> {
  const containers = await cd.listContainers();
  const keyByName = new Map(store.images.flatMap((i) => i.refs.map((r) => [r, i.key] as const)));
  const keyById = new Map(store.images.filter((i) => i.imageId).map((i) => [i.imageId!, i.key]));
  const keyByDigest = new Map(store.images.flatMap((i) => i.digests.map((d) => [d, i.key] as const)));
  return new Set(
    containers
      .map((c) => imageOfContainer(c.image, keyByName, keyById, keyByDigest))
      .filter((k): k is string => k !== null),
  );
}

/** Every reference of each image deleted and verified gone; an image that fails keeps what it deleted. */
async function deleteImages(cd: ContainerdClient, go: PruneRemoval[]): Promise<Pick<PruneResult, 'removed' | 'failed'>> {
  const removed: PruneRemoval[] = [];
  const failed: PruneResult['failed'] = [];
  const last = go.at(-1);
  for (const r of go) {
    const deleted: string[] = [];
    try {
      for (const [i, ref] of r.refs.entries()) {
        // The run's final delete waits for containerd's garbage collection, so what is measured
        // afterwards is what the disk really got back.
        const sync = r === last && i === r.refs.length - 1;
        try {
          await cd.deleteImage(ref, sync);
        } catch (e) {
          if (!(e instanceof HoldfastError && e.code === 'NOT_FOUND')) throw e; // gone already: fine
        }
        deleted.push(ref);
      }
      const left = (await Promise.all(r.refs.map((ref) => cd.getImage(ref)))).filter((x) => x !== null).map((x) => x!.name);
      if (left.length) throw new HoldfastError('INTERNAL', `still present after deletion: ${left.join(', ')}`);
      removed.push(r);
    } catch (e) {
      failed.push({ key: r.key, refs: r.refs, deletedRefs: deleted, error: e instanceof Error ? e.message : String(e) });
    }
  }
  return { removed, failed };
}

type PruneOutcome = Pick<PruneResult, 'removed' | 'failed' | 'refused' | 'plannedBytes' | 'freedBytes'> & { plan: PrunePlan };

/** The run in the audit log: what went, what failed and what was left, with why. */
async function recordPrune(ctx: OpsContext, node: string, o: PruneOutcome): Promise<PruneResult['audit']> {
  const { plan, removed, failed, refused } = o;
  const pruned: PrunedRecord = {
    keepVersions: plan.keepVersions,
    images: removed.map((r) => ({ imageId: r.imageId, refs: r.refs, digests: r.digests, bytes: r.bytes })),
    plannedBytes: o.plannedBytes,
    freedBytes: o.freedBytes,
  };
  const notes = [
    ...failed.map((f) => `failed on ${f.refs[0] ?? f.key}: ${f.error}${f.deletedRefs.length ? ` (deleted ${f.deletedRefs.join(', ')})` : ''}`),
    ...refused.map((f) => `left ${f.refs[0] ?? f.key}: ${proseText(f.text)}`),
  ];
  return ctx.audit.record(
    { node, action: 'prune', user: localUser(), pruned, ...(notes.length ? { note: notes.join('; ') } : {}) },
    `removed ${removed.length} image${removed.length === 1 ? '' : 's'} from ${node}${failed.length ? ` (${failed.length} failed)` : ''}`,
    `which images the prune removed (${[...removed, ...failed].map((r) => r.refs[0] ?? '?').join(', ')}) and their digests`,
  );
}
