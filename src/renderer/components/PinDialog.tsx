// Preview → Apply → Result for a pin or unpin. The preview is the backend's own plan
// (pins.plan): exactly the references and labels pins.apply will write, nothing guessed here.
import type { ReactNode } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import type { LabelChange, PinPlan, PinTarget } from '../../shared/domain/pins';
import { distroDisplayName } from '../../shared/distro';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import { useApp } from '../context';
import { statusOf } from '../store';
import { diffLabels } from '../model/labels';
import { displayRef } from '../model/refs';
import { visibleControls } from '../../shared/visibleControls';
import { pinState } from '../../shared/pinState';
import { shortDigest } from '../../shared/format';
import type { PinAction } from '../store';
import { AlertIcon, ArrowRightIcon, CheckIcon, InfoIcon } from './icons';
import { Modal } from './Modal';
import { PinBadge } from './PinBadge';
import { ApplyError, PlanPending, PreviewApplyActions } from './PreviewApplyActions';
import { usePlanApply } from './usePlanApply';

export interface PinRequest {
  action: PinAction;
  target: PinTarget;
  /** Dialog title, e.g. "Make nginx:1.27 durable". */
  title: string;
  /** What was selected, in words ("the images of archive apps.tar.gz"). */
  subject: string;
}

function ChangeRow({ change, who }: { change: LabelChange; who: string }) {
  const before = pinState(change.before);
  const after = pinState(change.after);
  const diffs = diffLabels(change.before, change.after);
  return (
    <li className="change" data-testid="plan-change">
      <div className="change-head">
        <code className="change-ref" title={change.ref}>
          {displayRef(change.ref)}
        </code>
        <span className="change-pins" aria-label={`pin ${before} to ${after}`}>
          <PinBadge pin={before} who={who} />
          <ArrowRightIcon className="change-arrow" />
          <PinBadge pin={after} who={who} />
        </span>
      </div>
      {diffs.length ? (
        <ul className="label-diff" aria-label="Label changes">
          {diffs.map((d) => (
            <li key={d.key} className={`ld ld-${d.kind}`} data-testid="label-diff" data-kind={d.kind}>
              <span className="ld-sign" aria-hidden="true">
                {d.kind === 'added' ? '+' : d.kind === 'removed' ? '−' : '~'}
              </span>
              <span className="visually-hidden">{d.kind === 'added' ? 'adds ' : d.kind === 'removed' ? 'removes ' : 'changes '}</span>
              <code>
                {d.key}
                {d.kind === 'added' ? `=${d.after}` : d.kind === 'removed' ? `=${d.before}` : `: ${d.before} → ${d.after}`}
              </code>
            </li>
          ))}
        </ul>
      ) : null}
      {change.imageId ? <span className="muted small change-id">image {shortDigest(change.imageId)}</span> : null}
    </li>
  );
}

/** The plan's changes, each reference's pin before and after named for the node's distro (`who`: shared/distro distroDisplayName). */
export function PlanView({ plan, applied, who }: { plan: PinPlan; applied?: boolean; who: string }) {
  const n = plan.changes.length;
  return (
    <div className="plan" data-testid={applied ? 'plan-result' : 'plan-preview'}>
      <p className="plan-summary" data-testid="plan-summary">
        {n === 0
          ? 'Nothing to change.'
          : applied
            ? `${n} ${n === 1 ? 'reference was' : 'references were'} changed on ${plan.node}.`
            : `${n} ${n === 1 ? 'reference' : 'references'} will change on ${plan.node}:`}
      </p>
      {n ? (
        <ul className="changes">
          {plan.changes.map((c) => (
            <ChangeRow key={c.ref} change={c} who={who} />
          ))}
        </ul>
      ) : null}
      {plan.warnings?.length ? (
        // What hands the pins back to k3s (a .txt list: shared/listTrap), as the CLI's pin warns.
        <div className="banner banner-warning" data-testid="plan-warnings">
          <AlertIcon className="banner-icon" />
          <div className="banner-text">
            <strong>{applied ? 'These pins will not stay durable:' : 'These pins would not stay durable:'}</strong>
            {plan.warnings.map((w) => (
              <span key={w} data-testid="plan-warning">
                {w}
              </span>
            ))}
          </div>
        </div>
      ) : null}
      {plan.unchanged.length ? (
        <details className="unchanged" open={n === 0}>
          <summary>
            {plan.unchanged.length} {plan.unchanged.length === 1 ? 'reference' : 'references'} left as they are
          </summary>
          <ul>
            {plan.unchanged.map((u) => (
              <li key={u.ref} data-testid="plan-unchanged">
                <code title={visibleControls(u.ref)}>{displayRef(u.ref)}</code> <span className="muted">— {u.reason}</span>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** What making pins durable does, naming the node's distro (`who`: shared/distro distroDisplayName). */
export function DurableNote({ who, imagesDir }: { who: string; imagesDir: string }) {
  return (
    <p className="note">
      <InfoIcon />
      <span>
        Holdfast removes the {who} label and keeps <code>io.cri-containerd.pinned</code>: {who} never touches that pin
        again. While an archive that brings these images stays in <code>{imagesDir}</code>, the next {who} start
        re-imports it and adds the {who} label back — remove the archive safely afterwards.
      </span>
    </p>
  );
}

export function PinDialog({ node, request, onClose }: { node: NodeDef; request: PinRequest; onClose(): void }) {
  const requestPinPlan = useApp((s) => s.requestPinPlan);
  const applyPinsAndRefresh = useApp((s) => s.applyPinsAndRefresh);
  const info = useApp((s) => statusOf(s, node.name).info);
  const who = distroDisplayName(info?.distro ?? 'unknown');
  const notHonoured = request.action === 'pin' ? pinNotHonoured(node.name, info) : null;
  const { phase, busy, retry, planShown: plan, finished, apply: applyPlan } = usePlanApply<PinPlan, PinPlan>(() => requestPinPlan(node.name, request.action, request.target), [node.name, request, requestPinPlan]);
  const close = () => {
    if (!busy) onClose();
  };
  const apply = (plan: PinPlan) => applyPlan(plan, () => applyPinsAndRefresh(node.name, request.action, request.target));

  let body: ReactNode;
  if (phase.kind === 'planning' || phase.kind === 'failed') {
    body = <PlanPending phase={phase} working={`Working out what will change on ${node.name}…`} testId="plan-loading" onRetry={retry} />;
  } else if (phase.kind === 'done') {
    body = (
      <>
        <div className="callout callout-success" role="status" data-testid="apply-done">
          <strong>
            <CheckIcon /> {request.action === 'pin' ? 'Pins made durable.' : 'Durable pins released.'}
          </strong>
          <p>The images list has been refreshed from the node.</p>
        </div>
        <PlanView plan={phase.result} applied who={who} />
      </>
    );
  } else {
    body = (
      <>
        <PlanView plan={phase.plan} who={who} />
        {phase.plan.changes.length ? (
          request.action === 'pin' ? (
            <DurableNote who={who} imagesDir={node.imagesDir} />
          ) : (
            <p className="note note-warning">
              <AlertIcon />
              <span>
                Once unpinned, kubelet image garbage collection may delete these images. At an air-gapped site they
                cannot be pulled again.
              </span>
            </p>
          )
        ) : null}
        {notHonoured ? (
          <p className="note note-warning" data-testid="pin-not-honoured">
            <AlertIcon />
            <span>{notHonoured}</span>
          </p>
        ) : null}
        <ApplyError phase={phase} title="Not applied" />
      </>
    );
  }

  return (
    <Modal title={request.title} onClose={close} testId="pin-dialog" className="modal-wide">
      <div className="modal-body">
        <p className="dialog-subject">
          {phase.kind === 'done' ? 'Applied to' : 'Preview for'} {request.subject} on <strong>{node.name}</strong>.
          {phase.kind !== 'done' ? ' Nothing changes until you apply.' : ''}
        </p>
        {body}
      </div>
      <PreviewApplyActions
        finished={finished}
        busy={busy}
        canApply={!!plan && plan.changes.length > 0}
        onApply={() => plan && void apply(plan)}
        onCancel={close}
        onClose={onClose}
        label={plan ? `Apply ${plan.changes.length} ${plan.changes.length === 1 ? 'change' : 'changes'}` : 'Apply'}
        busyLabel="Applying…"
        testId="apply-pins"
      />
    </Modal>
  );
}
