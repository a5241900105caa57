// The verdict's words and shape, apart from the rule (shared/needs.ts) so that the domain types
// can name them without an import cycle.
import type { Workload } from './workloads';

/**
 * missing:     needed, not on the node (a pod that needs it cannot start here);
 * unprotected: needed, on the node, not pinned as kubelet sees it now;
 * losing:      needed, pinned now, unpinned after the next k3s start;
 * unverified:  needed and kept, but kubelet re-verifies an image it did not pull itself
 *              (imagePullCredentialsVerificationPolicy, KEP-2535): it pulls it first, and
 *              offline the pod does not start;
 * protected:   needed and kept;
 * reclaimable: pinned, and nothing at the site needs it (its pin holds disk);
 * unneeded:    not needed (as far as Holdfast can tell) and not pinned.
 */
export type NeedVerdict = 'missing' | 'unprotected' | 'losing' | 'unverified' | 'protected' | 'reclaimable' | 'unneeded';

export const AT_RISK_VERDICTS: readonly NeedVerdict[] = ['missing', 'unprotected', 'losing', 'unverified'];

export const isAtRisk = (v: NeedVerdict): boolean => AT_RISK_VERDICTS.includes(v);

/** The words every view uses for a verdict (a table cell). */
export const NEED_VERDICT_TEXT: Record<NeedVerdict, string> = {
  missing: 'missing',
  unprotected: 'at risk',
  losing: 'at risk at restart',
  unverified: 'at risk: verify pull',
  protected: 'needed, kept',
  reclaimable: 'reclaimable',
  unneeded: 'not needed',
};

/** Why an image counts as needed. */
export type NeedBasis = 'workload' | 'list' | 'sandbox' | 'provenance';

/** An image's verdict (every reference of it carries the same one). */
export interface ImageNeed {
  key: string;
  verdict: NeedVerdict;
  atRisk: boolean;
  needed: boolean;
  /** Why it counts as needed, when it does. */
  basis: NeedBasis | null;
  workloads: Workload[];
  /** One short clause: why it counts as needed ("needed by Deployment default/web"); null when it does not. */
  neededBecause: string | null;
  /** One short clause: why this verdict (the need, then what protects it or not). */
  because: string;
}

/** A reference's share of its image's verdict, as `images --json` and the app carry it. */
export type RefNeed = Omit<ImageNeed, 'key'>;
