// The fate of every image reference at the next k3s (or RKE2) start, by the rules of the
// facts sheet (shared/k3s-image-pinning.md):
//   1. k3s strips its own pin label AND the CRI pin from every image carrying its label;
//   2. it re-imports every supported archive still in the images dir (unless .cache.json
//      says the archive is unchanged) and pins what it imported again.
// Pure: the same inputs give the same prediction, so it is unit-tested exhaustively and
// checked against the lab's emulated restart.
import {
  LABEL_CRI_PINNED,
  LABEL_K3S_PINNED,
  LABEL_RKE2_PINNED,
  PINNED,
  type Distro,
  type Fate,
} from '../../shared/domain';
import { cacheFixStatus, type FixStatus } from './k3sVersions';

export interface FateRef {
  name: string;
  digest: string;
  imageId: string | null;
  labels: Record<string, string>;
}

export interface FateArchive {
  /** Relative to the images dir. */
  path: string;
  /** References the archive brings; null when its index could not be read. */
  images: { name: string; imageId: string | null }[] | null;
  /** Listed unchanged in .cache.json: k3s skips re-importing it. */
  cachedByK3s: boolean;
}

export interface FateContext {
  distro: Distro;
  distroVersion: string | null;
}

export interface RefFate {
  afterRestart: Fate;
  reason: string;
  archive: string | null;
}

/** `reg/path@sha256:…` → `reg/path`; `reg/path:tag` → `reg/path`. */
export function repository(ref: string): string {
  const at = ref.indexOf('@');
  if (at >= 0) return ref.slice(0, at);
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  return colon > slash ? ref.slice(0, colon) : ref;
}

const isDigestRef = (ref: string) => ref.includes('@sha256:');

function distroName(d: Distro): string {
  return d === 'rke2' ? 'RKE2' : 'k3s';
}

/** Which archive brings a reference back on import: by name, or a digest ref by repository + image id. */
export function archivesBringing(ref: FateRef, archives: FateArchive[]): FateArchive[] {
  return archives.filter((a) =>
    (a.images ?? []).some(
      (img) =>
        img.name === ref.name ||
        (isDigestRef(ref.name) && repository(img.name) === repository(ref.name) && img.imageId !== null && img.imageId === ref.imageId),
    ),
  );
}

export function predictFates(refs: FateRef[], archives: FateArchive[], ctx: FateContext): Map<string, RefFate> {
  const distro = ctx.distro === 'unknown' ? 'k3s' : ctx.distro;
  const stripLabel = distro === 'rke2' ? LABEL_RKE2_PINNED : LABEL_K3S_PINNED;
  const who = distroName(distro);
  const fix: FixStatus = cacheFixStatus(ctx.distroVersion);
  const version = ctx.distroVersion ?? 'unknown version';
  const unreadable = archives.filter((a) => a.images === null);
  const out = new Map<string, RefFate>();

  for (const ref of refs) {
    const bringing = archivesBringing(ref, archives);
    // An archive that k3s really re-imports (or, with the fix, re-pins from its cache record).
    const reimporting = bringing.find((a) => !a.cachedByK3s);
    const cachedFixed = fix === 'fixed' ? bringing.find((a) => a.cachedByK3s) : undefined;
    const cachedLost = bringing.find((a) => a.cachedByK3s);
    const repinner = reimporting ?? cachedFixed;

    const stripped = ref.labels[stripLabel] !== undefined;
    const criPinned = ref.labels[LABEL_CRI_PINNED] === PINNED;
    let fate: RefFate;

    if (repinner) {
      const how = reimporting
        ? `${who} re-imports ${repinner.path} at start and pins it again`
        : `${repinner.path} is unchanged and .cache.json is on, but ${who} ${version} re-pins images of cached archives`;
      if (stripped || !criPinned) {
        fate = { afterRestart: 'pinned', reason: `${how}.`, archive: repinner.path };
      } else {
        fate = {
          afterRestart: 'pinned',
          reason: `Still pinned, but ${how}, so the pin becomes ${who}-managed again: remove the archive to keep it durable.`,
          archive: repinner.path,
        };
      }
    } else if (stripped) {
      if (cachedLost) {
        const why =
          fix === 'unknown'
            ? `Holdfast cannot tell whether ${who} ${version} has the .cache.json fix (k3s PR #14266), so it assumes the pin is lost`
            : `${who} ${version} skips unchanged archives listed in .cache.json without re-pinning them`;
        fate = {
          afterRestart: 'unpinned',
          reason: `${who} strips this pin at start and ${cachedLost.path} will not pin it again: ${why}. Make the pin durable before restarting.`,
          archive: cachedLost.path,
        };
      } else if (unreadable.length) {
        fate = {
          afterRestart: 'unpinned',
          reason: `${who} strips this pin at start and no readable archive brings it back (${unreadable.map((a) => a.path).join(', ')} could not be read). Make the pin durable before restarting.`,
          archive: null,
        };
      } else {
        fate = {
          afterRestart: 'unpinned',
          reason: `${who} strips this pin at start and no archive in the images dir brings it back: make the pin durable before restarting.`,
          archive: null,
        };
      }
    } else if (criPinned) {
      fate = {
        afterRestart: 'pinned',
        reason: cachedLost
          ? `Durable pin: ${who} does not touch it (${cachedLost.path} is skipped by .cache.json).`
          : `Durable pin: ${who} never touches it.`,
        archive: cachedLost?.path ?? null,
      };
    } else {
      fate = {
        afterRestart: 'unpinned',
        reason: 'Not pinned: kubelet\'s image garbage collector may delete it when no container uses it.',
        archive: cachedLost?.path ?? null,
      };
    }
    out.set(ref.name, fate);
  }
  return out;
}
