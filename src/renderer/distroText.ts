// How the app names a node's k3s/RKE2 — and says what it means when none answered, rather than a
// bare "unknown".
import { distroDisplayName, UNDETECTED_DISTRO_NAME } from '../shared/distro';
import type { NodeInfo } from '../shared/domain/nodes';

/** What Holdfast asked the node (src/core/node/detect.ts): the binaries on PATH and in /usr/local/bin. */
export const DISTRO_NOT_DETECTED_WHY = 'no k3s or rke2 binary answered --version';

export const DISTRO_NOT_DETECTED_HELP =
  'Holdfast ran k3s --version and rke2 --version (on the PATH and in /usr/local/bin) on the node and neither answered. ' +
  "It assumes k3s's paths and, not knowing the release, the safest rules for what the next start does to pins. " +
  'If the node runs k3s or RKE2 elsewhere, make the binary reachable for the SSH user, then reconnect.';

export interface DistroText {
  /** "k3s", "RKE2", or "k3s/RKE2" when none was detected. */
  name: string;
  /** The release, "not detected", or "version unknown". */
  version: string;
  /** Why, when something is missing (for a note under it and the tooltip). */
  note: string | null;
  help: string | null;
}

export function distroText(info: Pick<NodeInfo, 'distro' | 'distroVersion'>): DistroText {
  if (info.distro === 'unknown') return { name: UNDETECTED_DISTRO_NAME, version: 'not detected', note: DISTRO_NOT_DETECTED_WHY, help: DISTRO_NOT_DETECTED_HELP };
  if (!info.distroVersion) {
    return {
      name: distroDisplayName(info.distro),
      version: 'version unknown',
      note: `${info.distro} --version gave no version Holdfast reads`,
      help: `${distroDisplayName(info.distro)} answered, but not with a version Holdfast could read: the fates assume the safest rules.`,
    };
  }
  return { name: distroDisplayName(info.distro), version: info.distroVersion, note: null, help: null };
}

/** One line: "v1.31.6+k3s1", or "k3s/RKE2 not detected (no k3s or rke2 binary answered --version)". */
export function distroLine(info: Pick<NodeInfo, 'distro' | 'distroVersion'>): string {
  const t = distroText(info);
  if (!t.note) return t.version;
  return info.distro === 'unknown' ? `${t.name} ${t.version} (${t.note})` : `${t.name}: ${t.version}`;
}
