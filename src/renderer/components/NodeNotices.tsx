// Node-level notices above a node's tabs: what its versions mean for pins (once per node, from
// the shared rule), the needed images at risk there (shared/needs, through atRiskOf), and the
// durable pins Holdfast made that are gone, with when and by whom, the likely causes and the
// remedy (one click where re-pinning brings it back).
import { useMemo, useState } from 'react';
import type { NodeInfo } from '../../shared/domain/nodes';
import type { PinTarget } from '../../shared/domain/pins';
import { distroDisplayName } from '../../shared/distro';
import { nodeWarnings } from '../../shared/nodeWarnings';
import { useApp } from '../context';
import { displayRef } from '../model/refs';
import { formatDateTime } from '../model/text';
import { groupLostPins, type LostPinGroup } from '../model/lostPins';
import { lostPinKindText } from '../../shared/lostPins';
import { proseText } from '../../shared/remedy';
import { imagesOf, lostPinsOf, statusOf } from '../store';
import { atRiskText } from '../../shared/needs';
import { needsSourceText, nodeAtRisk, sortAtRisk } from '../needsView';
import { AlertIcon } from './icons';
import { nodeMessage } from './ErrorCallout';

export function CapabilityBanner({ info }: { info: Pick<NodeInfo, 'containerdVersion' | 'distro' | 'distroVersion'> | undefined }) {
  const warnings = nodeWarnings(info);
  if (!warnings.length) return null;
  return (
    <div className="banner banner-warning node-notice" role="status" data-testid="capability-banner">
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <strong>{warnings.some((w) => w.kind === 'no-cri-pinning') ? 'Pins on this node do not protect images' : `This node’s ${distroDisplayName(info?.distro ?? 'unknown')} pins nothing it imports`}</strong>
        {warnings.map((w) => (
          <span key={w.kind} data-testid="capability-warning" data-kind={w.kind}>
            {nodeMessage(w.message)}
          </span>
        ))}
      </div>
    </div>
  );
}

/**
 * The needed images at risk on a node, in one line (the Images tab has the list and the action):
 * "will a pod here fail?" answered on every tab of the node.
 */
export function NeededAtRiskBanner({ node, onShow }: { node: string; onShow(): void }) {
  const images = useApp((s) => imagesOf(s, node));
  const atRisk = useMemo(() => sortAtRisk(nodeAtRisk(images) ?? []), [images]);
  if (!atRisk.length || !images.needs) return null;
  const n = atRisk.length;
  const source = needsSourceText(images.needs);
  return (
    <div className="banner banner-danger node-notice" role="region" aria-label="Needed images at risk on this node" data-testid="node-needs-banner">
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <strong>
          {n} needed {n === 1 ? 'image' : 'images'} at risk on {node}: a pod that needs {n === 1 ? 'it' : 'one'} may not start
        </strong>
        <span data-testid="node-needs-list">{atRiskText(atRisk)}</span>
        <span className="small">{source.text}</span>
      </div>
      <div className="banner-actions">
        <button type="button" className="btn btn-small" onClick={onShow} data-testid="node-needs-show">
          Show them
        </button>
      </div>
    </div>
  );
}

/** The rule's sentences mark commands with backticks: show those as code. */
function Sentence({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/);
  return <>{parts.map((p, i) => (i % 2 ? <code key={i}>{p}</code> : p))}</>;
}

function LostPinItem({ g, who, onRepin }: { g: LostPinGroup; who: string; onRepin(target: PinTarget, subject: string): void }) {
  const target = g.remedy.kind === 'repin' ? g.remedy.target : undefined;
  return (
    <li className="lost-pin" data-testid="lost-pin" data-kind={g.kind}>
      <div className="lost-pin-head">
        <code className="lost-pin-ref" title={g.refs.join('\n')}>
          {displayRef(g.refs[0]!)}
        </code>
        {g.refs.length > 1 ? <span className="muted small">+{g.refs.length - 1} more {g.refs.length === 2 ? 'reference' : 'references'}</span> : null}
        <span className="tag-lost">{lostPinKindText(g.kind, who)}</span>
      </div>
      <p className="lost-pin-summary">
        <Sentence text={g.summary} />
      </p>
      <p className="muted small" data-testid="lost-pin-when">
        Made durable by {g.pinnedBy} on {formatDateTime(g.pinnedAt)}
      </p>
      <details className="lost-pin-causes">
        <summary>Likely {g.causes.length === 1 ? 'cause' : 'causes'}</summary>
        <ul>
          {g.causes.map((c) => (
            <li key={c}>
              <Sentence text={c} />
            </li>
          ))}
        </ul>
      </details>
      <div className="lost-pin-remedy">
        <span data-testid="lost-pin-remedy">
          <Sentence text={proseText(g.remedy.text)} />
        </span>
        {target ? (
          <button type="button" className="btn btn-small btn-primary" onClick={() => onRepin(target, displayRef(target.refs[0]!))} data-testid="lost-pin-repin">
            Re-pin durably
          </button>
        ) : null}
      </div>
    </li>
  );
}

const SHOWN = 3;

export function LostPinsBanner({ node, onRepin }: { node: string; onRepin(target: PinTarget, subject: string): void }) {
  const lost = useApp((s) => lostPinsOf(s, node).items);
  const groups = useMemo(() => groupLostPins(lost), [lost]);
  const who = distroDisplayName(useApp((s) => statusOf(s, node).info?.distro) ?? 'unknown');
  const [all, setAll] = useState(false);
  if (!groups.length) return null;
  const n = lost.length;
  return (
    <section className="banner banner-danger node-notice lost-pins" aria-label="Pins lost behind Holdfast’s back" data-testid="lost-pins-banner">
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <strong>
          {n} durable {n === 1 ? 'pin' : 'pins'} Holdfast made {n === 1 ? 'is' : 'are'} gone
        </strong>
        <span>Something on the node removed {n === 1 ? 'it' : 'them'} since Holdfast made {n === 1 ? 'it' : 'them'} durable.</span>
        <ul className="lost-pin-list">
          {(all ? groups : groups.slice(0, SHOWN)).map((g) => (
            <LostPinItem key={g.key} g={g} who={who} onRepin={onRepin} />
          ))}
        </ul>
        {groups.length > SHOWN ? (
          <button type="button" className="btn btn-small" onClick={() => setAll((v) => !v)}>
            {all ? 'Show fewer' : `Show all ${groups.length}`}
          </button>
        ) : null}
      </div>
    </section>
  );
}
