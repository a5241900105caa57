// The node's kubelet settings that decide what its image GC deletes and whether it re-verifies
// imported images (shared/gcPolicy): read with one fixed script (core/disk/kubeletArgs), and a
// second read only when a flag names a kubelet config file or drop-in dir the first did not read.
import { distroProfile } from '../../shared/distro';
import type { NodeInfo } from '../../shared/domain/nodes';
import { kubernetesMinor, resolveGcPolicy, type GcPolicy } from '../../shared/gcPolicy';
import { kubeletArgsArgv, kubeletFilesArgv, parseKubeletArgs } from '../disk/kubeletArgs';
import type { NodeSession } from '../node/session';

/** The node's GC, eviction and credential verification policy, from its config files and running processes. */
export async function readGcPolicy(session: NodeSession, known?: NodeInfo): Promise<GcPolicy> {
  const info = known ?? (await session.info());
  const kube = { minor: kubernetesMinor(info.distroVersion) };
  const sudo = session.def.sudo === true;
  try {
    const dataDir = info.imagesDir?.dataDir ?? distroProfile(info.distro).dataDirDefault;
    const r = await session.ssh.exec(kubeletArgsArgv(sudo, info.distro, dataDir), { timeoutMs: 20_000 });
    let parsed = parseKubeletArgs(r.stdout, info.distro);
    if (parsed.unread.file || parsed.unread.dir) {
      const more = await session.ssh.exec(kubeletFilesArgv(sudo, info.distro, parsed.unread), { timeoutMs: 20_000 });
      parsed = parseKubeletArgs(r.stdout, info.distro, more.stdout);
    }
    return resolveGcPolicy(parsed.args, parsed.notes, kube);
  } catch (e) {
    return resolveGcPolicy([], [`The node's kubelet settings could not be read (${e instanceof Error ? e.message : String(e)}); defaults are shown.`], kube);
  }
}
