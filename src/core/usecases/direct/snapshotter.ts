// The snapshotter CRI unpacks into on a node, read from the containerd config the distro writes
// (k3s/RKE2: `<data-dir>/agent/etc/containerd/config.toml`, k3s's --snapshotter ends up there;
// a plain containerd: /etc/containerd/config.toml), checked against the snapshotters containerd
// reports working. Without a config line: overlayfs when it works (containerd's and k3s's
// default), else the first working snapshotter. Not assumed: an image unpacked for the wrong
// snapshotter is unpacked again by kubelet at the first pod start.
import { distroProfile } from '../../../shared/distro';
import { HoldfastError } from '../../errors';
import type { NodeSession } from '../../node/session';
import { clusterOptions } from '../../needs/cluster';
import { DEFAULT_SNAPSHOTTER } from '../../disk/fileSystems';

const SCRIPT = [
  'S=$1; DD=$2; LC_ALL=C; export LC_ALL',
  'rd() { if [ -r "$1" ]; then cat -- "$1"; elif [ "$S" = sudo ]; then sudo -n cat -- "$1" 2>/dev/null; fi; }',
  'for f in "$DD/agent/etc/containerd/config.toml" /etc/containerd/config.toml; do',
  '  rd "$f" | head -c 1048576 | grep -E "^[[:space:]]*snapshotter[[:space:]]*=" | head -n 4 && break',
  'done',
  'exit 0',
].join('\n');

/** The first `snapshotter = "…"` a config names (CRI's: the only one in k3s's config). */
export function parseSnapshotterLines(out: string): string | null {
  for (const l of out.split('\n')) {
    const m = /^\s*snapshotter\s*=\s*["']([A-Za-z0-9_.-]+)["']/.exec(l);
    if (m) return m[1]!;
  }
  return null;
}

export async function criSnapshotter(session: NodeSession): Promise<string> {
  const info = await session.info();
  const { sudo, dataDir } = clusterOptions(session.def, info);
  let configured: string | null = null;
  try {
    const r = await session.ssh.exec(['sh', '-c', SCRIPT, 'holdfast-snapshotter', sudo ? 'sudo' : '', dataDir], { outputLimit: 'remote.workloadsBytes', timeoutMs: 30_000 });
    configured = parseSnapshotterLines(r.stdout);
  } catch {
    // a node that cannot run the script (e.g. --local without a shell): containerd's answer decides
  }
  const working = (await session.containerd.plugins(['type==io.containerd.snapshotter.v1'])).filter((p) => !p.initError).map((p) => p.id);
  if (configured) {
    if (working.includes(configured)) return configured;
    throw new HoldfastError('REFUSED', `the node's containerd config names the ${configured} snapshotter, but containerd reports it not working`, {
      hint: `Check the node's log (${distroProfile(info.distro).serviceLog}) or containerd's for why ${configured} failed; Holdfast unpacks only where CRI will look.`,
    });
  }
  if (working.includes(DEFAULT_SNAPSHOTTER)) return DEFAULT_SNAPSHOTTER;
  if (working[0]) return working[0];
  throw new HoldfastError('REFUSED', 'containerd on the node reports no working snapshotter', { hint: 'Check containerd\'s log on the node.' });
}
