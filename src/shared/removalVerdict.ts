// Whether an archive can leave the images dir, as one verdict for every view: the removal check
// (RemovalCheck: what blocks it, and what it sets off without blocking it, such as RKE2 writing its
// own image lists: ./rke2Lists) decides the tone once. A removal with a warning standing is never
// "safe… loses nothing": the app's dialog and Archives tab and the CLI's `rm-archive --dry-run`
// read the same verdict.
import type { RemovalCheck } from './domain';

/** safe: nothing lost, nothing set off; caution: allowed, but a warning stands; refused: it would lose pins. */
export type RemovalTone = 'safe' | 'caution' | 'refused';

export interface RemovalVerdict {
  tone: RemovalTone;
  /** The dialog's heading, and the Archives tab's badge. */
  heading: string;
  /** The sentence under the heading (null when refused: the problems say why). */
  detail: string | null;
  /** After the path in the CLI: "apps.tar can be removed safely". */
  clause: string;
}

export function removalVerdict(check: Pick<RemovalCheck, 'allowed' | 'warnings'>): RemovalVerdict {
  if (!check.allowed) return { tone: 'refused', heading: 'Not safe to remove', detail: null, clause: 'cannot be removed safely' };
  if (check.warnings?.length) {
    return {
      tone: 'caution',
      heading: 'Removable, with a warning',
      detail: 'Every image it brings is in containerd, complete and durably pinned now. But:',
      clause: 'can be removed, but read the warning first',
    };
  }
  return {
    tone: 'safe',
    heading: 'Safe to remove',
    detail: 'Every image it brings is in containerd, complete and durably pinned: removing the file loses nothing.',
    clause: 'can be removed safely',
  };
}
