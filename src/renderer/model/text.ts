// Display text: the fate badges' labels and descriptions (the pin badges' are shared/wording's),
// and dates as the app prints them (local time). Sizes, ids and durations come from shared/format,
// as in the CLI.
import type { RefFateKind } from './images';

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/**
 * What the next start does to a reference's pin, as its badge and title say it, on a node whose
 * distro is `who` (shared/distro distroDisplayName; required, as for the pin badges: shared/wording
 * pinStateWords).
 */
export const fateText = (who: string): Record<RefFateKind, { label: string; description: string }> => ({
  kept: { label: 'Kept', description: `Still pinned after the next ${who} start.` },
  lose: {
    label: 'Will lose pin',
    description: `Pinned now, but the next ${who} start removes the pin: kubelet may then delete the image.`,
  },
  gain: { label: 'Pinned at start', description: `Not pinned now; the next ${who} start imports its archive and pins it.` },
  none: { label: 'Stays unpinned', description: `Not pinned now and not after the next ${who} start.` },
  drops: {
    label: 'Own pin goes',
    description: `This reference loses its own pin at the next ${who} start; kubelet keeps the image through another reference that stays pinned.`,
  },
});

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${formatDate(iso)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
