// k3s's embedded registry mirror (spegel; RKE2 the same): which images a node can serve to its
// peers, and why not (docs: k3s facts, "Which images a site needs"; docs.k3s.io "Embedded
// Registry Mirror"). On when a server starts with `embedded-registry: true` (config.yaml or .d/*.yaml;
// a server flag that enables it cluster-wide); a node takes part only for the registries its own
// registries.yaml lists under `mirrors` (`"*"` or `_default`: every registry; none: it serves
// nothing). An image is shared only with its `name@sha256:<digest>` reference and the
// `containerd.io/distribution.source.<registry>` label k3s puts on its content (PR #13221): without
// them spegel does not advertise it (k3s #13222). Pure: the core reads config and labels.
import { isImageIdRecord, splitReference } from './imageReference';
import { shellLine } from './shellQuote';

/** What the node's own files say about the embedded registry (read in core/node/embeddedRegistry.ts). */
export interface EmbeddedRegistryConfig {
  /**
   * on: `embedded-registry: true` in the node's config; agent: its config does not set it and
   * joins a server (`server:`), so it follows its servers' setting; off: its config does not set
   * it; unknown: a config file the SSH user could not read.
   */
  enabled: 'on' | 'agent' | 'off' | 'unknown';
  /** The config file that set it, when one did. */
  from: string | null;
  /** Registries under `mirrors` in registries.yaml (`*` / `_default` stand for every registry). */
  mirrors: string[];
  /** What makes the reading less than certain, one sentence each. */
  notes: string[];
}

export type PeerBlock = 'registry-off' | 'not-mirrored' | 'no-digest-ref' | 'no-source-label';

/** Whether peers can pull a reference from this node through the embedded registry. */
export interface PeerServing {
  servable: boolean;
  /** Why not (absent when servable). */
  block?: PeerBlock;
  /** The registry the reference is pulled from (its name's host). */
  registry: string;
  /** One short clause. */
  brief: string;
  /** The long form: what, then what to do. */
  reason: string;
}

/** The distribution-source label prefix k3s sets on imported content. */
export const DISTRIBUTION_SOURCE_PREFIX = 'containerd.io/distribution.source.';

const WILDCARDS = new Set(['*', '_default']);

/** Said after every verdict on an agent node. */
const AGENT_NOTE = " This is an agent: all of this holds only if its servers run with embedded-registry: true.";

/** Whether the node's registries.yaml mirrors `registry` (a wildcard mirrors every one). */
export function mirrors(cfg: Pick<EmbeddedRegistryConfig, 'mirrors'>, registry: string): boolean {
  return cfg.mirrors.some((m) => WILDCARDS.has(m) || m === registry);
}

/** A reference's registry: the host of a containerd name (`docker.io/library/x:1` → docker.io). */
export function registryOf(name: string): string | null {
  const p = splitReference(name);
  if (!p) return null;
  const slash = p.repository.indexOf('/');
  return slash > 0 ? p.repository.slice(0, slash) : null;
}

/** The references a peer could ask for: named (not CRI's sha256:<id> record) with a registry. */
export interface PeerRef {
  name: string;
  /** Target digest (manifest or index). */
  digest: string;
}

export const PEER_BRIEF: Record<PeerBlock | 'servable', string> = {
  servable: 'peers can pull it',
  'registry-off': 'embedded registry off',
  'not-mirrored': 'registry not mirrored',
  'no-digest-ref': 'no digest reference',
  'no-source-label': 'no distribution.source label',
};

function longForm(block: PeerBlock | 'servable', ref: string, registry: string, digestRef: string, cfg: EmbeddedRegistryConfig, distro: string, who: string): string {
  const dir = `/etc/rancher/${distro}`;
  switch (block) {
    case 'servable':
      return `Peers can pull ${ref} from this node: the embedded registry is on, ${registry} is mirrored in ${dir}/registries.yaml, and ${digestRef} and its distribution.source label are present.`;
    case 'registry-off':
      return cfg.enabled === 'unknown'
        ? `Whether the embedded registry is on is not known: ${cfg.notes[0] ?? `${dir}/config.yaml could not be read`}. Connect as root, or let Holdfast use sudo -n.`
        : `The embedded registry is off in this node's config: peers cannot pull ${ref} from it. It is a server setting (embedded-registry: true in ${dir}/config.yaml on the servers, then restart them); an agent node follows its servers.`;
    case 'not-mirrored':
      return cfg.mirrors.length === 0
        ? `${dir}/registries.yaml lists no registry under mirrors, so this node takes no part in the embedded registry. List ${registry} (or "*" for every registry) under mirrors and restart ${who}.`
        : `${registry} is not under mirrors in ${dir}/registries.yaml (${cfg.mirrors.join(', ')}), so the embedded registry does not serve it. Add ${registry} (or "*") and restart ${who}.`;
    case 'no-digest-ref':
      return `${digestRef} is missing: the embedded registry advertises an image only with its digest reference, so peers cannot pull ${ref} from this node. Import its archive again (${who} adds the reference at import), or recreate it: ${shellLine(['ctr', '-n', 'k8s.io', 'images', 'tag', ref, digestRef])}.`;
    case 'no-source-label':
      return `The image's content has no containerd.io/distribution.source.${registry} label, which the embedded registry needs to serve it from ${registry}: peers cannot pull ${ref} from this node. Import its archive again (${who} sets the label at import).`;
  }
}

/**
 * For each named reference of a node: whether peers can pull it from this node, and why not.
 * `sourceLabels`: target digest → the labels of that blob in the content store (absent: unread).
 * `distro`: the node's distro id (its /etc/rancher dir, the service to restart); `who`: its name as
 * the sentences say who imports ("RKE2": shared/distro distroDisplayName; not looked up here, which
 * would close an import cycle through shared/domain), the id when not given.
 */
export function peerServing(
  refs: readonly PeerRef[],
  cfg: EmbeddedRegistryConfig,
  sourceLabels: ReadonlyMap<string, Record<string, string>>,
  distro = 'k3s',
  who = distro,
): Map<string, PeerServing> {
  const names = new Set(refs.map((r) => r.name));
  const out = new Map<string, PeerServing>();
  for (const r of refs) {
    if (isImageIdRecord(r.name)) continue;
    const registry = registryOf(r.name);
    const p = splitReference(r.name);
    if (!registry || !p) continue;
    const digestRef = `${p.repository}@${r.digest}`;
    const labels = sourceLabels.get(r.digest) ?? {};
    // An agent is judged as if on (its servers decide): the reason says so.
    const block: PeerBlock | null =
      cfg.enabled !== 'on' && cfg.enabled !== 'agent'
        ? 'registry-off'
        : !mirrors(cfg, registry)
          ? 'not-mirrored'
          : !names.has(digestRef)
            ? 'no-digest-ref'
            : !(`${DISTRIBUTION_SOURCE_PREFIX}${registry}` in labels)
              ? 'no-source-label'
              : null;
    const key = block ?? 'servable';
    out.set(r.name, {
      servable: block === null,
      ...(block ? { block } : {}),
      registry,
      brief: PEER_BRIEF[key],
      reason: longForm(key, r.name, registry, digestRef, cfg, distro, who) + (cfg.enabled === 'agent' && block !== 'registry-off' ? AGENT_NOTE : ''),
    });
  }
  return out;
}

/** The node's state in one clause, as the images footer and the fleet view say it. */
export function embeddedRegistryBrief(cfg: EmbeddedRegistryConfig): string {
  if (cfg.enabled === 'unknown') return 'embedded registry: unknown (config not readable)';
  if (cfg.enabled === 'off') return 'embedded registry: off';
  if (cfg.enabled === 'agent') return `embedded registry: as its servers set it (an agent), mirroring ${cfg.mirrors.length === 0 ? 'nothing' : cfg.mirrors.some((m) => WILDCARDS.has(m)) ? 'every registry' : cfg.mirrors.join(', ')}`;
  if (cfg.mirrors.length === 0) return 'embedded registry: on, but registries.yaml mirrors nothing (this node takes no part)';
  return `embedded registry: on, mirroring ${cfg.mirrors.some((m) => WILDCARDS.has(m)) ? 'every registry' : cfg.mirrors.join(', ')}`;
}

/**
 * Prune's reason to keep an image peers can pull from this node: at an air-gapped site it may
 * be the copy another node pulls. null when no reference of the image is servable.
 */
export function peerKeepText(refs: readonly string[], serving: ReadonlyMap<string, PeerServing>): string | null {
  const ref = refs.find((r) => serving.get(r)?.servable);
  if (!ref) return null;
  return `Peers can pull ${ref} from this node through the embedded registry: at an air-gapped site another node may need this copy. Prune leaves images the embedded registry serves.`;
}

/** One node's part of the fleet view: its references (with `peers` and `need`) and the needed images it lacks. */
export interface PeerFleetNode {
  node: string;
  /** Nodes share images only within their cluster: a group (site) when set; nodes without one are taken together. */
  group?: string;
  images: readonly (PeerRef & { peers?: PeerServing; need?: { needed: boolean } })[] | null;
  missing: readonly string[];
  /** The node's own reading (EmbeddedRegistryConfig.enabled), when read. */
  enabled?: EmbeddedRegistryConfig['enabled'];
}

/** A needed image: the nodes that can serve it to their peers, and the nodes that lack it. */
export interface PeerSource {
  image: string;
  group?: string;
  servedBy: string[];
  missingOn: string[];
}

/** Whether a reference on a node is the needed image (same name, or the same digest in the repository). */
function isImage(need: string, ref: PeerRef): boolean {
  if (need === ref.name) return true;
  const at = need.indexOf('@');
  return at > 0 && need.slice(at + 1) === ref.digest && splitReference(ref.name)?.repository === need.slice(0, at);
}

/**
 * The fleet view: every image needed somewhere (a node's reference counted as needed, or a needed
 * image a node lacks), with which nodes of the same group can serve it through the embedded
 * registry and which lack it. Images needed nowhere are left out; sorted: lacking first.
 */
export function fleetPeerSources(nodes: readonly PeerFleetNode[]): PeerSource[] {
  const out = new Map<string, PeerSource>();
  const entry = (image: string, group: string | undefined) => {
    const key = `${group ?? ''}\u0000${image}`;
    let e = out.get(key);
    if (!e) out.set(key, (e = { image, ...(group !== undefined ? { group } : {}), servedBy: [], missingOn: [] }));
    return e;
  };
  for (const n of nodes) {
    for (const r of n.images ?? []) if (r.need?.needed && !isImageIdRecord(r.name) && !r.name.includes('@')) entry(r.name, n.group);
    for (const m of n.missing) entry(m, n.group).missingOn.push(n.node);
  }
  // An agent serves only when a node of its group (a server) has the registry on.
  const groupOn = new Set(nodes.filter((n) => n.enabled === 'on').map((n) => n.group ?? ''));
  for (const e of out.values()) {
    for (const n of nodes) {
      if (n.group !== e.group) continue;
      if (n.enabled === 'agent' && !groupOn.has(n.group ?? '')) continue;
      if ((n.images ?? []).some((r) => r.peers?.servable && isImage(e.image, r))) e.servedBy.push(n.node);
    }
  }
  return [...out.values()].sort((a, b) => b.missingOn.length - a.missingOn.length || (a.group ?? '').localeCompare(b.group ?? '') || a.image.localeCompare(b.image));
}

/**
 * Whether a node's images get a peers verdict worth a column (CLI PEERS, the app's Peers): its
 * config turns the embedded registry on, or it is an agent that follows its servers.
 */
export function peersColumnApplies(cfg: Pick<EmbeddedRegistryConfig, 'enabled'> | null | undefined): boolean {
  return cfg?.enabled === 'on' || cfg?.enabled === 'agent';
}

/** Whether the fleet view of peers applies: some node's own config turns the embedded registry on. */
export function fleetPeersApply(cfgs: readonly (Pick<EmbeddedRegistryConfig, 'enabled'> | null | undefined)[]): boolean {
  return cfgs.some((c) => c?.enabled === 'on');
}

/** Which file set the node's state, one short clause (the summary's second half). */
export function embeddedRegistryFrom(cfg: EmbeddedRegistryConfig): string {
  if (cfg.from) return `set in ${cfg.from}`;
  if (cfg.enabled === 'agent') return 'not set in its config: it joins a server';
  if (cfg.enabled === 'unknown') return 'its config could not be read';
  return 'not set in its config';
}

/** One needed image of the fleet view, as a clause: who serves it, who lacks it. */
export function describePeerSource(s: PeerSource): string {
  const served = s.servedBy.length ? `served by ${s.servedBy.join(', ')}` : 'no node can serve it';
  return `${served}${s.missingOn.length ? `; missing on ${s.missingOn.join(', ')}` : ''}`;
}

/** A fleet report's node as the fleet view reads it (FleetNodeResult has these fields). */
export interface PeerReportNode {
  node: string;
  images: PeerFleetNode['images'];
  needs?: { missing: readonly { ref: string }[] } | null;
  embeddedRegistry?: EmbeddedRegistryConfig | null;
}

/** fleetPeerSources over a fleet report's nodes, each node's group from `groupOf`. */
export function fleetPeerSourcesOf(nodes: readonly PeerReportNode[], groupOf: (node: string) => string | undefined): PeerSource[] {
  return fleetPeerSources(
    nodes.map((n) => ({ node: n.node, group: groupOf(n.node), images: n.images, missing: n.needs?.missing.map((m) => m.ref) ?? [], enabled: n.embeddedRegistry?.enabled })),
  );
}

/**
 * An image's verdict from its references' (a row of the app holds an image's references): the
 * first servable reference's, else the first reference's that has one; null when none has.
 */
export function imagePeers(refs: readonly { peers?: PeerServing }[]): PeerServing | null {
  return refs.find((r) => r.peers?.servable)?.peers ?? refs.find((r) => r.peers)?.peers ?? null;
}
