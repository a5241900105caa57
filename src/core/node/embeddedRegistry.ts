// Reads what the node's own files say about k3s's embedded registry (shared/embeddedRegistry):
// `embedded-registry` in /etc/rancher/<distro>/config.yaml and config.yaml.d/*.yaml|yml (merged as
// k3s merges them: name order, the last value wins), one fixed script over the SSH connection,
// argv-quoted, bounded; only those lines leave the node (config files hold join tokens). The
// registry names under `mirrors` come from the node's one reading of registries.yaml
// (core/node/registries.ts, which never sends its credentials), handed in when the caller has it.
import path from 'node:path';
import { distroDisplayName, distroProfile } from '../../shared/distro';
import type { ImageRef } from '../../shared/domain/images';
import type { Distro, NodeDef, NodeInfo } from '../../shared/domain/nodes';
import { DISTRIBUTION_SOURCE_PREFIX, peerKeepText, peerServing, type EmbeddedRegistryConfig, type PeerRef, type PeerServing } from '../../shared/embeddedRegistry';
import { mapLimit } from '../../shared/mapLimit';
import { HoldfastError } from '../errors';
import type { SshConnection } from '../ssh/connect';
import { readRegistries, registriesFileOf, unreadableWhy, type RegistriesRead } from './registries';
import type { ContainerdClient } from '../containerd/client';

/**
 * `$1` "sudo" for a non-root user, `$2` the distro's config dir. Prints `@@file PATH` (then the
 * file's embedded-registry lines, and `@@joins` when it sets `server:`) or `@@unreadable PATH`
 * for each config file.
 */
export const EMBEDDED_SCRIPT = [
  'S=$1; C=$2; LC_ALL=C; export LC_ALL',
  'rd() { if [ -r "$1" ]; then cat -- "$1"; elif [ "$S" = sudo ]; then sudo -n cat -- "$1" 2>/dev/null; else return 1; fi; }',
  'is() { [ "$1" "$2" ] || { [ "$S" = sudo ] && sudo -n test "$1" "$2" 2>/dev/null; }; }',
  // YAML keys at column 0, JSON keys one a line (as Rancher's drop-ins write them).
  String.raw`keys() { head -c 262144 | grep -E "^([[:space:]]*\"embedded-registry\"|[\"']?embedded-registry[\"']?)[[:space:]]*:" | head -n 8; }`,
  // `server:` (an agent, or a server joining another) is reported as present, never its value.
  String.raw`joins() { head -c 262144 | grep -qE "^([[:space:]]*\"server\"|[\"']?server[\"']?)[[:space:]]*:" && echo "@@joins"; }`,
  'one() { if is -f "$1"; then if rd "$1" >/dev/null 2>&1; then echo "@@file $1"; rd "$1" | keys; rd "$1" | joins; else echo "@@unreadable $1"; fi; fi; }',
  'one "$C/config.yaml"',
  'if is -d "$C/config.yaml.d"; then',
  '  L=$(ls -1 -- "$C/config.yaml.d" 2>/dev/null) || { [ "$S" = sudo ] && L=$(sudo -n ls -1 -- "$C/config.yaml.d" 2>/dev/null); } || echo "@@unreadable $C/config.yaml.d/"',
  '  printf "%s\\n" "$L" | while IFS= read -r f; do case $(printf %s "$f" | tr A-Z a-z) in *.yaml|*.yml) one "$C/config.yaml.d/$f";; esac; done',
  'fi',
].join('\n');

export const EMBEDDED_SCRIPT_NAME = 'holdfast-embedded-registry';

export function embeddedArgv(sudo: boolean, distro: Distro): string[] {
  return ['sh', '-c', EMBEDDED_SCRIPT, EMBEDDED_SCRIPT_NAME, sudo ? 'sudo' : '', path.posix.dirname(distroProfile(distro).configFile)];
}

/** A YAML/JSON scalar after `key:`, unquoted, comment dropped. */
function scalar(line: string): string {
  const v = line.slice(line.indexOf(':') + 1).replace(/\s+#.*$/, '').trim().replace(/,$/, '');
  return v.replace(/^(["'])(.*)\1$/, '$2');
}

/** What registries.yaml adds to the embedded registry's reading: its mirror names, or why there are none. */
function registriesNote(read: RegistriesRead, sudo: boolean, how: string): string | null {
  const reg = read.registries;
  if (reg.state === 'absent') return `${reg.file} does not exist`;
  if (reg.state !== 'unreadable') return null;
  // The file is there but the user may not read it, or the read itself failed (the note says how).
  return reg.notes[0] === unreadableWhy(sudo) || !reg.notes[0] ? `${reg.file} could not be read ${how}` : `${reg.file} was not read: ${reg.notes[0]}`;
}

/**
 * Reads the config script's answer, with the mirror names of the node's registries.yaml reading.
 * Pure: tested against the scripts run on real files.
 */
export function parseEmbeddedAnswer(stdout: string, sudo: boolean, registries: RegistriesRead): EmbeddedRegistryConfig {
  let value: boolean | null = null;
  let from: string | null = null;
  let file: string | null = null;
  const notes: string[] = [];
  let unreadableConfig = false;
  let joins = false;
  const how = sudo ? 'even through sudo -n' : 'by the SSH user';
  for (const line of stdout.split('\n')) {
    if (line.startsWith('@@file ')) file = line.slice(7);
    else if (line.startsWith('@@unreadable ')) {
      unreadableConfig = true;
      notes.push(`${line.slice(13)} could not be read ${how}`);
    } else if (line === '@@joins') joins = true;
    else if (file && line.trim()) {
      const v = scalar(line).toLowerCase();
      if (v === 'true' || v === 'false') {
        value = v === 'true';
        from = file;
      } else notes.push(`${file}: embedded-registry value "${v.slice(0, 40)}" not understood`);
    }
  }
  const note = registriesNote(registries, sudo, how);
  if (note) notes.push(note);
  // A file the user cannot read may set it: only a value read counts as known.
  // A node that joins a server and sets nothing follows its servers (embedded-registry is a server flag).
  const enabled = value === true ? 'on' : unreadableConfig ? 'unknown' : value === null && joins ? 'agent' : 'off';
  return { enabled, from: value === true ? from : null, mirrors: [...registries.mirrorNames], notes };
}

/** What the script needs of a node. */
export function embeddedOptions(def: Pick<NodeDef, 'sudo'>, info: Pick<NodeInfo, 'distro'>): { sudo: boolean; distro: Distro } {
  return { sudo: def.sudo === true, distro: info.distro };
}

/**
 * Asks the node: its config files (one exec) and, unless the caller read it already, registries.yaml
 * (core/node/registries.ts, one exec). A node that cannot answer gives `unknown` with the reason.
 */
export async function readEmbeddedRegistry(
  ssh: Pick<SshConnection, 'exec'>,
  opts: { sudo: boolean; distro: Distro },
  registries?: RegistriesRead,
): Promise<EmbeddedRegistryConfig> {
  const argv = embeddedArgv(opts.sudo, opts.distro);
  const [config, read] = await Promise.all([
    ssh.exec(argv, { timeoutMs: 15_000 }).catch((e: unknown) => {
      if (e instanceof HoldfastError && (e.code === 'TIMEOUT' || e.code === 'REFUSED')) return e;
      throw e;
    }),
    registries ?? readRegistries(ssh, { sudo: opts.sudo, file: registriesFileOf(opts.distro), who: distroDisplayName(opts.distro) }),
  ]);
  if (config instanceof HoldfastError) return { enabled: 'unknown', from: null, mirrors: [], notes: [config.message] };
  if (config.code !== 0) return { enabled: 'unknown', from: null, mirrors: [], notes: [`the embedded-registry read failed (exit ${config.code ?? 'by a signal'}: ${config.stderr.trim().split('\n')[0] ?? ''})`] };
  return parseEmbeddedAnswer(config.stdout, opts.sudo, read);
}

/** Target blobs whose labels are read at most (each is one Content.Info). */
const MAX_LABEL_READS = 512;

/** The distribution-source labels of each target blob (only those labels; unreadable blobs absent). */
export async function targetSourceLabels(cd: Pick<ContainerdClient, 'contentInfo'>, digests: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  await mapLimit([...new Set(digests)].slice(0, MAX_LABEL_READS), 8, async (d) => {
    const info = await cd.contentInfo(d).catch(() => null);
    if (!info) return;
    out.set(d, Object.fromEntries(Object.entries(info.labels).filter(([k]) => k.startsWith(DISTRIBUTION_SOURCE_PREFIX))));
  });
  return out;
}

/**
 * peerServing with the content labels it needs: read only for the targets whose references pass
 * every other condition (the registry on, mirrored, with the digest reference), one Content.Info each.
 */
async function servingWithLabels(cd: Pick<ContainerdClient, 'contentInfo'>, refs: readonly PeerRef[], cfg: EmbeddedRegistryConfig, distro: Distro): Promise<Map<string, PeerServing>> {
  const { id, displayName } = distroProfile(distro);
  const first = peerServing(refs, cfg, new Map(), id, displayName);
  const wanted = refs.filter((r) => first.get(r.name)?.block === 'no-source-label').map((r) => r.digest);
  if (wanted.length === 0) return first;
  return peerServing(refs, cfg, await targetSourceLabels(cd, wanted), id, displayName);
}

/** What the embedded registry makes of a node's references: each named one gets `peers`. */
export async function withPeerServing<R extends ImageRef>(
  session: { def: Pick<NodeDef, 'sudo'>; ssh: Pick<SshConnection, 'exec'>; containerd: Pick<ContainerdClient, 'contentInfo'> },
  info: Pick<NodeInfo, 'distro'>,
  refs: readonly R[],
  /** The node's registries.yaml reading, when the caller has it (else it is read here). */
  registries?: RegistriesRead,
): Promise<{ images: R[]; embeddedRegistry: EmbeddedRegistryConfig }> {
  const cfg = await readEmbeddedRegistry(session.ssh, embeddedOptions(session.def, info), registries);
  const serving = await servingWithLabels(session.containerd, refs, cfg, info.distro);
  return { images: refs.map((r) => (serving.has(r.name) ? { ...r, peers: serving.get(r.name)! } : r)), embeddedRegistry: cfg };
}

/**
 * Prune's keeps: image key → why peers pull it from this node (shared/embeddedRegistry
 * peerKeepText). Empty unless the node's embedded registry is on.
 */
export async function peerKeeps(
  session: { def: Pick<NodeDef, 'sudo'>; ssh: Pick<SshConnection, 'exec'>; containerd: Pick<ContainerdClient, 'contentInfo' | 'listImages'>; info(): Promise<NodeInfo> },
  images: readonly { key: string; refs: string[] }[],
): Promise<Map<string, string>> {
  const cfg = await readEmbeddedRegistry(session.ssh, embeddedOptions(session.def, await session.info()));
  const out = new Map<string, string>();
  // An agent's servers decide; Holdfast cannot see them from here, so it keeps what the agent would serve.
  if (cfg.enabled !== 'on' && cfg.enabled !== 'agent') return out;
  const refs = (await session.containerd.listImages()).map((r) => ({ name: r.name, digest: r.target.digest }));
  const serving = await servingWithLabels(session.containerd, refs, cfg, (await session.info()).distro);
  for (const i of images) {
    const text = peerKeepText(i.refs, serving);
    if (text) out.set(i.key, text);
  }
  return out;
}
