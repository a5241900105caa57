// What the views show of a node's site needs: the words around the one rule (shared/needs), never
// a second copy of it. Which images are needed and at risk is the core's verdict (ImageRef.need,
// NeedsReport.missing) read through atRiskOf; here only how it is said and counted for display.
// Pure — unit-tested in test/unit/renderer.
import type { ImageRef } from '../shared/domain/images';
import { atRiskOf, isAtRisk, NEED_VERDICT_TEXT, workloadName, type AtRiskImage, type NeedsReport } from '../shared/needs';
import type { Workload } from '../shared/workloads';
import { isImageIdRecord } from '../shared/imageReference';

export { isAtRisk, NEED_VERDICT_TEXT, workloadName };

/** A node's images as the store holds them (ImagesState): what the needs views read. */
export interface NodeImagesLike {
  items: readonly ImageRef[];
  needs?: NeedsReport | null;
  loadedAt?: number;
}

const atRiskMemo = new WeakMap<readonly ImageRef[], { needs: NeedsReport | null; value: AtRiskImage[] }>();

/**
 * The needed images at risk on a node (shared/needs atRiskOf: its images' verdicts, then the
 * needed images it lacks), memoised per loaded list; null until the node's images are in.
 */
export function nodeAtRisk(images: NodeImagesLike): AtRiskImage[] | null {
  if (!images.loadedAt) return null;
  const needs = images.needs ?? null;
  const got = atRiskMemo.get(images.items);
  if (got && got.needs === needs) return got.value;
  const value = atRiskOf(images.items, needs);
  atRiskMemo.set(images.items, { needs, value });
  return value;
}

/** The name to show for an at-risk image: a tag, else a digest reference, else what there is. */
export function atRiskName(a: Pick<AtRiskImage, 'refs'>): string {
  return a.refs.find((r) => !isImageIdRecord(r) && !r.includes('@')) ?? a.refs.find((r) => !isImageIdRecord(r)) ?? a.refs[0] ?? '';
}

/** Missing first (a pod that needs it cannot start now), then not pinned, then losing its pin; by name within each. */
const VERDICT_ORDER: Record<AtRiskImage['verdict'], number> = { missing: 0, unprotected: 1, losing: 2, unverified: 3 };

export function sortAtRisk(list: readonly AtRiskImage[]): AtRiskImage[] {
  return [...list].sort((a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] || (atRiskName(a) < atRiskName(b) ? -1 : atRiskName(a) > atRiskName(b) ? 1 : 0));
}

/** Where a node's needs come from, in one line: the sources, or why there is none and what counts instead. */
export function needsSourceText(report: NeedsReport): { known: boolean; text: string } {
  if (report.basis === 'known') {
    return { known: true, text: `Site needs from: ${report.sources.map((s) => s.label).join(', ')}` };
  }
  const why = report.noSource ?? 'no cluster or operator’s list answered';
  const sandbox = report.sources.some((s) => s.kind === 'sandbox') ? '; the sandbox image from containerd’s CRI config' : '';
  return { known: false, text: `No source of site needs (${why}): images from air-gap archives count as needed${sandbox}${unmatchedHint(report)}` };
}

/** A cluster answered without this node among its Nodes: where to map it (shared/kubeNode). */
function unmatchedHint(report: NeedsReport): string {
  const u = report.unmatched;
  if (!u) return '';
  const more = u.total > u.nodes.length ? ` and ${u.total - u.nodes.length} more` : '';
  return `. If it is one of the cluster’s Nodes (${u.nodes.join(', ')}${more}), set its Kubernetes Node name: Edit, then Advanced`;
}

/** The report's notes, without the one that only repeats why there is no source. */
export function needsNotes(report: NeedsReport): string[] {
  return report.notes.filter((n) => n !== report.noSource);
}

/** "Deployment default/web (running)": a workload and why it needs the image. */
export const workloadLine = (w: Workload): string => `${workloadName(w)}${w.why ? ` (${w.why})` : ''}`;

/** Workloads to list in a detail: controllers before the pods and ReplicaSets they make. */
const KIND_RANK: Record<string, number> = { CronJob: 0, Deployment: 0, StatefulSet: 0, DaemonSet: 0, ReplicationController: 0, Job: 1, ReplicaSet: 2, Pod: 3 };

export function workloadsForDisplay(list: readonly Workload[]): Workload[] {
  return [...list].sort((a, b) => (KIND_RANK[a.kind] ?? 1) - (KIND_RANK[b.kind] ?? 1));
}

/** Counts over nodes, for the fleet's banner and summary line. */
export function neededAtRiskTotals(nodes: readonly (AtRiskImage[] | null)[]): { images: number; nodes: number } {
  let images = 0;
  let n = 0;
  for (const list of nodes) {
    if (!list?.length) continue;
    images += list.length;
    n++;
  }
  return { images, nodes: n };
}
