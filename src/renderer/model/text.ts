// Display text: the pin and fate badges' labels and descriptions, and dates as the app prints
// them (local time). Sizes, ids and durations come from shared/format, as in the CLI.
import type { PinState } from '../../shared/domain';
import type { RefFateKind } from './images';

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Each pin state's badge and its title; `who` names the node's distro ("k3s", "RKE2": shared/distro distroDisplayName). */
export const pinText = (who: string): Record<PinState, { label: string; description: string }> => ({
  durable: {
    label: 'Durable',
    description: `Pinned for the CRI without a distro label: ${who} never strips it and kubelet never deletes it.`,
  },
  k3s: {
    label: `${who} pin`,
    description: `Pinned by ${who}: the pin is removed at the next ${who} start unless the archive is re-imported.`,
  },
  none: {
    label: 'Unpinned',
    description: 'Not pinned: kubelet image garbage collection may delete it.',
  },
});

export const FATE_TEXT: Record<RefFateKind, { label: string; description: string }> = {
  kept: { label: 'Kept', description: 'Still pinned after the next k3s start.' },
  lose: {
    label: 'Will lose pin',
    description: 'Pinned now, but the next k3s start removes the pin: kubelet may then delete the image.',
  },
  gain: { label: 'Pinned at start', description: 'Not pinned now; the next k3s start imports its archive and pins it.' },
  none: { label: 'Stays unpinned', description: 'Not pinned now and not after the next k3s start.' },
  drops: {
    label: 'Own pin goes',
    description: 'This reference loses its own pin at the next k3s start; kubelet keeps the image through another reference that stays pinned.',
  },
};

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${formatDate(iso)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
