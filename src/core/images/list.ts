// Every image reference of a namespace, as the Images view and `holdfast images` show it.
import type { ImageRef } from '../../shared/domain';

/** A reference as containerd has it, before its fate at the next k3s start is predicted. */
export type BaseImageRef = Omit<ImageRef, 'afterRestart' | 'reason' | 'archive'>;
import type { ImageRecord } from '../containerd/client';
import type { Platform } from './mediaTypes';
import { pinState } from './pinState';
import { TargetResolver } from './resolve';

/** Runs fn over items with at most `limit` in flight. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}

/** The references of `records` (containerd's image list), their targets resolved for the node's platform. */
export async function listImageRefs(records: ImageRecord[], resolver: TargetResolver): Promise<BaseImageRef[]> {
  // Many references share a target (tag + digest ref): resolve each digest once.
  const unique = [...new Map(records.map((r) => [r.target.digest, r.target])).values()];
  await mapLimit(unique, 8, (t) => resolver.resolve(t));
  const refs = await Promise.all(
    records.map(async (r): Promise<BaseImageRef> => {
      const t = await resolver.resolve(r.target);
      return {
        name: r.name,
        digest: r.target.digest,
        mediaType: r.target.mediaType,
        imageId: t.imageId,
        size: t.size,
        platforms: t.platforms,
        createdAt: r.createdAt ? r.createdAt.toISOString() : null,
        labels: r.labels,
        pin: pinState(r.labels),
      };
    }),
  );
  return refs.sort((a, b) => a.name.localeCompare(b.name));
}

export type { Platform };
