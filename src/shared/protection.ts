// Image-level protection as kubelet sees it through CRI (docs/k3s-facts.md, "How kubelet honours
// a pin"). CRI merges every reference with the same image id into one image; on containerd ≥ 1.7.10
// and 2.x it is pinned when ANY of its references carries io.cri-containerd.pinned=pinned; on
// 1.7.3–1.7.9 the reference CRI loaded first decides (so every reference must carry it); before
// 1.7.3 nothing is pinned at all. CRI also records each image under its id (`sha256:<config
// digest>`, labelled io.cri-containerd.image=managed). k3s never labels that record, so taken
// alone it always looks unpinned; what matters is the image it names: this module gives such
// records the image's fate.
import { LABEL_CRI_PINNED, PINNED } from './domain/labels';
import type { Fate, PinState } from './domain/pins';
import type { CriPinning } from './versions';
import { isImageIdRecord } from './imageReference';
import { listTrapBrief, type ListTrap } from './listTrap';
import type { Remedy } from './remedy';
import { shellLine } from './shellQuote';

/** Fields of a reference this rule reads (an ImageRef satisfies it). */
export interface ProtectionRef {
  name: string;
  imageId: string | null;
  pin: PinState;
  afterRestart: Fate;
  reason: string;
  /** What the reason asks to do, as data (FateVerdict.remedy). */
  remedy?: Remedy;
  /** Its labels, when known: a GC back-reference or expiry makes its pin worthless (gcBound). */
  labels?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// containerd's own GC (docs/k3s-facts.md, "How the pin is honoured"): since containerd 2.3
// (PR #12667) a transfer-service import labels the references it makes for an index name with
// containerd.io/gc.bref.image=<parent> and containerd.io/gc.expire=<time>, and containerd's
// metadata GC removes such a reference once its parent is gone, WHATEVER its CRI pin says. A
// pin on it protects nothing; Holdfast never writes these labels (gcLabelWriteRefusal below).

export const GC_BACKREF_PREFIX = 'containerd.io/gc.bref.';
export const GC_EXPIRE = 'containerd.io/gc.expire';

/** containerd 2.3's conditional references (gc.cond.snapshot.<sn>, gc.cond.value-usedat). */
export const GC_COND_PREFIX = 'containerd.io/gc.cond.';

/** A label containerd's own GC acts on for a reference (never written by Holdfast). */
export const isGcBindingLabel = (key: string): boolean => key.startsWith(GC_BACKREF_PREFIX) || key === GC_EXPIRE;

/**
 * A label Holdfast never writes (sets or removes) on an image, a blob or a snapshot: containerd
 * 2.2's back-references, 2.3's conditional references and the expiry (docs/k3s-facts.md, "Which
 * containerd k3s ships"). Written by Holdfast they would tie what it pins to containerd's own GC.
 * (A lease's gc.expire is containerd's ordinary lease expiry and is not an object label.)
 */
export const isGcControlLabel = (key: string): boolean => isGcBindingLabel(key) || key.startsWith(GC_COND_PREFIX);

/**
 * The one guard every label write goes through (core/containerd/client, core/usecases/pin/plan): why the
 * write is refused, or null when none of `keys` is a GC control label.
 */
export function gcLabelWriteRefusal(what: string, keys: Iterable<string>): string | null {
  const gc = [...keys].filter(isGcControlLabel);
  return gc.length ? `refusing to change ${gc.join(', ')} on ${what}: Holdfast never writes the labels containerd's own garbage collector acts on` : null;
}

/** What ties a reference to containerd's own GC: the parent it back-references, its expiry. */
export interface GcBinding {
  /** The first back-referenced parent (gc.bref.image, else any gc.bref.*), or null. */
  parent: string | null;
  expires: string | null;
}

/** The reference's GC binding, or null when none of its labels ties it to containerd's GC. */
export function gcBound(labels: Readonly<Record<string, string>> | undefined): GcBinding | null {
  if (!labels) return null;
  let parent: string | null = null;
  let bound = false;
  for (const [k, v] of Object.entries(labels)) {
    if (!isGcBindingLabel(k)) continue;
    bound = true;
    if (k.startsWith(GC_BACKREF_PREFIX) && (parent === null || k === `${GC_BACKREF_PREFIX}image`)) parent = v;
  }
  return bound ? { parent, expires: labels[GC_EXPIRE] ?? null } : null;
}

/** Why a GC-bound reference protects nothing, in full. */
export function gcBoundReason(name: string, g: GcBinding): string {
  const when = g.parent
    ? `once ${g.parent} is gone (its containerd.io/gc.bref label${g.expires ? `; expiry ${g.expires}` : ''})`
    : `after ${g.expires ?? 'its expiry'} (its containerd.io/gc.expire label)`;
  return (
    `Not protected: containerd's own garbage collector removes ${name} ${when}, whatever its pin says ` +
    `(containerd 2.3 labels the references its transfer-service import makes this way). ` +
    `Keep the image under a name without those labels: tag it (${shellLine(['ctr', '-n', 'k8s.io', 'images', 'tag', name, 'NAME'])}) and pin that name.`
  );
}

/** The same in one short clause. */
export function gcBoundBrief(g: GcBinding): string {
  return g.parent ? `containerd removes it with ${g.parent}` : `containerd removes it after ${g.expires ?? 'its expiry'}`;
}

/** A reference's own fate with containerd's GC taken into account: a GC-bound one is never kept. */
function withGcBinding<T extends ProtectionRef>(r: T): T {
  const g = gcBound(r.labels);
  return g ? { ...r, afterRestart: 'unpinned', reason: gcBoundReason(r.name, g), remedy: undefined } : r;
}


/** CRI's own record of an image, named by the image id rather than a tag or digest reference. */
export function isImageIdRef(ref: Pick<ProtectionRef, 'name' | 'imageId'>): boolean {
  return isImageIdRecord(ref.name) && (ref.imageId === null || ref.imageId === ref.name);
}

/** Short display of a reference list: "a, b and 2 more". */
function names(refs: readonly ProtectionRef[]): string {
  const shown = refs.slice(0, 2).map((r) => r.name);
  return refs.length > 2 ? `${shown.join(', ')} and ${refs.length - 2} more` : shown.join(' and ');
}

/**
 * Returns the references with the fate of CRI's image-id records made the image's own fate
 * (for the 'any' rule), or a reason that says what to do (for 'first-loaded'). Other references
 * are returned unchanged. Pure.
 */
export function applyImageProtection<T extends ProtectionRef>(refs: T[], mode: CriPinning, who = 'k3s'): T[] {
  const byImage = new Map<string, T[]>();
  for (const r of refs) {
    if (r.imageId === null) continue;
    const group = byImage.get(r.imageId);
    if (group) group.push(r);
    else byImage.set(r.imageId, [r]);
  }
  return refs.map((r) => {
    if (gcBound(r.labels)) return withGcBinding(r);
    if (!isImageIdRef(r) || r.pin !== 'none' || r.imageId === null) return r;
    const siblings = (byImage.get(r.imageId) ?? []).filter((s) => s !== r && !isImageIdRef(s) && !gcBound(s.labels));
    if (siblings.length === 0) return r;
    const keep = siblings.filter((s) => s.afterRestart === 'pinned');
    if (mode === 'first-loaded') {
      if (!keep.length) return { ...r, reason: `CRI's own record of the image of ${names(siblings)}, which is not pinned.` };
      return {
        ...r,
        reason: `CRI's own record of the image of ${names(siblings)}. This containerd (1.7.3–1.7.9) takes an image's pin from whichever reference CRI loaded first, so this unlabelled record can leave the image unpinned: pin every reference.`,
        remedy: { action: 'pin', node: 'NODE', ref: siblings[0]!.name },
      };
    }
    const pinned = keep.length > 0;
    return {
      ...r,
      afterRestart: pinned ? 'pinned' : 'unpinned',
      reason: pinned
        ? `CRI's own record of the image of ${names(siblings)}: kubelet sees the image as pinned through ${names(keep)}.`
        : `CRI's own record of the image of ${names(siblings)}, which ${siblings.some((s) => s.pin !== 'none') ? `loses its pin at the next ${who} start` : 'is not pinned'}.`,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The image-level protection model: the ONE answer to "does kubelet keep this image?" that the
// CLI (images, inspect, reports), the app (images table, fleet overview and matrix), rm-archive
// and import's verification all give. References are the detail underneath; the image (every
// reference with one image id, as CRI merges them) is what kubelet's garbage collector sees.

/** Fields of a reference the image-level rule reads (an ImageRef satisfies it). */
export interface ImageProtectionRef {
  name: string;
  /** The record's target digest: the image's key when its id is unknown. */
  digest: string;
  imageId: string | null;
  labels: Record<string, string>;
  pin: PinState;
  afterRestart: Fate;
  reason: string;
}

export interface ImageProtection {
  /** The image id, else the record's target digest (a record whose id is unknown stands alone). */
  key: string;
  imageId: string | null;
  /** Every reference of the image: tags, digest references, CRI's own sha256:<id> record. */
  refs: string[];
  /**
   * kubelet (through CRI) sees the image as pinned now, through a reference that protects it (a
   * pin on a reference containerd's own GC removes — gcBound — does not count).
   */
  now: boolean;
  /** kubelet sees it as pinned after the next k3s start. */
  afterRestart: boolean;
  /**
   * The references that decide `afterRestart`: the ones that keep it pinned, or (when it is not)
   * the ones whose missing pin leaves it unprotected.
   */
  deciding: string[];
  /** One sentence a technician understands, naming the deciding references. */
  reason: string;
}

/** What the next k3s start does to an image as kubelet sees it. */
export type ProtectionChange = 'kept' | 'lose' | 'gain' | 'none';

export function protectionChange(p: Pick<ImageProtection, 'now' | 'afterRestart'>): ProtectionChange {
  if (p.now) return p.afterRestart ? 'kept' : 'lose';
  return p.afterRestart ? 'gain' : 'none';
}

/** The key that makes references one image: CRI merges by image id. */
export const protectionKey = (r: Pick<ImageProtectionRef, 'imageId' | 'digest'>): string => r.imageId ?? r.digest;

const criLabelled = (r: Pick<ImageProtectionRef, 'labels'>) => r.labels[LABEL_CRI_PINNED] === PINNED && !gcBound(r.labels);
const keepsPin = (r: Pick<ImageProtectionRef, 'afterRestart' | 'labels'>) => r.afterRestart === 'pinned' && !gcBound(r.labels);
/** Pinned as CRI reads the labels, but by a reference containerd's own GC removes. */
const gcPinned = (r: Pick<ImageProtectionRef, 'labels'>) => r.labels[LABEL_CRI_PINNED] === PINNED && gcBound(r.labels) !== null;
const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/**
 * One verdict, every field in one order: one object shape and no spread of a base object per
 * image. This runs for each of a node's images between its answer and the first rows on screen
 * (5,000 images: ~55 → ~20 ms, median, in Node, against the spread it replaced).
 */
function verdict(base: Pick<ImageProtection, 'key' | 'imageId' | 'refs'>, now: boolean, afterRestart: boolean, deciding: string[], reason: string): ImageProtection {
  return { key: base.key, imageId: base.imageId, refs: base.refs, now, afterRestart, deciding, reason };
}

/** The verdict for one image's references under one CRI rule. Pure. */
function protectOne(key: string, refs: readonly ImageProtectionRef[], mode: CriPinning, who: string): ImageProtection {
  const base = { key, imageId: refs[0]?.imageId ?? null, refs: refs.map((r) => r.name) };
  if (mode === 'none') {
    return verdict(
      base,
      false,
      false,
      [],
      "This containerd (before 1.7.3) has no CRI image pinning: kubelet's image garbage collector may delete the image whatever its labels say.",
    );
  }
  if (mode === 'first-loaded') {
    // 1.7.3–1.7.9: the reference CRI loaded first decides, and Holdfast cannot know which one that
    // was; only an image whose every reference carries the pin is certain to be kept.
    const now = refs.every(criLabelled);
    const missing = refs.filter((r) => !keepsPin(r));
    const afterRestart = missing.length === 0;
    return verdict(
      base,
      now,
      afterRestart,
      afterRestart ? base.refs : missing.map((r) => r.name),
      afterRestart
        ? `Every reference (${names(refs)}) keeps io.cri-containerd.pinned at the next ${who} start, which this containerd (1.7.3–1.7.9) needs: it takes an image's pin from whichever reference CRI loaded first.`
        : `This containerd (1.7.3–1.7.9) takes an image's pin from whichever reference CRI loaded first, which Holdfast cannot know, and ${names(missing)} ${plural(missing.length, 'is', 'are')} not pinned after the next ${who} start: kubelet may treat the image as unpinned. Make every reference durable.`,
    );
  }
  // ≥ 1.7.10, 2.x (and an unreadable version): pinned when ANY reference carries the label.
  // One pass, and the lists it names only when there are some.
  let now = false;
  let keepers: ImageProtectionRef[] | null = null;
  for (const r of refs) {
    if (!now && criLabelled(r)) now = true;
    if (keepsPin(r)) (keepers ??= []).push(r);
  }
  // The sentence of the reference that decides, quoted: a tag or digest reference before CRI's record.
  const quote = (list: ImageProtectionRef[]) => {
    const r = list.find((x) => !isImageIdRef(x)) ?? list[0];
    return r?.reason ? ` ${r.name}: ${r.reason}` : '';
  };
  if (keepers) {
    const dropping = refs.length === keepers.length ? [] : refs.filter((r) => !keepsPin(r) && r.pin !== 'none' && !isImageIdRef(r) && !gcBound(r.labels));
    return verdict(
      base,
      now,
      true,
      keepers.length === refs.length ? base.refs : keepers.map((r) => r.name),
      `kubelet keeps the image after the next ${who} start through ${names(keepers)}.${quote(keepers)}` +
        (dropping.length
          ? ` ${names(dropping)} ${plural(dropping.length, 'loses its', 'lose their')} own pin then, which does not matter: CRI pins an image if any of its references is pinned.`
          : ''),
    );
  }
  const named = refs.filter((r) => !isImageIdRef(r));
  const bound = refs.filter(gcPinned);
  if (!now && bound.length) {
    const g = gcBound(bound[0]!.labels)!;
    return verdict(
      base,
      false,
      false,
      bound.map((r) => r.name),
      `Its only pin is on ${names(bound)}, which containerd's own garbage collector removes whatever the pin says: kubelet may delete the image when no container uses it. ${gcBoundReason(bound[0]!.name, g)}`,
    );
  }
  const losing = (named.length ? named : refs).filter((r) => criLabelled(r) || r.pin !== 'none');
  return verdict(
    base,
    now,
    false,
    losing.map((r) => r.name),
    now
      ? `No reference keeps its pin at the next ${who} start, so kubelet may then delete the image.${quote(losing)}`
      : `No reference of the image is pinned: kubelet's image garbage collector may delete it when no container uses it.${losing.length ? quote(losing) : ''}`,
  );
}

/**
 * Every image among `refs` (grouped by image id, as CRI merges them) with whether kubelet keeps
 * it now and after the next k3s start, by the node's containerd rule (shared/versions
 * criPinning; 'unknown' is read as 'any'). In the order the images first appear. Pure.
 */
export function imageProtection<T extends ImageProtectionRef>(refs: readonly T[], mode: CriPinning, who = 'k3s'): Map<string, ImageProtection> {
  return protectionOfImages(refsByImage(refs), mode, who);
}

/** `refs` grouped into images by protectionKey (as CRI merges them), in the order the images first appear. Pure. */
export function refsByImage<T extends Pick<ImageProtectionRef, 'imageId' | 'digest'>>(refs: readonly T[]): Map<string, T[]> {
  const byKey = new Map<string, T[]>();
  for (const r of refs) {
    const k = protectionKey(r);
    const list = byKey.get(k);
    if (list) list.push(r);
    else byKey.set(k, [r]);
  }
  return byKey;
}

/** imageProtection of references already grouped by refsByImage (a caller that needs the groups too groups once). */
export function protectionOfImages(byKey: ReadonlyMap<string, readonly ImageProtectionRef[]>, mode: CriPinning, who = 'k3s'): Map<string, ImageProtection> {
  const out = new Map<string, ImageProtection>();
  for (const [k, list] of byKey) out.set(k, protectOne(k, list, mode, who));
  return out;
}

/** The images kubelet sees pinned now that lose that at the next k3s start (the at-risk case). */
export function losingImages(refs: readonly ImageProtectionRef[], mode: CriPinning, who = 'k3s'): ImageProtection[] {
  return losingOf(imageProtection(refs, mode, who));
}

/** Loses its pin: kubelet sees the image pinned now and unpinned after the next k3s start. */
export const losesPin = (p: Pick<ImageProtection, 'now' | 'afterRestart'>): boolean => protectionChange(p) === 'lose';

/** The images of a verdict map (imageProtection) that lose their pin at the next k3s start. */
export const losingOf = (protection: ReadonlyMap<string, ImageProtection>): ImageProtection[] => [...protection.values()].filter(losesPin);

/**
 * The protection an image keeps once nothing in the images dir re-pins it (an archive removed,
 * k3s restarted): only durable pins count, since k3s strips every pin it manages and never
 * touches a durable one. What rm-archive and import decide removal with. Pure.
 */
export function durableProtection(refs: readonly ImageProtectionRef[], mode: CriPinning, who = 'k3s'): ImageProtection {
  const asDurable = refs.map((r) => {
    const g = gcBound(r.labels);
    if (g) return { ...r, afterRestart: 'unpinned' as Fate, reason: gcBoundReason(r.name, g) };
    return {
      ...r,
      afterRestart: (r.pin === 'durable' ? 'pinned' : 'unpinned') as Fate,
      reason: r.pin === 'distro' ? `pinned by ${who} only, which strips the pin at its next start` : r.pin === 'none' ? 'not pinned' : 'durable pin',
    };
  });
  const k = refs[0] ? protectionKey(refs[0]) : '';
  return protectOne(k, asDurable, mode, who);
}

/**
 * A reference's own fate read against its image's, for tables that list references:
 * - loses-pin:    pinned now, and the IMAGE loses its protection at the next k3s start;
 * - own-pin-goes: pinned now, loses its own label, but the image stays protected through others;
 * - pinned / unpinned: the reference's own fate otherwise.
 */
export type RefOutcome = 'pinned' | 'unpinned' | 'loses-pin' | 'own-pin-goes';

export function refOutcome(r: ImageProtectionRef, image: Pick<ImageProtection, 'now' | 'afterRestart'>): RefOutcome {
  if (r.afterRestart === 'pinned' && !gcBound(r.labels)) return 'pinned';
  if (!criLabelled(r) && !gcPinned(r) && r.pin === 'none') return 'unpinned';
  if (losesPin(image)) return 'loses-pin';
  return image.afterRestart ? 'own-pin-goes' : 'unpinned';
}

// ---------------------------------------------------------------------------------------------
// How a list of references reads to a person, and the short clauses beside the long reasons.

const PIN_STRENGTH: Record<PinState, number> = { none: 0, distro: 1, durable: 2 };

/** What a list of references shows for one of them (refReading). */
export interface RefReading {
  pin: ImageProtectionRef['pin'];
  outcome: RefOutcome;
  /** The row is CRI's own sha256:<id> record showing its image's pin and fate, not labels of its own. */
  inherited: boolean;
}

/**
 * What a list of references (the CLI's images table) shows for `r`, one of `imageRefs` (every
 * reference of its image). A reference shows its own pin and outcome. CRI's own `sha256:<id>`
 * record of an image that has other references carries no labels of its own (k3s never labels
 * it) and kubelet sees only the image, so it shows the image's: the strongest pin among the other
 * references and the image's fate — marked `inherited`, never "none" beside "pinned". A record
 * someone labelled (holdfast pin labels it too) shows its own. Pure.
 */
export function refReading(r: ImageProtectionRef, imageRefs: readonly ImageProtectionRef[], image: Pick<ImageProtection, 'now' | 'afterRestart'>): RefReading {
  const shown = pinReading(r, imageRefs);
  if (!shown.inherited) return { pin: r.pin, outcome: refOutcome(r, image), inherited: false };
  return { pin: shown.pin, outcome: losesPin(image) ? 'loses-pin' : image.afterRestart ? 'pinned' : 'unpinned', inherited: true };
}

/** The fields the pin reading looks at. */
type PinReadingRef = Pick<ImageProtectionRef, 'name' | 'imageId' | 'labels' | 'pin'>;

/**
 * The pin a reference counts and shows as, in every view (the images table on a terminal and
 * through a pipe, inspect's columns, the HTML and CSV reports, the app): its own, except CRI's
 * unlabelled `sha256:<id>` record of an image with other references, which reads as its image's
 * (the strongest pin among them; kubelet sees only the image). Pure.
 */
export function pinReading(r: PinReadingRef, imageRefs: readonly PinReadingRef[]): { pin: ImageProtectionRef['pin']; inherited: boolean } {
  const others = isImageIdRef(r) && r.pin === 'none' && !criLabelled(r) ? imageRefs.filter((s) => s !== r && !isImageIdRef(s)) : [];
  if (others.length === 0) return { pin: r.pin, inherited: false };
  // A pin containerd's own GC overrides (gcBound) is no pin of the image's.
  const pin = others
    .filter((s) => !gcBound(s.labels))
    .reduce<ImageProtectionRef['pin']>((best, s) => (PIN_STRENGTH[s.pin] > PIN_STRENGTH[best] ? s.pin : best), 'none');
  return { pin, inherited: true };
}

/**
 * A node's references counted by pin, each as pinReading reads it: the one count of "N durable,
 * N k3s-pinned, N unpinned" every view prints. Pure.
 */
export function pinCounts(refs: readonly (PinReadingRef & Pick<ImageProtectionRef, 'digest'>)[]): Record<PinState, number> {
  const counts: Record<PinState, number> = { durable: 0, distro: 0, none: 0 };
  const byImage = refsByImage(refs);
  for (const r of refs) counts[pinReading(r, byImage.get(protectionKey(r))!).pin]++;
  return counts;
}

/** Fields of a reference its fate's short clause reads (an ImageRef satisfies it). */
export type FateBriefRef = Pick<ImageProtectionRef, 'pin' | 'afterRestart'> & { archive: string | null; labels?: Record<string, string>; listTrap?: ListTrap };

/**
 * A reference's fate at the next k3s start in one short clause, beside the sentence shared/fate
 * writes (`reason`): "durable pin", "k3s strips its pin; no archive brings it back". Pure.
 */
export function fateBrief(r: FateBriefRef, who = 'k3s'): string {
  const g = gcBound(r.labels);
  if (g) return gcBoundBrief(g);
  if (r.listTrap && r.afterRestart === 'pinned') return `${who} takes it over: ${listTrapBrief(r.listTrap)}`;
  if (r.afterRestart === 'pinned') return r.pin === 'durable' ? 'durable pin' : r.archive ? `${r.archive} pins it again` : 'stays pinned';
  if (r.pin === 'distro') return r.archive ? `${who} strips its pin; ${r.archive} will not pin it again` : `${who} strips its pin; no archive brings it back`;
  return r.pin === 'durable' ? `its pin does not last the next ${who} start` : 'not pinned';
}

/**
 * An image's protection in one short clause, beside its sentence (`reason`): why kubelet keeps
 * it or not after the next k3s start, by the deciding reference's fate and the node's
 * containerd rule. Pure.
 */
export function protectionBrief(p: Pick<ImageProtection, 'afterRestart' | 'deciding'>, refs: readonly (ImageProtectionRef & { archive: string | null })[], mode: CriPinning, who = 'k3s'): string {
  if (mode === 'none') return 'no CRI image pinning on this containerd (before 1.7.3)';
  if (mode === 'first-loaded' && !p.afterRestart) return 'not every reference keeps its pin, which containerd 1.7.3–1.7.9 needs';
  const deciding = refs.filter((r) => p.deciding.includes(r.name));
  const r = deciding.find((x) => !isImageIdRef(x)) ?? deciding[0];
  if (!r) return p.afterRestart ? 'kept' : 'not pinned';
  return fateBrief(r, who);
}
