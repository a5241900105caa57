// The node store as the commands see it: NodeStore's methods, loading core/config/nodes (and
// zod, which validates nodes.json, the largest library the CLI loads before any SSH) at the
// first call. So `holdfast --help` and every command's definition start without them.
import type { NodeStore } from '../core/config/nodes';

type AsyncMethodsOf<T> = { [K in keyof T as T[K] extends (...args: never[]) => Promise<unknown> ? K : never]: T[K] };

/** Every asynchronous method of NodeStore. */
export type Store = AsyncMethodsOf<NodeStore>;

const METHODS = ['list', 'get', 'add', 'addMany', 'update', 'adoptImagesDir', 'remove'] as const;
// A method added to NodeStore must be added above, or this line stops compiling.
const everyMethod: Exclude<keyof Store, (typeof METHODS)[number]> extends never ? true : never = true;
void everyMethod;

export function lazyNodeStore(home: string): Store {
  let real: Promise<NodeStore> | undefined;
  const store = () => (real ??= import('../core/config/nodes').then(({ NodeStore }) => new NodeStore(home)));
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const m of METHODS) {
    out[m] = async (...args) => {
      const s = await store();
      return Reflect.apply(s[m], s, args) as Promise<unknown>;
    };
  }
  return out as unknown as Store;
}
