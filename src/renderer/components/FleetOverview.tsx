// The landing view when several nodes exist: every node with its connection, its images by pin
// state and, highlighted, the pins the next k3s start removes. Follows live events: a node's
// row updates when its images change, without a refresh. (A fleet-wide matrix comes later.)
import { useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { Distro, NodeDef, NodeWarning } from '../../shared/domain/nodes';
import { nodeWarnings } from '../../shared/nodeWarnings';
import { pictureNearGc } from '../../shared/diskPicture';
import { usedPercentExact } from '../../shared/gcPolicy';
import { formatPercent } from '../../shared/format';
import { useApp } from '../context';
import { countsOfRefs, criModeOf } from '../model/images';
import { unverifiedImageCount } from '../../shared/signatures';
import { fleetPinVerdict } from '../model/fleetPins';
import { atRiskText } from '../../shared/needs';
import { needsSourceText, nodeAtRisk, sortAtRisk } from '../needsView';
import { diskOf, imagesOf, liveOf, lostPinsOf, statusOf } from '../store';
import { AlertIcon, ClockIcon, PlusIcon, RefreshIcon, ShieldIcon, SlashIcon } from './icons';
import { errorCause, useDisplayStatus } from './LiveStatus';
import { StatusDot } from './Sidebar';
import { distroLine, distroText } from '../distroText';
import { DISTRO_ORDER, DISTRO_PROFILES, distroDisplayName, distrosDisplayName } from '../../shared/distro';
import type { AppState } from '../store/types';
import { repeatedMachines, sameMachines, sameMachineText, type SameMachine } from '../../shared/sameMachine';

/** Each distro Holdfast knows, for a node whose distro is not read yet: "k3s or RKE2". */
const ANY_DISTRO = DISTRO_ORDER.map((d) => DISTRO_PROFILES[d].displayName).join(' or ');

/**
 * The overview's words that name a distro (`who`: the node's, or the fleet's for the totals —
 * shared/distro distroDisplayName, distrosDisplayName). The pin state keeps its data name, k3s.
 */
export const fleetOverviewText = (who: string) => ({
  atRiskTitle: (n: number) => `${n} ${n === 1 ? 'image loses its pin' : 'images lose their pin'} at the next ${who} start`,
  fleetAtRisk: (n: number, nodes: number) =>
    `${n} ${n === 1 ? 'image' : 'images'} on ${nodes} ${nodes === 1 ? 'node' : 'nodes'} will lose ${n === 1 ? 'its' : 'their'} pin at the next ${who} start`,
  fleetAtRiskAdvice: `Open a highlighted node and make its pins durable before anyone restarts ${who}.`,
  loading: (nodes: number) =>
    `Loading the images of ${nodes} connected ${nodes === 1 ? 'node' : 'nodes'}: whether a pin is lost at the next ${who} start is not known until they are in.`,
  allClear: `No pin on a connected node is lost at the next ${who} start.`,
  pinColumn: `${who} pin`,
  atRiskColumnTitle: `Images whose pin the next ${who} start removes (as kubelet sees them)`,
  unverifiedTitle: (n: number) => `${n} ${n === 1 ? 'image has' : 'images have'} no signature Holdfast verified (refused, or never verified)`,
  neededColumnTitle: `Images the site needs that are missing, not pinned, or lose their pin at the next ${who} start`,
  marker: { 'no-cri-pinning': 'no CRI pinning', 'distro-pins-nothing': `${who} pins nothing` } as Record<NodeWarning['kind'], string>,
});

/** A node's versions as the store holds them: its status's, else the live feed's. */
const infoOf = (s: AppState, node: string) => statusOf(s, node).info ?? liveOf(s, node)?.info;

/** Configured nodes that are one machine, by the host key each connected node presented (shared/sameMachine). */
const sameMachinesIn = (s: AppState): SameMachine[] =>
  sameMachines(s.nodes.map((n) => ({ node: n.name, hostKeys: infoOf(s, n.name)?.hostKey ? [infoOf(s, n.name)!.hostKey!] : [] })));

/**
 * What to do next about a node that is not connected, in a few words. `distro`: the node's, when
 * Holdfast read it before; else both distros are named.
 */
export function nextStep(error: ErrorInfo | undefined, distro: Distro = 'unknown'): string {
  switch (error?.code) {
    case 'HOST_KEY_UNKNOWN':
      return 'Open it to compare the fingerprint and trust the host.';
    case 'HOST_KEY_CHANGED':
      return 'Open it to compare the old and new fingerprints.';
    case 'AUTH_FAILED':
      return 'Check its user and key (open it, then Edit).';
    case 'UNREACHABLE':
    case 'TIMEOUT':
      return 'Check the address and the network, then Connect all.';
    case 'CONTAINERD_UNAVAILABLE':
      return `Check that ${distro === 'unknown' ? ANY_DISTRO : distroDisplayName(distro)} is running on it, then Connect all.`;
    default:
      return 'Open it for details.';
  }
}

function Count({ n, kind, loading }: { n: number | undefined; kind: 'durable' | 'distro' | 'none' | 'atRisk'; loading: boolean }) {
  if (n === undefined) return <span className="muted" aria-label={loading ? 'loading' : 'not known'}>{loading ? '…' : '—'}</span>;
  return (
    <span className={`fleet-count fleet-count-${kind}${n === 0 ? ' zero' : ''}`} data-testid={`fleet-${kind}`}>
      {n}
    </span>
  );
}

function FleetRow(props: { node: NodeDef; index: number; focused: boolean; onOpen(): void; onFocusRow(i: number): void }) {
  const { node: n } = props;
  const status = useApp((s) => statusOf(s, n.name));
  const live = useApp((s) => liveOf(s, n.name));
  const images = useApp((s) => imagesOf(s, n.name));
  const shown = useDisplayStatus(status, live);
  const info = status.info ?? live?.info;
  const who = distroDisplayName(info?.distro ?? 'unknown');
  const text = fleetOverviewText(who);
  const counts = images.loadedAt ? countsOfRefs(images.items, criModeOf(info), who) : undefined;
  const loading = status.state === 'connecting' || images.state === 'loading';
  const atRisk = counts?.atRisk ?? 0;
  const unverified = images.loadedAt ? unverifiedImageCount(images.items) : undefined;
  const lost = useApp((s) => lostPinsOf(s, n.name).items.length);
  const warnings = nodeWarnings(info);
  const disk = useApp((s) => diskOf(s, n.name).picture);
  const nearGc = disk ? pictureNearGc(disk) : false;
  // Needed images at risk (shared/needs atRiskOf over the node's images report).
  const needed = nodeAtRisk(images);
  const source = images.loadedAt && images.needs ? needsSourceText(images.needs) : null;
  return (
    <tr
      className={`fleet-row${atRisk || lost || nearGc || needed?.length ? ' row-at-risk' : ''}`}
      data-testid={`fleet-row-${n.name}`}
      data-state={shown.dot}
      onClick={props.onOpen}
    >
      <th scope="row" className="fleet-node">
        <button
          type="button"
          className="fleet-open"
          tabIndex={props.focused ? 0 : -1}
          onFocus={() => props.onFocusRow(props.index)}
          onClick={(e) => {
            e.stopPropagation();
            props.onOpen();
          }}
          data-testid="fleet-open"
        >
          <span className="fleet-node-name">{n.name}</span>
          <span className="fleet-node-host">
            {n.user}@{n.host}
            {n.port !== 22 ? `:${n.port}` : ''}
            {n.group ? ` · ${n.group}` : ''}
          </span>
        </button>
      </th>
      <td className="fleet-status">
        <span className="fleet-status-line" data-testid="fleet-status">
          <StatusDot state={shown.dot} />
          {shown.text}
        </span>
        {shown.dot === 'error' && status.error ? (
          <span className="fleet-next fleet-cause" data-testid="fleet-cause" title={errorCause(status.error).title}>
            {errorCause(status.error).text}
          </span>
        ) : null}
        {shown.dot === 'error' ? <span className="fleet-next">{nextStep(status.error, info?.distro)}</span> : null}
        {shown.dot === 'unknown' ? <span className="fleet-next">Use Connect all, or open it.</span> : null}
        {shown.dot === 'reconnecting' && shown.attempt ? <span className="fleet-next">attempt {shown.attempt}; showing the last known images</span> : null}
        {images.state === 'error' ? <span className="fleet-next fleet-next-error">Could not list images: open it to retry.</span> : null}
        {nearGc && disk?.imagefs ? (
          <span
            className="fleet-near-gc"
            data-testid="fleet-near-gc"
            title={`The image file system is at ${formatPercent(usedPercentExact(disk.imagefs))}; kubelet's image GC starts deleting unused, unpinned images at ${formatPercent(disk.policy.highPercent)}. Open the node's Disk tab for what it would delete.`}
          >
            <AlertIcon />
            disk {formatPercent(usedPercentExact(disk.imagefs))} · GC at {formatPercent(disk.policy.highPercent)}
          </span>
        ) : null}
        {source && !source.known ? (
          <span className="fleet-next fleet-no-source" data-testid="fleet-no-needs-source" title={source.text}>
            no source of site needs
          </span>
        ) : null}
        {lost ? (
          <span className="fleet-lost" data-testid="fleet-lost" title="Durable pins Holdfast made that something on the node removed since: open the node for causes and remedy">
            <AlertIcon />
            {lost} durable {lost === 1 ? 'pin' : 'pins'} gone
          </span>
        ) : null}
      </td>
      <td className="num">
        <Count n={counts?.durable} kind="durable" loading={loading} />
      </td>
      <td className="num">
        <Count n={counts?.distro} kind="distro" loading={loading} />
      </td>
      <td className="num">
        <Count n={counts?.none} kind="none" loading={loading} />
      </td>
      <td className="num fleet-risk-cell">
        {counts && atRisk > 0 ? (
          <span className="fleet-risk" data-testid="fleet-atRisk" title={text.atRiskTitle(atRisk)}>
            <AlertIcon />
            {atRisk}
          </span>
        ) : (
          <Count n={counts?.atRisk} kind="atRisk" loading={loading} />
        )}
      </td>
      <td className="num fleet-risk-cell">
        {needed && needed.length > 0 ? (
          <span
            className="fleet-risk fleet-needed"
            data-testid="fleet-needed"
            title={`${needed.length} needed ${needed.length === 1 ? 'image' : 'images'} at risk: ${atRiskText(sortAtRisk(needed))}${source ? `\n${source.text}` : ''}`}
          >
            <AlertIcon />
            {needed.length}
          </span>
        ) : needed ? (
          <span className="fleet-count fleet-count-atRisk zero" data-testid="fleet-needed" title={source?.text}>
            0
          </span>
        ) : (
          <Count n={undefined} kind="atRisk" loading={loading} />
        )}
      </td>
      <td className="num">
        {unverified === undefined ? (
          <Count n={undefined} kind="none" loading={loading} />
        ) : (
          <span className={`fleet-count fleet-count-unverified${unverified === 0 ? ' zero' : ''}`} data-testid="fleet-unverified" title={text.unverifiedTitle(unverified)}>
            {unverified}
          </span>
        )}
      </td>
      <td className="fleet-versions muted small">
        {info ? (
          <>
            <span className={info.distroVersion ? 'mono' : undefined} title={distroText(info).help ?? undefined} data-testid="fleet-release">
              {distroLine(info)}
            </span>
            <span className="mono">containerd {info.containerdVersion}</span>
            {warnings.length ? <CapabilityMarker warnings={warnings} who={who} /> : null}
          </>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}

/** Nodes whose needs no cluster or list told: what counted as needed there instead. */
const noSourceText = (n: number) =>
  `${n} ${n === 1 ? 'node has' : 'nodes have'} no source of site needs (marked under Connection): there, images from air-gap archives count as needed.`;

/** A node whose versions make pins moot: a short marker, the whole sentence on hover and for screen readers. */
function CapabilityMarker({ warnings, who }: { warnings: NodeWarning[]; who: string }) {
  const marker = fleetOverviewText(who).marker;
  return (
    <span className="fleet-capability" data-testid="fleet-capability" title={warnings.map((w) => w.message).join('\n')}>
      <AlertIcon />
      {warnings.map((w) => marker[w.kind]).join(' · ')}
      <span className="visually-hidden">: {warnings.map((w) => w.message).join(' ')}</span>
    </span>
  );
}

/** Totals over the fleet (cheap: counts are memoised per node's list); one machine configured twice counts once. */
interface FleetTotals {
  connected: number;
  atRisk: number;
  nodesAtRisk: number;
  notConnected: number;
  lost: number;
  nodesLost: number;
  cannotPin: number;
  nearGc: number;
  needed: number;
  nodesNeeded: number;
  noSource: number;
  pinnable: number;
}

const TOTAL_KEYS = ['connected', 'atRisk', 'nodesAtRisk', 'notConnected', 'lost', 'nodesLost', 'cannotPin', 'nearGc', 'needed', 'nodesNeeded', 'noSource', 'pinnable'] as const;

const zeroTotals = (): FleetTotals => ({ connected: 0, atRisk: 0, nodesAtRisk: 0, notConnected: 0, lost: 0, nodesLost: 0, cannotPin: 0, nearGc: 0, needed: 0, nodesNeeded: 0, noSource: 0, pinnable: 0 });

function totalsOf(s: AppState): FleetTotals {
  const t = zeroTotals();
  // One machine configured twice counts once: its first entry stands for it.
  const repeated = repeatedMachines(sameMachinesIn(s));
  for (const n of s.nodes) {
    if (repeated.has(n.name)) continue;
    const pic = diskOf(s, n.name).picture;
    if (pic && pictureNearGc(pic)) t.nearGc++;
    const l = lostPinsOf(s, n.name).items.length;
    t.lost += l;
    if (l) t.nodesLost++;
    const info = infoOf(s, n.name);
    if (nodeWarnings(info).length) t.cannotPin++;
    const st = statusOf(s, n.name).state;
    if (st === 'connected') t.connected++;
    else if (st !== 'connecting') t.notConnected++;
    const im = imagesOf(s, n.name);
    if (im.loadedAt) {
      const r = countsOfRefs(im.items, criModeOf(info), distroDisplayName(info?.distro ?? 'unknown')).atRisk;
      t.atRisk += r;
      if (r) t.nodesAtRisk++;
      const list = nodeAtRisk(im) ?? [];
      const nd = list.length;
      t.pinnable += list.filter((a) => a.pinnable).length;
      t.needed += nd;
      if (nd) t.nodesNeeded++;
      if (im.needs && im.needs.basis !== 'known') t.noSource++;
    }
  }
  return t;
}

/** The fleet's totals, selected as one string so the view re-renders only when a count changes. */
function useFleetTotals(): FleetTotals {
  const joined = useApp((s) => {
    const t = totalsOf(s);
    return TOTAL_KEYS.map((k) => t[k]).join('|');
  });
  const values = joined.split('|').map(Number);
  const t = zeroTotals();
  TOTAL_KEYS.forEach((k, i) => {
    t[k] = values[i] ?? 0;
  });
  return t;
}

type FleetVerdict = ReturnType<typeof fleetPinVerdict>;

/** The fleet's pin verdict and its needs verdict (never "nothing at risk" while a node's images are not in). */
function useFleetVerdicts(): { verdict: FleetVerdict; neededVerdict: FleetVerdict } {
  // The banner's verdict (shared/protection counts, and whether every connected node's are in).
  const pinVerdict = useApp((s) =>
    JSON.stringify(
      fleetPinVerdict(
        s.nodes.map((n) => {
          const im = imagesOf(s, n.name);
          const info = infoOf(s, n.name);
          const who = distroDisplayName(info?.distro ?? 'unknown');
          return { connection: statusOf(s, n.name).state, images: im, atRisk: im.loadedAt ? countsOfRefs(im.items, criModeOf(info), who).atRisk : 0 };
        }),
      ),
    ),
  );
  // The same verdict for the site's needs: never "nothing at risk" while a node's images are not in.
  const neededVerdictJson = useApp((s) =>
    JSON.stringify(
      fleetPinVerdict(
        s.nodes.map((n) => {
          const im = imagesOf(s, n.name);
          return { connection: statusOf(s, n.name).state, images: im, atRisk: nodeAtRisk(im)?.length ?? 0 };
        }),
      ),
    ),
  );
  return { verdict: JSON.parse(pinVerdict) as FleetVerdict, neededVerdict: JSON.parse(neededVerdictJson) as FleetVerdict };
}

/** The title, the fleet's one-line summary, same-machine notes, and Reload / Connect all. */
function FleetHeader({ totals, machines, sameMachine }: { totals: FleetTotals; machines: number; sameMachine: SameMachine[] }) {
  const nodes = useApp((s) => s.nodes);
  const nodesState = useApp((s) => s.nodesState);
  const connectAll = useApp((s) => s.connectAll);
  const refreshNode = useApp((s) => s.refreshNode);
  const [busy, setBusy] = useState(false);
  const { connected, notConnected, needed } = totals;

  const onConnectAll = async () => {
    setBusy(true);
    try {
      await connectAll();
    } finally {
      setBusy(false);
    }
  };

  return (
    <header className="detail-head">
      <div className="detail-title">
        <div>
          <h1 id="fleet-title">Fleet overview</h1>
          <p className="muted small" data-testid="fleet-summary">
            {nodesState === 'ready'
              ? `${machines} ${machines === 1 ? 'node' : 'nodes'} · ${connected} connected${notConnected ? ` · ${notConnected} not connected` : ''}${
                  needed ? ` · ${needed} needed ${needed === 1 ? 'image' : 'images'} at risk` : ''
                }`
              : 'Loading nodes…'}
          </p>
          {sameMachine.map((g) => (
            <p key={g.nodes.join(' ')} className="small fleet-same-machine" data-testid="fleet-same-machine">
              <AlertIcon /> {sameMachineText(g)}: counted once in these totals.
            </p>
          ))}
        </div>
      </div>
      <div className="detail-actions">
        <button
          type="button"
          className="btn"
          onClick={() => {
            for (const n of nodes) void refreshNode(n.name);
          }}
          disabled={connected === 0}
          title="Reload every connected node's images (they also update live)"
        >
          <RefreshIcon /> Reload
        </button>
        <button type="button" className="btn btn-primary" onClick={() => void onConnectAll()} disabled={busy || notConnected === 0} data-testid="connect-all">
          {busy ? <span className="spinner spinner-small" aria-hidden="true" /> : null}
          Connect all
        </button>
      </div>
    </header>
  );
}

/** The node list while it is not there to show: loading, failed to load, or empty. */
function NodeListState({ onAdd }: { onAdd(): void }) {
  const nodesState = useApp((s) => s.nodesState);
  const nodesError = useApp((s) => s.nodesError);
  const init = useApp((s) => s.init);
  if (nodesState === 'loading')
    return (
      <div className="empty" aria-live="polite" data-testid="fleet-loading">
        <span className="spinner" aria-hidden="true" />
        <p>Loading the node list…</p>
      </div>
    );
  if (nodesState === 'error')
    return (
      <div className="callout callout-error" role="alert" data-testid="fleet-error">
        <strong>Could not load the node list: {nodesError?.message}</strong>
        <p>{nodesError?.hint ?? 'Check that Holdfast is still running, then retry.'}</p>
        <button type="button" className="btn btn-small" onClick={() => void init()}>
          Retry
        </button>
      </div>
    );
  return (
    <div className="empty" data-testid="fleet-empty">
      <p className="empty-title">No nodes yet</p>
      <p className="muted">Add the nodes you look after by their SSH address; Holdfast then shows every node's pins here.</p>
      <button type="button" className="btn btn-primary" onClick={onAdd}>
        <PlusIcon /> Add node
      </button>
    </div>
  );
}

/** The fleet's needed images at risk: how many, on which nodes, and what to do. */
function NeededBanner({ totals, neededVerdict }: { totals: FleetTotals; neededVerdict: FleetVerdict }) {
  const { needed, nodesNeeded, pinnable, noSource } = totals;
  const neededNodes = useApp((s) =>
    s.nodes
      .map((n) => `${n.name} (${nodeAtRisk(imagesOf(s, n.name))?.length ?? 0})`)
      .filter((t) => !t.endsWith(' (0)'))
      .join(', '),
  );
  return (
    <DangerBanner
      label="Needed images at risk in the fleet"
      testId="fleet-needed-banner"
      title={
        <>
          {needed} needed {needed === 1 ? 'image' : 'images'} at risk on {nodesNeeded} {nodesNeeded === 1 ? 'node' : 'nodes'}: a pod that needs{' '}
          {needed === 1 ? 'it' : 'one'} may not start
        </>
      }
    >
      <span data-testid="fleet-needed-nodes">
        {neededNodes}.{' '}
        {pinnable
          ? 'Open a highlighted node: its Images tab lists them and makes every needed image durable in one step.'
          : 'Open a highlighted node: its Images tab lists them and where a copy of a missing one is, to import it.'}
        {noSource ? ` ${noSourceText(noSource)}` : ''}
        {neededVerdict.kind === 'at-risk' && neededVerdict.pending
          ? ` The images of ${neededVerdict.pending} more connected ${neededVerdict.pending === 1 ? 'node are' : 'nodes are'} not in yet.`
          : ''}
      </span>
    </DangerBanner>
  );
}

/** Pins the next distro start removes, fleet-wide; else whether that is still loading, unknown or all clear. */
function PinRiskSummary({ totals, verdict, text }: { totals: FleetTotals; verdict: FleetVerdict; text: ReturnType<typeof fleetOverviewText> }) {
  if (totals.atRisk > 0)
    return (
      <DangerBanner label="Pins at risk in the fleet" testId="fleet-at-risk" title={<>{text.fleetAtRisk(totals.atRisk, totals.nodesAtRisk)}</>}>
        <span>
          {text.fleetAtRiskAdvice}
          {verdict.kind === 'at-risk' && verdict.pending ? ` The images of ${verdict.pending} more connected ${verdict.pending === 1 ? 'node are' : 'nodes are'} not in yet.` : ''}
        </span>
      </DangerBanner>
    );
  if (verdict.kind === 'loading')
    return (
      <p className="fleet-ok muted small" aria-live="polite" data-testid="fleet-risk-loading">
        <span className="spinner spinner-small" aria-hidden="true" /> {text.loading(verdict.nodes)}
      </p>
    );
  if (verdict.kind === 'unknown')
    return (
      <p className="fleet-ok muted small" data-testid="fleet-risk-unknown">
        <AlertIcon /> The images of {verdict.nodes} connected {verdict.nodes === 1 ? 'node' : 'nodes'} could not be listed: whether a pin is lost there is not
        known (open {verdict.nodes === 1 ? 'it' : 'them'} to retry).
      </p>
    );
  if (verdict.kind === 'all-clear')
    return (
      <p className="fleet-ok muted small" data-testid="fleet-no-risk">
        <ShieldIcon /> {text.allClear}
      </p>
    );
  return null;
}

/** Every fleet-wide warning above the table, the most urgent first; then the all-clear notes. */
function FleetWarnings({ totals, text }: { totals: FleetTotals; text: ReturnType<typeof fleetOverviewText> }) {
  const { verdict, neededVerdict } = useFleetVerdicts();
  const { needed, lost, nodesLost, nearGc, cannotPin, noSource } = totals;
  return (
    <>
      {needed > 0 ? <NeededBanner totals={totals} neededVerdict={neededVerdict} /> : null}
      {lost > 0 ? (
        <DangerBanner
          label="Pins lost behind Holdfast’s back"
          testId="fleet-lost-banner"
          title={
            <>
              {lost} durable {lost === 1 ? 'pin' : 'pins'} Holdfast made {lost === 1 ? 'is' : 'are'} gone on {nodesLost} {nodesLost === 1 ? 'node' : 'nodes'}
            </>
          }
        >
          <span>Open a node marked “pins gone” to see which, when Holdfast made them, the likely causes and how to get them back.</span>
        </DangerBanner>
      ) : null}
      {nearGc > 0 ? (
        <p className="fleet-capability-note small" data-testid="fleet-near-gc-note">
          <AlertIcon /> {nearGc} {nearGc === 1 ? 'node is' : 'nodes are'} within 5 points of kubelet's image GC threshold (marked “disk … · GC at …”): open{' '}
          {nearGc === 1 ? 'it' : 'them'} and see the Disk tab for what GC would delete, or prune safely.
        </p>
      ) : null}
      {cannotPin > 0 ? (
        <p className="fleet-capability-note small" data-testid="fleet-capability-note">
          <AlertIcon /> {cannotPin} {cannotPin === 1 ? 'node runs' : 'nodes run'} versions on which pins do not work as they should (marked under Versions): open {cannotPin === 1 ? 'it' : 'them'} for what that means.
        </p>
      ) : null}
      <PinRiskSummary totals={totals} verdict={verdict} text={text} />
      {neededVerdict.kind === 'all-clear' ? (
        <p className="fleet-ok muted small" data-testid="fleet-needs-ok">
          <ShieldIcon /> Every image the connected nodes need is on them and stays kept.{noSource ? ` ${noSourceText(noSource)}` : ''}
        </p>
      ) : null}
    </>
  );
}

/** The node table: one row per node; arrow keys, Home and End move between nodes, Enter opens one. */
function FleetTable({ nodes, text }: { nodes: NodeDef[]; text: ReturnType<typeof fleetOverviewText> }) {
  const select = useApp((s) => s.select);
  const [focusIdx, setFocusIdx] = useState(0);
  const bodyRef = useRef<HTMLTableSectionElement>(null);

  const onKey = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    e.preventDefault();
    const last = nodes.length - 1;
    const j = e.key === 'Home' ? 0 : e.key === 'End' ? last : Math.min(last, Math.max(0, focusIdx + (e.key === 'ArrowDown' ? 1 : -1)));
    setFocusIdx(j);
    bodyRef.current?.querySelectorAll<HTMLElement>('button.fleet-open')[j]?.focus();
  };

  return (
    <div className="table-wrap fleet-wrap">
      <table className="fleet-table" data-testid="fleet-table">
        <caption className="visually-hidden">Every node: connection, images by pin state, pins at risk, needed images at risk, images not verified. Arrow keys move between nodes; Enter opens one.</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Connection</th>
            <th scope="col" className="num">
              <span className="pin-head pin-head-durable">
                <ShieldIcon /> Durable
              </span>
            </th>
            <th scope="col" className="num">
              <span className="pin-head pin-head-distro">
                <ClockIcon /> {text.pinColumn}
              </span>
            </th>
            <th scope="col" className="num">
              <span className="pin-head pin-head-none">
                <SlashIcon /> Unpinned
              </span>
            </th>
            <th scope="col" className="num" title={text.atRiskColumnTitle}>
              <span className="pin-head pin-head-risk">
                <AlertIcon /> Pin at risk
              </span>
            </th>
            <th scope="col" className="num" title={text.neededColumnTitle}>
              <span className="pin-head pin-head-risk">
                <AlertIcon /> Needed at risk
              </span>
            </th>
            <th scope="col" className="num" title="Images on the node without a signature Holdfast verified (refused, or never verified)">
              <span className="pin-head">Not verified</span>
            </th>
            <th scope="col">Versions</th>
          </tr>
        </thead>
        <tbody ref={bodyRef} onKeyDown={onKey}>
          {nodes.map((n, i) => (
            <FleetRow key={n.name} node={n} index={i} focused={i === Math.min(focusIdx, nodes.length - 1)} onFocusRow={setFocusIdx} onOpen={() => select(n.name)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function FleetOverview({ onAdd }: { onAdd(): void }) {
  const nodes = useApp((s) => s.nodes);
  const nodesState = useApp((s) => s.nodesState);
  const totals = useFleetTotals();
  // The fleet's distro for its totals: the one the nodes read share, else "k3s/RKE2".
  const fleetWho = useApp((s) => distrosDisplayName(s.nodes.flatMap((n) => infoOf(s, n.name)?.distro ?? [])));
  const text = fleetOverviewText(fleetWho);
  const sameMachine = JSON.parse(useApp((s) => JSON.stringify(sameMachinesIn(s)))) as SameMachine[];
  const machines = nodes.length - repeatedMachines(sameMachine).size;

  return (
    <main className="detail fleet" aria-labelledby="fleet-title" data-testid="fleet-overview">
      <FleetHeader totals={totals} machines={machines} sameMachine={sameMachine} />
      <div className="detail-body">
        {nodesState === 'loading' || nodesState === 'error' || nodes.length === 0 ? (
          <NodeListState onAdd={onAdd} />
        ) : (
          <>
            <FleetWarnings totals={totals} text={text} />
            <FleetTable nodes={nodes} text={text} />
            <p className="muted small fleet-foot">Image counts group references by image id, as kubelet does. They update live as images change on a node.</p>
          </>
        )}
      </div>
    </main>
  );
}

/** A fleet-wide warning: what is at risk (the headline), then what to do. */
function DangerBanner({ label, testId, title, children }: { label: string; testId: string; title: ReactNode; children: ReactNode }) {
  return (
    <div className="banner banner-danger" role="region" aria-label={label} data-testid={testId}>
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <strong>{title}</strong>
        {children}
      </div>
    </div>
  );
}
