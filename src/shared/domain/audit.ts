// What the audit log keeps of each change Holdfast made on a node.
import type { LabelChange } from './pins';

export interface AuditEntry {
  time: string;
  user: string;
  node: string;
  action: 'pin' | 'unpin' | 'rm-archive' | 'prune';
  forced?: boolean;
  changes?: LabelChange[];
  archive?: { path: string; size: number; sha256: string };
  /** prune: every image removed (all its references), and the bytes measured freed. */
  pruned?: PrunedRecord;
  note?: string;
  /** rm-archive: what its check warned of (RemovalCheck.warnings), said again once it is done. */
  warnings?: string[];
}

/** What one prune run removed from a node, as the audit log keeps it. */
export interface PrunedRecord {
  keepVersions: number;
  images: { imageId: string | null; refs: string[]; digests: string[]; bytes: number }[];
  plannedBytes: number;
  freedBytes: number;
}
