// Which containerd a lab node runs. k3s bundles 1.7.x (up to v1.31.5 / v1.32.1) and 2.x (from
// v1.31.6 / v1.32.2 on); Debian 12's own package is 1.6, which no k3s release ships and which
// has no CRI pinning. A test proves only what it runs against, so every lab node names its line:
//   '2'   — Debian sid's 2.x (the default: what current k3s ships)
//   '1.7' — Debian trixie's 1.7.x
//   '1.6' — the machine's own /usr/bin/containerd (Debian 12)
// 1.7 and 2 are fetched by scripts/lab-containerd.sh into a cache outside the checkout.
import { readFileSync } from 'node:fs';
import { isExecutable } from '../src/core/localTools.ts';
import { join } from 'node:path';

export const CONTAINERD_LINES = ['1.6', '1.7', '2'] as const;
export type ContainerdLine = (typeof CONTAINERD_LINES)[number];

export interface ContainerdBinaries {
  line: ContainerdLine;
  containerd: string;
  ctr: string;
}

export const containerdCacheDir = (): string =>
  process.env.HOLDFAST_CONTAINERD_CACHE ?? '/var/cache/holdfast-lab/containerd';

export function isContainerdLine(v: string): v is ContainerdLine {
  return (CONTAINERD_LINES as readonly string[]).includes(v);
}

/** The line a lab node gets when the caller names none: $HOLDFAST_LAB_CONTAINERD, else 2.x. */
export function defaultContainerdLine(): ContainerdLine {
  const env = process.env.HOLDFAST_LAB_CONTAINERD;
  if (env === undefined || env === '') return '2';
  if (!isContainerdLine(env)) throw new Error(`HOLDFAST_LAB_CONTAINERD=${env}: use one of ${CONTAINERD_LINES.join(', ')}`);
  return env;
}

// Which distro a lab node is shaped as. Both run the same containerd (the lines above) on the
// same socket; what differs is the node's layout, the distro's pin label and binaries:
//   'k3s'  — /var/lib/rancher/k3s/agent/images, io.cattle.k3s.pinned, `k3s kubectl` (the default)
//   'rke2' — /var/lib/rancher/rke2/agent/images, io.cattle.rke2.pinned, an `rke2` binary from the
//            start, /var/lib/rancher/rke2/bin/kubectl with /etc/rancher/rke2/rke2.yaml
// $HOLDFAST_LAB_DISTRO picks it for nodes whose caller names none, so whole suites run on RKE2.
export const LAB_DISTROS = ['k3s', 'rke2'] as const;
export type LabDistro = (typeof LAB_DISTROS)[number];

/** The distro a lab node gets when the caller names none: $HOLDFAST_LAB_DISTRO, else k3s. */
export function defaultLabDistro(): LabDistro {
  const env = process.env.HOLDFAST_LAB_DISTRO;
  if (env === undefined || env === '') return 'k3s';
  if (!isLabDistro(env)) throw new Error(`HOLDFAST_LAB_DISTRO=${env}: use one of ${LAB_DISTROS.join(', ')}`);
  return env;
}

export function isLabDistro(v: string): v is LabDistro {
  return (LAB_DISTROS as readonly string[]).includes(v);
}

/** Paths of containerd and ctr for a line; a clear error naming the fix when they are absent. */
export function containerdBinaries(line: ContainerdLine = defaultContainerdLine()): ContainerdBinaries {
  if (line === '1.6') {
    for (const f of ['/usr/bin/containerd', '/usr/bin/ctr']) {
      if (!isExecutable(f)) throw new Error(`lab: ${f} is missing (apt-get install containerd)`);
    }
    return { line, containerd: '/usr/bin/containerd', ctr: '/usr/bin/ctr' };
  }
  const dir = join(containerdCacheDir(), line);
  const bins = { line, containerd: join(dir, 'containerd'), ctr: join(dir, 'ctr') };
  if (!isExecutable(bins.containerd) || !isExecutable(bins.ctr)) {
    throw new Error(`lab: containerd ${line} is not in ${dir}: run scripts/lab-containerd.sh ${line} (as root) first`);
  }
  return bins;
}

/** The version the cached binary reported when it was fetched (e.g. "2.1.9+unknown"). */
export function cachedVersion(line: ContainerdLine): string | null {
  if (line === '1.6') return null;
  try {
    return readFileSync(join(containerdCacheDir(), line, 'VERSION'), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Lines whose binaries are present here (for `npm run lab -- --help` and test matrices). */
export function availableContainerdLines(): ContainerdLine[] {
  return CONTAINERD_LINES.filter((l) => {
    try {
      containerdBinaries(l);
      return true;
    } catch {
      return false;
    }
  });
}
