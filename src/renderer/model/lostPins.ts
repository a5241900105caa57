// Pins lost behind Holdfast's back (shared/lostPins.ts), as the node view shows them: one entry
// per image and kind of loss, the tag first, the one-click remedy when there is one.
import type { LostPin } from '../../shared/domain/lostPins';
import { refKind } from '../../shared/drift';
import { lostPinKindText } from '../../shared/lostPins';
import { compareText } from '../../shared/compareText';
import { isImageIdRecord } from '../../shared/imageReference';
import { displayRef } from './refs';
import { formatDateTime } from './text';

/** One image's lost pins of one kind: a LostPin with all its references; pinnedAt and pinnedBy are the newest. */
export interface LostPinGroup extends Omit<LostPin, 'ref'> {
  key: string;
  /** Tags first, then digest references (CRI's sha256:<id> record last). */
  refs: string[];
}

const refOrder = (name: string) => (isImageIdRecord(name) ? 2 : refKind(name) === 'tag' ? 0 : 1);

export function groupLostPins(lost: readonly LostPin[]): LostPinGroup[] {
  const byKey = new Map<string, LostPin[]>();
  for (const l of lost) {
    const key = `${l.node}\0${l.imageId ?? l.ref}\0${l.kind}`;
    byKey.set(key, [...(byKey.get(key) ?? []), l]);
  }
  const out: LostPinGroup[] = [];
  for (const [key, list] of byKey) {
    const sorted = [...list].sort((a, b) => refOrder(a.ref) - refOrder(b.ref) || compareText(a.ref, b.ref));
    const first = sorted[0]!;
    const newest = [...list].sort((a, b) => (a.pinnedAt < b.pinnedAt ? 1 : a.pinnedAt > b.pinnedAt ? -1 : 0))[0]!;
    out.push({
      key,
      node: first.node,
      imageId: first.imageId,
      kind: first.kind,
      refs: sorted.map((l) => l.ref),
      pinnedAt: newest.pinnedAt,
      pinnedBy: newest.pinnedBy,
      summary: first.summary,
      causes: first.causes,
      remedy: sorted.find((l) => l.remedy.kind === 'repin')?.remedy ?? first.remedy,
      stillPinnedVia: first.stillPinnedVia,
    });
  }
  // Images that nothing pins any more first: they are the ones kubelet may delete.
  return out.sort((a, b) => Number(a.stillPinnedVia !== null) - Number(b.stillPinnedVia !== null) || compareText(a.refs[0]!, b.refs[0]!));
}

/**
 * One line for a live alert: "edge-01: nginx:1.27.3 — pin label removed (made durable by tech, 2025-03-01 08:15:02)".
 * `who`: the node's distro as the text names it (shared/distro distroDisplayName).
 */
export function lostPinLine(l: Pick<LostPin, 'node' | 'ref' | 'kind' | 'pinnedAt' | 'pinnedBy'>, who = 'k3s'): string {
  return `${l.node}: ${displayRef(l.ref)} — ${lostPinKindText(l.kind, who)} (made durable by ${l.pinnedBy}, ${formatDateTime(l.pinnedAt)})`;
}
