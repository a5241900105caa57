// Everything Holdfast knows about one reference on one node, gathered in one place: its image and
// the image's other references, its pin and the image's as kubelet sees it, its fate at the next
// k3s start with the reasons in full, what the site needs of it and who does, the files in the
// images dir that bring it, a durable pin Holdfast made that is gone, and what to do. The facts
// come from the rules that own them (shared/protection, shared/needs, core's fates and archive
// checks); the advice is decided here, once. Pure: `holdfast explain` prints it, and a view of
// one image in the app can show the same.
import { archiveBrief } from './archiveRemedy';
import type { ArchiveInfo } from './domain/archives';
import type { ImageRef } from './domain/images';
import type { LostPin } from './domain/lostPins';
import type { PinState } from './domain/pins';
import { atRiskOf, NEED_VERDICT_TEXT, type MissingNeed, type NeedsReport, type NeedVerdict } from './needs';
import { fateBrief, imageProtection, losesPin, protectionBrief, protectionKey, refReading, refsByImage, type RefOutcome } from './protection';
import { imageName, isImageIdRecord } from './imageReference';
import type { CriPinning } from './versions';
import type { Workload } from './workloads';
import { archiveVerdict, type RemovalTone } from './removalVerdict';
import { proseText, remedyOnNode, type ArchiveRemedy, type Prose, type Remedy } from './remedy';
import type { SignatureRecord } from './signatures';

/** One reference of the image, as the explanation lists them. */
export interface ExplainedRef {
  name: string;
  pin: PinState;
  /** CRI's own sha256:<id> record showing its image's pin (shared/protection refReading). */
  inherited: boolean;
  afterRestart: ImageRef['afterRestart'];
  /** Its fate at the next k3s start: the sentence, and the short clause. */
  reason: string;
  brief: string;
  archive: string | null;
  /** What the reason asks to do, on this node (FateVerdict.remedy). */
  remedy?: Remedy;
}

/**
 * What to do, one step: a sentence, and what does it when there is something, as data (`remedy`,
 * worded by the reader: the CLI's command, cli/commands/explain) or a lost pin's own `command`.
 */
export interface Advice {
  /** What to do; a remedy in it is data (shared/remedy Prose). */
  text: Prose;
  remedy?: Remedy;
}

export interface ReferenceExplanation {
  node: string;
  /** The reference explained (for a needed image the node lacks: the reference the site needs). */
  ref: string;
  present: boolean;
  image: {
    key: string;
    imageId: string | null;
    size: number;
    platforms: string[];
    /** Every reference of the image, the explained one first. */
    refs: ExplainedRef[];
    /** The explained reference's labels. */
    labels: Record<string, string>;
    /** What Holdfast verified of its signature at import (shared/signatures); null: never verified. */
    signature: SignatureRecord | null;
    /** What a table of references shows for it (refReading). */
    shown: { pin: PinState; outcome: RefOutcome; inherited: boolean };
    /** The image as kubelet sees it (shared/protection): now, after the next k3s start, why. */
    protection: { now: boolean; afterRestart: boolean; losesPin: boolean; reason: string; brief: string };
  } | null;
  need: {
    verdict: NeedVerdict;
    text: string;
    atRisk: boolean;
    needed: boolean;
    /** Why it counts as needed (null when it does not), and the whole verdict in a sentence. */
    neededBecause: string | null;
    because: string;
    workloads: Workload[];
  };
  /** Where the needs came from (or why nothing told them). */
  needsFrom: { sources: string[]; noSource?: string };
  /** The files in the images dir that bring the image (or, for a missing one, that hold it). */
  archives: { path: string; safeToRemove: boolean; removalTone: RemovalTone; reason: string; brief: string; remedy?: ArchiveRemedy }[];
  /** Durable pins Holdfast made on the image's references that are gone. */
  lostPins: LostPin[];
  /** Where a missing image can be found (an archive, another node). */
  heldBy: string[];
  advice: Advice[];
}

export interface ExplainInput {
  node: string;
  /** The reference on the node, or the needed reference it lacks. */
  ref: string;
  images: readonly ImageRef[];
  needs: NeedsReport;
  lost: readonly LostPin[];
  archives: readonly ArchiveInfo[];
  mode: CriPinning;
  /** The node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName); k3s when not given. */
  who?: string;
}

const plainNeed = (m: MissingNeed) => ({
  verdict: 'missing' as const,
  text: NEED_VERDICT_TEXT.missing,
  atRisk: true,
  needed: true,
  neededBecause: m.because,
  because: m.because,
  workloads: m.workloads,
});

/**
 * Everything about `input.ref` on the node; null when the node neither has it nor needs it.
 * Pure.
 */
export function explainReference(input: ExplainInput): ReferenceExplanation | null {
  const { node, images, needs, mode } = input;
  const who = input.who ?? 'k3s';
  const needsFrom = { sources: needs.sources.map((s) => s.label), ...(needs.noSource !== undefined ? { noSource: needs.noSource } : {}) };
  const self = images.find((i) => i.name === input.ref);
  if (!self) {
    const missing = needs.missing.find((m) => m.ref === input.ref);
    if (!missing) return null;
    const archives = input.archives.filter((a) => a.images.includes(missing.ref));
    const advice: Advice[] = [
      archives.length
        ? { text: `${archives.map((a) => a.path).join(', ')} in the images dir holds it, but ${who} has not imported it: restart ${who}, or import it with Holdfast.` }
        : { text: 'Bring it to the node from an air-gap archive that holds it, and make its pins durable.', remedy: { action: 'import', node, archive: 'ARCHIVE', pin: true } },
    ];
    return {
      node,
      ref: input.ref,
      present: false,
      image: null,
      need: plainNeed(missing),
      needsFrom,
      archives: archives.map((a) => archiveFacts(a, who)),
      lostPins: input.lost.filter((l) => l.ref === input.ref),
      heldBy: missing.heldBy,
      advice,
    };
  }
  const key = protectionKey(self);
  const byImage = refsByImage(images);
  const siblings = byImage.get(key) ?? [self];
  const p = imageProtection(siblings, mode, who).get(key)!;
  const shown = refReading(self, siblings, p);
  const names = new Set(siblings.map((r) => r.name));
  const lostPins = input.lost.filter((l) => names.has(l.ref) || (self.imageId !== null && l.imageId === self.imageId));
  const archives = input.archives.filter((a) => (a.kind === 'archive' && a.images.some((n) => names.has(n))) || siblings.some((r) => r.archive === a.path));
  const need = self.need;
  const atRisk = atRiskOf(images, needs).find((a) => a.refs.includes(self.name));
  const ordered = [self, ...siblings.filter((r) => r !== self)];
  const explained: ReferenceExplanation = {
    node,
    ref: self.name,
    present: true,
    image: {
      key,
      imageId: self.imageId,
      size: self.size,
      platforms: self.platforms,
      refs: ordered.map((r) => {
        const read = refReading(r, siblings, p);
        return { name: r.name, pin: read.pin, inherited: read.inherited, afterRestart: r.afterRestart, reason: r.reason, brief: fateBrief(r, who), archive: r.archive, ...(r.remedy ? { remedy: remedyOnNode(r.remedy, node) } : {}) };
      }),
      labels: self.labels,
      signature: self.signature ?? null,
      shown,
      protection: { now: p.now, afterRestart: p.afterRestart, losesPin: losesPin(p), reason: p.reason, brief: protectionBrief(p, siblings, mode, who) },
    },
    need: need
      ? { verdict: need.verdict, text: NEED_VERDICT_TEXT[need.verdict], atRisk: need.atRisk, needed: need.needed, neededBecause: need.neededBecause, because: need.because, workloads: need.workloads }
      : { verdict: p.now || p.afterRestart ? 'reclaimable' : 'unneeded', text: NEED_VERDICT_TEXT[p.now || p.afterRestart ? 'reclaimable' : 'unneeded'], atRisk: false, needed: false, neededBecause: null, because: 'not judged', workloads: [] },
    needsFrom,
    archives: archives.map((a) => archiveFacts(a, who)),
    lostPins,
    heldBy: [],
    advice: [],
  };
  explained.advice = adviceFor(explained, { atRiskPinnable: atRisk?.pinnable ?? false, mode, tag: imageName(siblings.map((r) => r.name), key), who });
  return explained;
}

// `reason`: as the caller worded it (shared/archivesReport archivesInWords), else the prose alone.
function archiveFacts(a: ArchiveInfo, who: string): ReferenceExplanation['archives'][number] {
  return { path: a.path, safeToRemove: a.safeToRemove, removalTone: archiveVerdict(a).tone, reason: proseText(a.reason), brief: archiveBrief(a, who), ...(a.remedy ? { remedy: a.remedy } : {}) };
}

/** What to do about a reference on the node, most urgent first (at least one step). */
function adviceFor(e: ReferenceExplanation, o: { atRiskPinnable: boolean; mode: CriPinning; tag: string; who: string }): Advice[] {
  const out: Advice[] = [];
  const img = e.image!;
  for (const l of e.lostPins.slice(0, 1)) out.push({ text: l.remedy.text, ...(l.remedy.step ? { remedy: l.remedy.step } : {}) });
  // A lost pin's repin or restore pins as well (its step is `pin`).
  const lostPinPins = e.lostPins.slice(0, 1).some((l) => l.remedy.step?.action === 'pin');
  if (o.mode === 'none') {
    out.push({ text: `This containerd has no CRI image pinning (before 1.7.3): kubelet's GC may delete the image whatever its labels say. Keep an archive that brings it in the images dir, so that the next ${o.who} start brings it back.` });
    return out;
  }
  const notDurable = img.refs.some((r) => r.pin !== 'durable' && !isImageIdRecord(r.name));
  if (e.need.atRisk) {
    if (o.atRiskPinnable) out.push({ text: `The site needs it: make its pins durable before the next ${o.who} start.`, remedy: { action: 'pin', node: e.node, needed: true } });
    else if (!out.length) out.push({ text: `Its pins are durable, but kubelet does not see them on this containerd: pin every reference of it, and keep its archive in the images dir.`, remedy: { action: 'pin', node: e.node, ref: o.tag } });
  } else if (img.protection.losesPin) {
    out.push({ text: `It loses its pin at the next ${o.who} start: if it is still wanted, make it durable.`, remedy: { action: 'pin', node: e.node, ref: o.tag } });
  }
  const k3sArchive = e.archives.find((a) => !a.safeToRemove && a.remedy);
  if (k3sArchive && notDurable && !lostPinPins && !out.some((a) => a.remedy?.action === 'pin')) {
    out.push({ text: `${k3sArchive.path} pins it again at every ${o.who} start; to remove that archive one day, make its pins durable first.`, remedy: k3sArchive.remedy! });
  }
  if (e.need.verdict === 'reclaimable' && !out.length) {
    out.push(
      img.refs.some((r) => r.pin === 'durable' && !r.inherited)
        ? { text: 'Pinned durably, and nothing at the site needs it: if it is obsolete, release its pin (then prune may remove it).', remedy: { action: 'unpin', node: e.node, ref: o.tag } }
        : { text: 'Pinned, and nothing at the site needs it: if it is obsolete, remove what pins it (the archive that brings it); prune never unpins.' },
    );
  }
  if (e.need.verdict === 'unneeded' && !out.length) {
    out.push({ text: "Nothing pins it and nothing at the site needs it: kubelet's GC may delete it, and prune may remove it.", remedy: { action: 'prune', node: e.node } });
  }
  if (!out.length) out.push({ text: e.need.needed ? 'Nothing to do: the site needs it and kubelet keeps it.' : 'Nothing to do: kubelet keeps it.' });
  return out;
}
