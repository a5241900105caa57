// The log panel: audit entries newest first, and what each action reads as.
import type { AuditEntry } from '../../shared/domain/audit';

/**
 * Newest first. The log is append-only, so among equal (or unreadable) times the later entry is
 * the newer one; unreadable times sort last.
 */
export function sortAudit(entries: readonly AuditEntry[]): AuditEntry[] {
  return entries
    .map((e, i) => ({ e, i, t: Date.parse(e.time) }))
    .sort((x, y) => {
      const xt = Number.isNaN(x.t) ? Number.NEGATIVE_INFINITY : x.t;
      const yt = Number.isNaN(y.t) ? Number.NEGATIVE_INFINITY : y.t;
      if (xt !== yt) return yt > xt ? 1 : -1;
      return y.i - x.i;
    })
    .map((x) => x.e);
}

export const AUDIT_ACTION_TEXT: Record<AuditEntry['action'], string> = {
  pin: 'Made durable',
  unpin: 'Released durable pin',
  'rm-archive': 'Removed archive',
  prune: 'Pruned images',
};
