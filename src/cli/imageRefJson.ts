// A reference as `-o json` gives it, in images and inspect alike: its remedies worded as the
// commands that carry them out (`command`, as explain's), its lost pin in words.
import type { ImageRef } from '../shared/domain/images';
import type { FleetReport } from '../shared/fleet';
import { lostPinInWords } from '../shared/lostPins';
import { remedyOnNode } from '../shared/remedy';
import { remedyCommand } from './remedyText';

export function imageRefInWords({ remedy, ...r }: ImageRef, node: string) {
  return {
    ...r,
    ...(r.lostPin ? { lostPin: lostPinInWords(r.lostPin, remedyCommand) } : {}),
    ...(remedy ? { command: remedyCommand(remedyOnNode(remedy, node)) } : {}),
  };
}

/** The fleet report with every node's references as imageRefInWords gives them. */
export function fleetReportInWords(report: FleetReport) {
  return { ...report, nodes: report.nodes.map((n) => ({ ...n, images: n.images && n.images.map((r) => imageRefInWords(r, n.node)) })) };
}
