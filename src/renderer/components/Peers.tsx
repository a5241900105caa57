// k3s's embedded registry (spegel) in the app: the Peers cell of the images table, the one-line
// state of the node above it, and the fleet's part — each node's registries.yaml mirrors and which
// nodes can serve a needed image. The words are shared/embeddedRegistry's and
// shared/registryMirrors' (the CLI says the same); this file only lays them out.
import type { FleetNodeResult } from '../../shared/fleet';
import {
  describePeerSource,
  embeddedRegistryBrief,
  embeddedRegistryFrom,
  fleetPeersApply,
  fleetPeerSourcesOf,
  type EmbeddedRegistryConfig,
  type PeerServing,
} from '../../shared/embeddedRegistry';
import { describePullSource, registriesHeadline, type NodeRegistries } from '../../shared/registryMirrors';

/** The short clause, the long form on hover (as the fate and need badges do). */
export function PeersCell({ peers }: { peers: PeerServing | null }) {
  if (!peers) return <span className="muted" title="No registry in this name (CRI's own record): no verdict">—</span>;
  return (
    <span className={`peers ${peers.servable ? 'peers-yes' : 'peers-no'}`} title={peers.reason} data-testid="peers-cell" data-servable={peers.servable}>
      {peers.brief}
    </span>
  );
}

/** The node's embedded-registry state in one line: what, which file set it, and the notes. */
export function EmbeddedRegistrySummary({ cfg }: { cfg: EmbeddedRegistryConfig }) {
  // Off and mirroring nothing: the embedded registry plays no part here, nor do notes about its files.
  if (cfg.enabled === 'off' && cfg.mirrors.length === 0) return null;
  return (
    <p className="embedded-registry muted small" data-testid="embedded-registry-summary" data-enabled={cfg.enabled}>
      <span className="embedded-registry-state">{embeddedRegistryBrief(cfg)}</span> · {embeddedRegistryFrom(cfg)}
      {cfg.notes.map((n) => (
        <span key={n} className="embedded-registry-note">
          {' '}
          · {n}
        </span>
      ))}
    </p>
  );
}

/** How many needed images the fleet view lists (the exported JSON has every reference's peers). */
const SHOWN_SOURCES = 20;
/** How many needed images' pulls a node lists. */
const SHOWN_PULLS = 8;

function NodeMirrors({ node, r }: { node: string; r: NodeRegistries }) {
  return (
    <li className="registries-node" data-testid={`registries-${node}`}>
      <div>
        <strong>{node}</strong> <code>{r.file}</code> <span className="muted">{registriesHeadline(r)}</span>
      </div>
      <MirrorList r={r} />
    </li>
  );
}

/** A registries.yaml's mirrors, endpoints and rewrites, its notes, and where missing needed images would come from. */
function MirrorList({ r }: { r: NodeRegistries }) {
  const pulls = r.pulls ?? [];
  return (
    <>
      {r.state === 'read' || r.state === 'not-understood' ? (
        <ul className="registries-mirrors">
          {r.mirrors.map((m) => (
            <li key={m.registry} data-testid="registry-mirror">
              <code>{m.registry}</code> →{' '}
              {m.endpoints.length ? m.endpoints.map((e, i) => <code key={`${i}-${e}`} className="registries-endpoint">{e}</code>) : <span className="muted">no endpoints (the registry itself)</span>}
              {m.rewrites.length ? (
                <ul className="registries-rewrites">
                  {m.rewrites.map((w) => (
                    <li key={w.pattern}>
                      rewrite <code>{w.pattern}</code> → <code>{w.replacement}</code>
                      {w.problem ? <span className="muted"> ({w.problem})</span> : null}
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
          {r.notes.map((n) => (
            <li key={n} className="muted">
              note: {n}
            </li>
          ))}
          {pulls.length ? (
            <li>
              Needed images it lacks would be pulled from:
              <ul className="registries-rewrites">
                {pulls.slice(0, SHOWN_PULLS).map((p) => (
                  <li key={p.ref}>
                    <code>{p.ref}</code>: {describePullSource(p.sources.find((s) => !s.default) ?? p.sources[0]!)}
                  </li>
                ))}
                {pulls.length > SHOWN_PULLS ? <li className="muted">… {pulls.length - SHOWN_PULLS} more (export the JSON)</li> : null}
              </ul>
            </li>
          ) : null}
        </ul>
      ) : null}
    </>
  );
}

/**
 * One node's registries.yaml on its own page, from the last fleet inspection (the node side reads
 * it only then): folded, its headline in the summary line.
 */
export function NodeRegistriesDetails({ r, at }: { r: NodeRegistries; at: string | null }) {
  if (r.state === 'absent') return null;
  return (
    <details className="node-registries small" data-testid="node-registries">
      <summary>
        Registry mirrors: <code>{r.file}</code> <span className="muted">{registriesHeadline(r)}{at ? ` · fleet inspection of ${at}` : ''}</span>
      </summary>
      <MirrorList r={r} />
    </details>
  );
}

/**
 * The fleet's registries, read-only: each node's registries.yaml (shown when some node has one),
 * then, when some node's config turns the embedded registry on, each node's state and which nodes
 * can serve each needed image to the nodes that lack it.
 */
export function FleetRegistries({ nodes, groupOf }: { nodes: readonly FleetNodeResult[]; groupOf: (node: string) => string | undefined }) {
  const withMirrors = nodes.filter((n) => n.registries && n.registries.state !== 'absent');
  const peersOn = fleetPeersApply(nodes.map((n) => n.embeddedRegistry));
  if (!withMirrors.length && !peersOn) return null;
  const sources = peersOn ? fleetPeerSourcesOf(nodes, groupOf) : [];
  return (
    <div className="fleet-registries" data-testid="fleet-registries">
      {withMirrors.length ? (
        // Folded while no node mirrors anything: the matrix keeps the room.
        <details className="fleet-section" open={withMirrors.some((n) => n.registries!.mirrors.length > 0)} data-testid="registry-mirrors">
          <summary className="section-title">
            Registry mirrors <span className="muted small">registries.yaml on {withMirrors.length === 1 ? '1 node' : `${withMirrors.length} nodes`}; images are still stored under the names pods give</span>
          </summary>
          <ul className="registries-nodes">
            {withMirrors.map((n) => (
              <NodeMirrors key={n.node} node={n.node} r={n.registries!} />
            ))}
          </ul>
        </details>
      ) : null}
      {peersOn ? (
        <details className="fleet-section" open data-testid="fleet-peers">
          <summary className="section-title">
            Embedded registry <span className="muted small">peers pull images from each other</span>
          </summary>
          <ul className="registries-nodes">
            {nodes.map((n) =>
              n.embeddedRegistry ? (
                <li key={n.node} data-testid={`peers-node-${n.node}`}>
                  <strong>{n.node}</strong>: {embeddedRegistryBrief(n.embeddedRegistry)}
                </li>
              ) : null,
            )}
          </ul>
          {sources.length ? (
            <table className="mini-table peer-sources" data-testid="peer-sources">
              <caption className="visually-hidden">Needed images: the nodes that can serve each to their peers, and the nodes that lack it</caption>
              <thead>
                <tr>
                  <th scope="col">Needed image</th>
                  <th scope="col">Who can serve it</th>
                </tr>
              </thead>
              <tbody>
                {sources.slice(0, SHOWN_SOURCES).map((s) => (
                  <tr key={`${s.group ?? ''}/${s.image}`} data-testid="peer-source" data-missing={s.missingOn.length > 0 || undefined}>
                    <td>
                      <code>{s.image}</code>
                      {s.group ? <span className="muted"> ({s.group})</span> : null}
                    </td>
                    <td>{describePeerSource(s)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {sources.length > SHOWN_SOURCES ? <p className="muted small">… and {sources.length - SHOWN_SOURCES} more needed images (export the JSON for each reference's peers)</p> : null}
        </details>
      ) : null}
    </div>
  );
}
