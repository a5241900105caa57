// Pins lost behind Holdfast's back: the audit log says which pins Holdfast made durable on a node
// (and released); the node's references say what is left of them. Pure, so the CLI, the reports,
// the server, Electron main and the renderer tell the same story. What removes a durable pin
// (docs/k3s-facts.md, "What removes a durable pin behind Holdfast's back"): `k3s ctr images import`
// on containerd 2.x without --local (the transfer service replaces the whole label map), `ctr
// images import --label`, `ctr images prune --all` / nerdctl prune (ignore pins), crictl rmi / CRI
// RemoveImage, and an archive (or a .txt pre-pull list) for the same image in the images dir.
import { distroDisplayName, distroOfPinLabels } from './distro';
import { shortDigest } from './format';
import { pinState } from './pinState';
import type { ArchiveInfo } from './domain/archives';
import type { AuditEntry } from './domain/audit';
import type { ImageRef } from './domain/images';
import { LABEL_CRI_PINNED, PINNED } from './domain/labels';
import type { LostPin, LostPinKind, LostPinRemedy } from './domain/lostPins';
import type { NodeInfo } from './domain/nodes';
import { criPinning } from './versions';
import { inParens, proseText, type Remedy, type RemedyWording } from './remedy';
import { shellLine } from './shellQuote';

/** A durable pin Holdfast made and has not released: the latest audit 'pin' for the reference. */
export interface PinRecord {
  ref: string;
  imageId: string | null;
  pinnedAt: string;
  pinnedBy: string;
}

/** What a reference on the node looks like now (an ImageRef, or the core's BaseImageRef). */
export type CurrentRef = Pick<ImageRef, 'name' | 'imageId' | 'labels' | 'pin'> & Partial<Pick<ImageRef, 'createdAt'>>;

/** A file in the images dir as far as bringing an image back is concerned (an ArchiveInfo). */
export type ImagesDirFile = Pick<ArchiveInfo, 'path' | 'kind' | 'images'> & Partial<Pick<ArchiveInfo, 'cachedByK3s'>>;

const isDurableAfter = (labels: Record<string, string>) => pinState(labels) === 'durable';

/**
 * Folds one audit entry into the node's active durable pins (ref → record). A 'pin' whose
 * change leaves the reference durable records it (a later pin replaces the time and user); any
 * 'unpin' change releases it: Holdfast itself took the pin away, which is not a loss.
 */
export function applyAuditEntry(active: Map<string, PinRecord>, e: AuditEntry): void {
  if (!e.changes) return;
  if (e.action === 'pin') {
    for (const c of e.changes) {
      if (isDurableAfter(c.after)) active.set(c.ref, { ref: c.ref, imageId: c.imageId, pinnedAt: e.time, pinnedBy: e.user });
    }
  } else if (e.action === 'unpin') {
    for (const c of e.changes) active.delete(c.ref);
  }
}

/**
 * The durable pins Holdfast holds on `node` according to its audit entries. Entries may come in
 * any order (AuditLog.list gives newest first): they are replayed by time, oldest first.
 */
export function activeDurablePins(entries: readonly AuditEntry[], node: string): PinRecord[] {
  const ordered = entries
    .map((e, i) => ({ e, i, t: Date.parse(e.time) }))
    .filter((x) => x.e.node === node && (x.e.action === 'pin' || x.e.action === 'unpin'))
    // Equal or unreadable times: the log is append-only, so keep the order given.
    .sort((a, b) => (Number.isNaN(a.t) || Number.isNaN(b.t) || a.t === b.t ? a.i - b.i : a.t - b.t));
  const active = new Map<string, PinRecord>();
  for (const { e } of ordered) applyAuditEntry(active, e);
  return [...active.values()];
}

export interface LostPinInput {
  node: string;
  /** The node's active durable pins (activeDurablePins, or the core's incremental reader). */
  pins: readonly PinRecord[];
  /** Every reference on the node now. */
  refs: readonly CurrentRef[];
  /** The files in the node's images dir (archives and pre-pull lists), for the remedy. */
  imagesDir?: readonly ImagesDirFile[];
  /** What the node runs: on containerd without CRI pinning kubelet's GC is a likely cause too. */
  info?: (Pick<NodeInfo, 'containerdVersion'> & Partial<Pick<NodeInfo, 'distro'>>) | null;
}

const code = (s: string) => `\`${s}\``;
const shortId = (id: string | null) => shortDigest(id, 'unknown');
const hasHoldfastLabels = (labels: Record<string, string>) => Object.keys(labels).some((k) => k.startsWith('io.holdfast.'));

/**
 * Every pin Holdfast made durable on the node that is gone now, one entry per reference,
 * sorted by reference. A reference still durably pinned is not listed.
 */
export function findLostPins(input: LostPinInput): LostPin[] {
  const { node, refs } = input;
  const files = input.imagesDir ?? [];
  const byName = new Map(refs.map((r) => [r.name, r]));
  const byImage = new Map<string, CurrentRef[]>();
  for (const r of refs) if (r.imageId) byImage.set(r.imageId, [...(byImage.get(r.imageId) ?? []), r]);
  // Every name an image was pinned under (a tag, its digest reference, CRI's sha256:<id>): an
  // archive that brings any of them brings the image.
  const pinnedNames = new Map<string, Set<string>>();
  for (const p of input.pins) if (p.imageId) pinnedNames.set(p.imageId, (pinnedNames.get(p.imageId) ?? new Set()).add(p.ref));

  const out: LostPin[] = [];
  for (const p of input.pins) {
    const now = byName.get(p.ref);
    const sameName = now && (p.imageId === null || now.imageId === null || now.imageId === p.imageId) ? now : undefined;
    if (sameName?.pin === 'durable') continue;
    const siblings = (p.imageId ? (byImage.get(p.imageId) ?? []) : []).filter((r) => r.name !== p.ref);
    const kind: LostPinKind = sameName ? (sameName.pin === 'distro' ? 'k3s-managed-again' : 'label-removed') : siblings.length ? 'ref-deleted' : 'image-deleted';
    const names = new Set([p.ref, ...(p.imageId ? [...(pinnedNames.get(p.imageId) ?? [])] : []), ...siblings.map((s) => s.name)]);
    const bringing = files.filter((f) => f.kind !== 'ignored' && f.images.some((n) => names.has(n)));
    // CRI pins an image if ANY reference carries the label (≥ 1.7.10; shared/protection); a
    // k3s-pinned one loses it at the next start. On 1.7.3–1.7.9 the reference that lost its pin
    // may be the one CRI loaded first, and before 1.7.3 nothing pins: no reference vouches then.
    const anyCounts = !['none', 'first-loaded'].includes(criPinning(input.info?.containerdVersion));
    const via = !anyCounts
      ? undefined
      : (siblings.find((s) => s.pin === 'durable') ?? (kind === 'k3s-managed-again' ? undefined : siblings.find((s) => s.labels[LABEL_CRI_PINNED] === PINNED)));
    const ctx: Ctx = { node, p, now, sameName, siblings, via: via?.name ?? null, bringing, info: input.info ?? null };
    out.push({
      node,
      kind,
      ref: p.ref,
      imageId: p.imageId,
      pinnedAt: p.pinnedAt,
      pinnedBy: p.pinnedBy,
      summary: summaryOf(kind, ctx),
      causes: causesOf(kind, ctx),
      remedy: remedyOf(kind, ctx),
      stillPinnedVia: ctx.via,
    });
  }
  return out.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

interface Ctx {
  node: string;
  p: PinRecord;
  /** What the name points to now (maybe another image). */
  now: CurrentRef | undefined;
  /** The reference, when it still names the pinned image. */
  sameName: CurrentRef | undefined;
  /** Other references of the pinned image still on the node. */
  siblings: CurrentRef[];
  via: string | null;
  bringing: ImagesDirFile[];
  info: (Pick<NodeInfo, 'containerdVersion'> & Partial<Pick<NodeInfo, 'distro'>>) | null;
}

/** The distro whose pin label the reference carries again, as the text names it. */
const managedBy = (c: Ctx): string => distroDisplayName(distroOfPinLabels(c.sameName?.labels ?? {}));

function summaryOf(kind: LostPinKind, c: Ctx): string {
  const { ref } = c.p;
  const protectedNow = c.via ? `the image is still pinned through ${c.via}` : `nothing pins the image now: kubelet's image GC may delete it`;
  switch (kind) {
    case 'label-removed':
      return `The durable pin on ${ref} is gone: its ${LABEL_CRI_PINNED} label was removed; ${protectedNow}.`;
    case 'k3s-managed-again': {
      const label = managedBy(c);
      const archive = c.bringing.find((f) => f.kind === 'archive');
      return (
        `${ref} is ${label}-managed again: it carries the ${label} pin label, so the next ${label} start strips its pin` +
        (archive ? ` and pins it again only while ${archive.path} stays in the images dir.` : ' and nothing in the images dir pins it again.')
      );
    }
    case 'ref-deleted':
      return `The reference ${ref}, durably pinned by Holdfast, is gone; the image is still on the node as ${c.siblings.map((s) => s.name).join(', ')}${c.via ? ` and still pinned through ${c.via}` : ', unpinned'}.`;
    case 'image-deleted':
      return `The image ${ref} named (id ${shortId(c.p.imageId)}), durably pinned by Holdfast, is gone from the node${c.now ? `; ${ref} now names another image (id ${shortId(c.now.imageId)})` : ''}.`;
  }
}

function causesOf(kind: LostPinKind, c: Ctx): string[] {
  const { ref } = c.p;
  const out: string[] = [];
  switch (kind) {
    case 'label-removed': {
      const labels = c.sameName?.labels ?? {};
      const recreated = c.sameName?.createdAt && Date.parse(c.sameName.createdAt) > Date.parse(c.p.pinnedAt);
      if (recreated) out.push(`The reference was deleted and created again after Holdfast pinned it (created ${c.sameName!.createdAt}), e.g. ${code('ctr images rm')} followed by an import.`);
      if (hasHoldfastLabels(labels)) {
        out.push(`Someone removed just that label (${code(shellLine(['ctr', '-n', 'k8s.io', 'images', 'label', ref, `${LABEL_CRI_PINNED}=`]))} or a script doing the same): Holdfast's own io.holdfast.* labels are still there.`);
        out.push(`${code('ctr images import --label …')} re-imported the image with labels of its own.`);
      } else {
        out.push(
          `${code('k3s ctr images import')} on containerd 2.x without ${code('--local')} re-imported the image: the transfer service replaces an existing image's whole label map (Holdfast's io.holdfast.* labels went with the pin).`,
        );
        out.push(`${code('ctr images import --label …')} re-imported the image with only the labels it was given.`);
        out.push(`Someone removed the label by hand (${code(shellLine(['ctr', '-n', 'k8s.io', 'images', 'label', ref, `${LABEL_CRI_PINNED}=`]))}).`);
      }
      return out;
    }
    case 'k3s-managed-again': {
      const label = managedBy(c);
      for (const f of c.bringing) {
        if (f.kind === 'archive') out.push(`${f.path} in the images dir brings it: ${label} imported it again (at its last start, or its watcher when the file appeared) and put its pin label back.`);
        else out.push(`The pre-pull list ${f.path} names it: ${label} pins the images a .txt list names at every start.`);
      }
      if (!out.length) out.push(`An archive that brings it was put into the images dir and ${label} imported it; that file has gone since.`);
      return out;
    }
    case 'ref-deleted':
      if (c.now) out.push(`${ref} was re-tagged: the name now points to another image (id ${shortId(c.now.imageId)}).`);
      out.push(`The reference was deleted (${code(shellLine(['ctr', '-n', 'k8s.io', 'images', 'rm', ref]))}, ${code('nerdctl rmi')} or ${code('crictl rmi')}): deleting a reference ignores pins.`);
      return out;
    case 'image-deleted':
      if (c.now) out.push(`An image imported under the same name replaced ${ref}, and nothing kept the old image.`);
      if (c.info && criPinning(c.info.containerdVersion) === 'none') {
        out.push(`kubelet's image GC deleted it: containerd ${c.info.containerdVersion} has no CRI image pinning, so the pin never protected it.`);
      }
      out.push(`${code('ctr images prune --all')} or ${code('nerdctl image prune --all')} deleted it: they ignore pins and delete every image no container uses.`);
      out.push(`${code('crictl rmi')} (by name or id), ${code('crictl rmi --all')} or another CRI RemoveImage call deleted it: only ${code('crictl rmi --prune')} and kubelet's GC skip pinned images.`);
      out.push(`${code('ctr images rm')} deleted every reference of it.`);
      return out;
  }
}

function restoreFrom(c: Ctx): LostPinRemedy | null {
  const archive = c.bringing.find((f) => f.kind === 'archive');
  if (!archive) return null;
  const who = distroDisplayName(c.info?.distro ?? 'unknown');
  const how =
    archive.cachedByK3s === true
      ? `${who} skips it at start while .cache.json lists it unchanged, so move the file out of the images dir and back in (the watcher imports a file renamed into place)`
      : archive.cachedByK3s === false
        ? `restart ${who} to import it again (or move the file out of the images dir and back in: the watcher imports a file renamed into place)`
        : `restart ${who} to import it again, or move the file out of the images dir and back in (the watcher imports a file renamed into place; needed when .cache.json lists it unchanged)`;
  return {
    kind: 'restore-from-archive',
    text: `${archive.path} in the images dir brings it back: ${how}, then make its pins durable again.`,
    step: { action: 'pin', node: c.node, archive: archive.path },
    archive: archive.path,
  };
}

/** Import the image's archive again (FILE: the reader's), with durable pins. */
const reimport = (node: string): Remedy => ({ action: 'import', node, archive: 'FILE', pin: true });

function remedyOf(kind: LostPinKind, c: Ctx): LostPinRemedy {
  const { ref } = c.p;
  const repin = (target: string, text: LostPinRemedy['text'], archive?: string): LostPinRemedy => ({
    kind: 'repin',
    text,
    step: { action: 'pin', node: c.node, ref: target },
    target: { refs: [target] },
    ...(archive ? { archive } : {}),
  });
  switch (kind) {
    case 'label-removed':
      return repin(ref, `Make it durable again (every reference of the image is pinned with it).`);
    case 'k3s-managed-again': {
      const archive = c.bringing.find((f) => f.kind === 'archive');
      return archive
        ? repin(
            ref,
            { text: `Make it durable again, then remove ${archive.path} safely`, remedy: { action: 'remove-archive', node: c.node, archive: archive.path }, end: `, or the next ${managedBy(c)} start hands the pin back to ${managedBy(c)}.` },
            archive.path,
          )
        : repin(ref, `Make it durable again before ${managedBy(c)} restarts.`);
    }
    case 'ref-deleted': {
      const other = c.siblings[0]!.name;
      const retag = `bring the name back with ${code(shellLine(['ctr', '-n', 'k8s.io', 'images', 'tag', other, ref]))} (then pin it) or by re-importing its archive`;
      if (!c.via) return repin(other, `The image is still there as ${other}: make it durable again now, then ${retag}.`);
      return restoreFrom(c) ?? { kind: 'reimport', text: `The image is still pinned through ${c.via}; ${retag}.`, step: reimport(c.node) };
    }
    case 'image-deleted':
      return (
        restoreFrom(c) ?? {
          kind: 'reimport',
          text: `No file in the images dir brings it: import it again from its archive, with durable pins.`,
          step: reimport(c.node),
        }
      );
  }
}

/**
 * A lost pin as a reader gives it: its remedy's prose and step worded by `word` (the CLI: the
 * command line, cli/remedyText), the step as `command`; without `word`, the prose alone.
 */
export function lostPinInWords(l: LostPin, word?: RemedyWording): LostPin {
  const { kind, text, step, command, ...rest } = l.remedy;
  const said = step && word ? word(step) : command;
  return { ...l, remedy: { kind, text: proseText(text, word && inParens(word)), ...(said !== undefined ? { command: said } : {}), ...rest } };
}

/** "made durable by tech@laptop at 2026-…": where a pin came from, for one-line outputs. */
export function pinnedByText(l: Pick<LostPin, 'pinnedAt' | 'pinnedBy'>): string {
  return `made durable by ${l.pinnedBy} at ${l.pinnedAt}`;
}

/** A short label per kind for tables, badges and CSV (k3s's wording: lostPinKindText names the node's distro). */
export const LOST_PIN_KIND_TEXT: Record<LostPinKind, string> = {
  'label-removed': 'pin label removed',
  'ref-deleted': 'reference deleted',
  'image-deleted': 'image deleted',
  'k3s-managed-again': 'k3s-managed again',
};

/**
 * A kind's short label naming the node's distro where it is known (`who`: "k3s", "RKE2", shared/distro
 * distroDisplayName): "RKE2-managed again". The kind keeps its data name, k3s-managed-again.
 */
export const lostPinKindText = (kind: LostPinKind, who = 'k3s'): string => (kind === 'k3s-managed-again' ? `${who}-managed again` : LOST_PIN_KIND_TEXT[kind]);
