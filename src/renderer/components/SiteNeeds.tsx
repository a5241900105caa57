// "Will a pod at this site fail?" on a node's views: each image's site-need verdict as a badge,
// the workloads that need it, and the banner over the images table — where the needs come from,
// the needed images at risk (missing ones with where a copy is) and the one action that makes
// every needed image durable. The verdicts are the core's (ImageRef.need, NeedsReport), read
// through the one rule's atRiskOf (needsView.ts); nothing here judges an image.
import { useMemo, useState } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import { verificationRemedyText, type AtRiskImage, type NeedVerdict, type RefNeed } from '../../shared/needs';
import type { Workload } from '../../shared/workloads';
import { atRiskName, isAtRisk, NEED_VERDICT_TEXT, needsNotes, needsSourceText, nodeAtRisk, sortAtRisk, workloadLine, workloadsForDisplay } from '../needsView';
import type { ImagesState } from '../store';
import { AlertIcon, CrossIcon, InfoIcon, ShieldIcon, SlashIcon } from './icons';
import type { PinRequest } from './PinDialog';
import { RefText } from './RefText';

/** The one request behind "Make every needed image durable" (contract pinTargetSchema `{ needed: true }`). */
export const NEEDED_PIN_REQUEST: PinRequest = {
  action: 'pin',
  target: { needed: true },
  title: 'Make every needed image durable',
  subject: 'every image the site needs',
};

function VerdictIcon({ verdict }: { verdict: NeedVerdict }) {
  if (verdict === 'missing') return <CrossIcon />;
  if (isAtRisk(verdict)) return <AlertIcon />;
  if (verdict === 'protected') return <ShieldIcon />;
  return <SlashIcon />;
}

/** A site-need verdict as icon + text (never colour alone); the reason as its tooltip. */
export function NeedBadge({ verdict, because }: { verdict: NeedVerdict; because?: string }) {
  return (
    <span className={`need need-${verdict}${isAtRisk(verdict) ? ' need-at-risk' : ''}`} title={because} data-testid="need-badge" data-verdict={verdict}>
      <VerdictIcon verdict={verdict} />
      {NEED_VERDICT_TEXT[verdict]}
    </span>
  );
}

const WORKLOADS_SHOWN = 4;

/** Who needs an image, controllers first. */
export function WorkloadList({ workloads }: { workloads: readonly Workload[] }) {
  const [all, setAll] = useState(false);
  const list = useMemo(() => workloadsForDisplay(workloads), [workloads]);
  if (!list.length) return null;
  const shown = all ? list : list.slice(0, WORKLOADS_SHOWN);
  return (
    <ul className="need-workloads" data-testid="need-workloads">
      {shown.map((w) => (
        <li key={`${w.kind}/${w.namespace}/${w.name}`} data-testid="need-workload">
          <code>{workloadLine(w)}</code>
        </li>
      ))}
      {list.length > shown.length ? (
        <li>
          <button type="button" className="link-button" onClick={() => setAll(true)}>
            and {list.length - shown.length} more
          </button>
        </li>
      ) : null}
    </ul>
  );
}

/** The "Site need" part of an image's details. */
export function NeedDetails({ need }: { need: RefNeed | null }) {
  if (!need) return null;
  return (
    <div className={`details-need${need.atRisk ? ' details-need-risk' : ''}`} data-testid="need-details">
      <NeedBadge verdict={need.verdict} />
      <p data-testid="need-because">{need.because}</p>
      <WorkloadList workloads={need.workloads} />
    </div>
  );
}

/** One needed image at risk, in the banner's list. */
function AtRiskItem({ a }: { a: AtRiskImage }) {
  const name = atRiskName(a);
  const who = workloadsForDisplay(a.workloads)[0];
  return (
    <li className="needs-item" data-testid="needs-item" data-verdict={a.verdict} data-ref={name}>
      <code className="needs-item-ref" title={a.refs.join('\n')}>
        <RefText name={name} />
      </code>
      <NeedBadge verdict={a.verdict} because={a.because} />
      <span className="needs-item-why" title={a.because}>
        {who ? `${workloadLine(who)}${a.workloads.length > 1 ? ` +${a.workloads.length - 1}` : ''}` : a.because.split(';')[0]}
      </span>
      {a.verdict === 'missing' ? (
        <span className="needs-item-copy" data-testid="needs-held-by">
          {a.heldBy?.length ? `A copy: ${a.heldBy.join(', ')}` : 'No copy in the images dir: import it'}
        </span>
      ) : null}
    </li>
  );
}

const ITEMS_SHOWN = 4;

/**
 * Above the images table: where the node's needs come from, and when needed images are at risk,
 * which (missing ones with where a copy is) and the button that previews pinning all of them.
 */
export function NeedsBanner({ node, images, onPin, who = 'k3s' }: { node: NodeDef; images: ImagesState; onPin(request: PinRequest): void; who?: string }) {
  const [all, setAll] = useState(false);
  const report = images.needs;
  const atRisk = useMemo(() => sortAtRisk(nodeAtRisk(images) ?? []), [images]);
  if (!images.loadedAt || !report) return null;
  const source = needsSourceText(report);
  const notes = needsNotes(report);
  // The info icon marks an unknown source, once: in the one-line case the line's own icon does.
  const sourceLine = (icon: boolean) => (
    <span className={`needs-source${source.known ? '' : ' needs-source-none'}`} data-testid="needs-source" data-known={source.known}>
      {source.known || !icon ? null : <InfoIcon />}
      {source.text}
    </span>
  );
  const noteLines = notes.map((n) => (
    <span key={n} className="needs-note" data-testid="needs-note">
      {n}
    </span>
  ));
  if (atRisk.length === 0) {
    return (
      <div className={`needs-line${source.known ? '' : ' needs-line-warn'}`} role="status" data-testid="needs-ok">
        {source.known ? <ShieldIcon /> : <InfoIcon />}
        <span className="needs-line-text">
          {sourceLine(false)}
          <span> · every needed image is on {node.name} and stays kept.</span>
          {noteLines}
        </span>
      </div>
    );
  }
  const n = atRisk.length;
  const pinnable = atRisk.some((a) => a.pinnable);
  const shown = all ? atRisk : atRisk.slice(0, ITEMS_SHOWN);
  return (
    <section className="banner banner-danger needs-banner" aria-label="Needed images at risk" data-testid="needs-banner">
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <p className="needs-head">
          <strong data-testid="needs-headline">
            {n} needed {n === 1 ? 'image' : 'images'} at risk
          </strong>
          <span> — a pod that needs {n === 1 ? 'it' : 'one'} may not start</span>
        </p>
        {sourceLine(true)}
        <ul className="needs-list">
          {shown.map((a) => (
            <AtRiskItem key={a.refs.join('\n')} a={a} />
          ))}
        </ul>
        {atRisk.length > ITEMS_SHOWN ? (
          <button type="button" className="link-button needs-more" onClick={() => setAll((v) => !v)} data-testid="needs-show-all">
            {all ? 'Show fewer' : `Show all ${atRisk.length}`}
          </button>
        ) : null}
        {report.verification ? (
          <span className="needs-note" data-testid="needs-verification">
            {verificationRemedyText(report.verification, who)}
          </span>
        ) : null}
        {noteLines}
      </div>
      {pinnable ? (
        <div className="banner-actions">
          <button type="button" className="btn btn-small btn-danger" onClick={() => onPin(NEEDED_PIN_REQUEST)} data-testid="make-needed-durable">
            <ShieldIcon /> Make every needed image durable
          </button>
        </div>
      ) : null}
    </section>
  );
}
