// Pure view-model helpers for the images table: grouping by image id, search, filter, sort
// and formatting. No React, no DOM — unit-tested in test/unit/renderer.
import type { ImageRef, PinState } from '../shared/domain';

export interface RefView {
  name: string;
  kind: 'tag' | 'digest';
  pin: PinState;
  digest: string;
}

export interface ImageGroup {
  /** imageId when known, else the record's target digest (so it still gets its own row). */
  key: string;
  imageId: string | null;
  refs: RefView[];
  /** The name used for sorting and as the row's title: first tag, else first digest ref. */
  primaryName: string;
  /** Effective pin: CRI treats the image as pinned if ANY reference is (see k3s-image-pinning.md). */
  pin: PinState;
  /** True when the references disagree about the pin state. */
  mixedPins: boolean;
  size: number;
  platforms: string[];
  createdAt: string | null;
  digests: string[];
  labels: Record<string, string>;
}

const PIN_RANK: Record<PinState, number> = { durable: 2, k3s: 1, none: 0 };

export function refKind(name: string): 'tag' | 'digest' {
  return /@sha256:[0-9a-f]+$/i.test(name) ? 'digest' : 'tag';
}

export function groupImages(images: readonly ImageRef[]): ImageGroup[] {
  const byKey = new Map<string, ImageRef[]>();
  for (const img of images) {
    const key = img.imageId ?? img.digest;
    const list = byKey.get(key);
    if (list) list.push(img);
    else byKey.set(key, [img]);
  }
  const groups: ImageGroup[] = [];
  for (const [key, list] of byKey) {
    const refs: RefView[] = list
      .map((i) => ({ name: i.name, kind: refKind(i.name), pin: i.pin, digest: i.digest }))
      .sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'tag' ? -1 : 1));
    const pins = new Set(list.map((i) => i.pin));
    let pin: PinState = 'none';
    for (const p of pins) if (PIN_RANK[p] > PIN_RANK[pin]) pin = p;
    const created = list
      .map((i) => i.createdAt)
      .filter((c): c is string => c !== null)
      .sort();
    const labels: Record<string, string> = {};
    for (const i of list) Object.assign(labels, i.labels);
    groups.push({
      key,
      imageId: list[0]?.imageId ?? null,
      refs,
      primaryName: refs[0]?.name ?? key,
      pin,
      mixedPins: pins.size > 1,
      size: Math.max(0, ...list.map((i) => i.size)),
      platforms: sortPlatforms([...new Set(list.flatMap((i) => i.platforms))]),
      createdAt: created[0] ?? null,
      digests: [...new Set(list.map((i) => i.digest))],
      labels,
    });
  }
  return groups;
}

const COMMON_PLATFORMS = ['linux/amd64', 'linux/arm64'];

/** The platforms field nodes run most (amd64, arm64) first, then the rest alphabetically. */
export function sortPlatforms(platforms: string[]): string[] {
  const rank = (p: string) => {
    const i = COMMON_PLATFORMS.indexOf(p);
    return i < 0 ? COMMON_PLATFORMS.length : i;
  };
  return [...platforms].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

export type PinFilter = 'all' | PinState;

export function countByPin(groups: readonly ImageGroup[]): Record<PinFilter, number> {
  const counts: Record<PinFilter, number> = { all: groups.length, durable: 0, k3s: 0, none: 0 };
  for (const g of groups) counts[g.pin] += 1;
  return counts;
}

/** Case-insensitive match on any reference name, digest, image id, label key or value. */
export function matchesQuery(group: ImageGroup, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const hay = [
    ...group.refs.map((r) => r.name),
    ...group.digests,
    group.imageId ?? '',
    ...Object.entries(group.labels).flatMap(([k, v]) => [k, v, `${k}=${v}`]),
  ];
  return hay.some((h) => h.toLowerCase().includes(q));
}

export function filterGroups(groups: readonly ImageGroup[], query: string, pin: PinFilter): ImageGroup[] {
  return groups.filter((g) => (pin === 'all' || g.pin === pin) && matchesQuery(g, query));
}

export type SortKey = 'name' | 'size' | 'created';
export type SortDir = 'asc' | 'desc';

export function sortGroups(groups: readonly ImageGroup[], key: SortKey, dir: SortDir): ImageGroup[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...groups].sort((a, b) => {
    const byName = a.primaryName.localeCompare(b.primaryName);
    if (key === 'name') return byName * sign;
    if (key === 'size') return (a.size - b.size) * sign || byName;
    // Unknown creation dates always sort last, whatever the direction.
    if (a.createdAt === b.createdAt) return byName;
    if (a.createdAt === null) return 1;
    if (b.createdAt === null) return -1;
    return (a.createdAt < b.createdAt ? -1 : 1) * sign;
  });
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function humanSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u += 1;
  }
  if (u === 0) return `${v} B`;
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${UNITS[u]}`;
}

/** "sha256:0123456789abcdef…" → "0123456789ab" (the 12 hex digits docker and crictl print). */
export function shortId(id: string | null): string {
  if (!id) return '—';
  const hex = id.includes(':') ? id.slice(id.indexOf(':') + 1) : id;
  return hex.slice(0, 12);
}

/** Shorten the digest part of a digest reference for display; the full value goes in a title. */
export function displayRef(name: string): string {
  const at = name.lastIndexOf('@sha256:');
  if (at < 0) return name;
  return `${name.slice(0, at)}@sha256:${name.slice(at + 8, at + 8 + 12)}…`;
}

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export const PIN_TEXT: Record<PinState, { label: string; description: string }> = {
  durable: {
    label: 'Durable',
    description: 'Pinned for the CRI without a distro label: k3s never strips it and kubelet never deletes it.',
  },
  k3s: {
    label: 'k3s pin',
    description: 'Pinned by k3s: the pin is removed at the next k3s start unless the archive is re-imported.',
  },
  none: {
    label: 'Unpinned',
    description: 'Not pinned: kubelet image garbage collection may delete it.',
  },
};
