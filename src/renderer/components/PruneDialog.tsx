// Plan → typed confirmation → apply → result for prune. The preview is the backend's own plan
// (prune.plan); apply sends exactly the previewed images, and the backend removes only those a
// fresh plan still allows, saying why for any it leaves.
import { useId, useState, type ReactNode } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { MAX_KEEP_VERSIONS, type PruneKeepReason, type PrunePlan, type PruneResult } from '../../shared/prunePlan';
import { useApp } from '../context';
import { displayRef } from '../model/refs';
import { formatBytes, shortDigest } from '../../shared/format';
import { imageName } from '../../shared/imageReference';
import { appProse } from '../appText';
import { AlertIcon, CheckIcon, InfoIcon, TrashIcon } from './icons';
import { Modal } from './Modal';
import { ApplyError, PlanPending, PreviewApplyActions } from './PreviewApplyActions';
import { usePlanApply } from './usePlanApply';

const KEEP_TEXT: Record<PruneKeepReason, string> = {
  'in-use': 'In use',
  needed: 'Needed by the site',
  pinned: 'Pinned',
  archive: 'Brought by the images dir',
  peers: 'Served to peer nodes',
  rollback: 'Kept for rollback',
  unresolved: 'Not identified',
};

function Kept({ plan }: { plan: PrunePlan }) {
  if (!plan.kept.length) return null;
  return (
    <details className="unchanged" data-testid="prune-kept">
      <summary>
        {plan.kept.length} {plan.kept.length === 1 ? 'image is' : 'images are'} kept, each with its reason
      </summary>
      <ul>
        {plan.kept.map((k) => (
          <li key={k.key} data-testid="prune-kept-item" data-reason={k.reason}>
            <code title={k.refs.join('\n')}>{displayRef(imageName(k.refs, k.key))}</code> <span className="tag">{KEEP_TEXT[k.reason]}</span>{' '}
            <span className="muted">— {appProse(k.text)}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}

function Removals({ items, testId }: { items: PrunePlan['remove']; testId: string }) {
  return (
    <ul className="changes" data-testid={testId}>
      {items.map((r) => (
        <li key={r.key} className="change" data-testid="prune-item" data-ref={imageName(r.refs, r.key)}>
          <div className="change-head">
            <code className="change-ref" title={r.refs.join('\n')}>
              {displayRef(imageName(r.refs, r.key))}
            </code>
            <span className="muted small">
              image {shortDigest(r.imageId)} · frees {formatBytes(r.bytes)}
            </span>
          </div>
          <ul className="label-diff" aria-label="References deleted">
            {r.refs.map((ref) => (
              <li key={ref} className="ld ld-removed">
                <span className="ld-sign" aria-hidden="true">
                  −
                </span>
                <code>{displayRef(ref)}</code>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

export function PruneDialog({ node, onClose }: { node: NodeDef; onClose(): void }) {
  const planPrune = useApp((s) => s.planPrune);
  const applyPrune = useApp((s) => s.applyPrune);
  const [keep, setKeep] = useState(DEFAULT_KEEP_VERSIONS);
  const [typed, setTyped] = useState('');
  const keepId = useId();
  const confirmId = useId();

  const { phase, busy, retry, planShown: plan, finished, apply: applyPlan } = usePlanApply<PrunePlan, PruneResult>(() => planPrune(node.name, keep), [node.name, keep, planPrune]);
  const close = () => {
    if (!busy) onClose();
  };
  const apply = (plan: PrunePlan) =>
    applyPlan(plan, () =>
      applyPrune(
        node.name,
        plan.keepVersions,
        plan.remove.map((r) => r.key),
        typed,
      ),
    );

  let body: ReactNode;
  if (phase.kind === 'planning' || phase.kind === 'failed') {
    body = <PlanPending phase={phase} working={`Working out which images ${node.name} can lose…`} testId="prune-loading" onRetry={retry} />;
  } else if (phase.kind === 'done') {
    const r = phase.result;
    body = (
      <>
        <div className={r.failed.length ? 'callout callout-warning' : 'callout callout-success'} role="status" data-testid="prune-done">
          <strong>
            {r.failed.length ? <AlertIcon /> : <CheckIcon />} Removed {r.removed.length} {r.removed.length === 1 ? 'image' : 'images'}: {formatBytes(r.freedBytes)} freed
          </strong>
          <p>Recorded in the node's log with every reference and digest. The disk picture and the images list have been refreshed.</p>
        </div>
        <Removals items={r.removed} testId="prune-removed" />
        {r.refused.length ? (
          <div className="callout callout-warning" data-testid="prune-refused">
            <strong>
              <AlertIcon /> Left in place
            </strong>
            <ul className="problems">
              {r.refused.map((x) => (
                <li key={x.key}>
                  <code>{displayRef(imageName(x.refs, x.key))}</code>: {appProse(x.text)}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {r.failed.length ? (
          <div className="callout callout-error" data-testid="prune-failed">
            <strong>
              <AlertIcon /> Failed
            </strong>
            <ul className="problems">
              {r.failed.map((x) => (
                <li key={x.key}>
                  <code>{displayRef(imageName(x.refs, x.key))}</code>: {x.error}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </>
    );
  } else {
    const plan = phase.plan;
    body = (
      <>
        <div className="prune-keep">
          <label htmlFor={keepId}>Keep the newest</label>
          <input
            id={keepId}
            type="number"
            min={1}
            max={MAX_KEEP_VERSIONS}
            value={keep}
            disabled={busy}
            onChange={(e) => {
              const n = Number(e.target.value);
              if (Number.isInteger(n) && n >= 1 && n <= MAX_KEEP_VERSIONS) setKeep(n);
            }}
            data-testid="prune-keep-versions"
          />
          <span>versions of every repository a container uses (rollback).</span>
        </div>
        <p className="plan-summary" data-testid="prune-summary">
          {plan.remove.length === 0
            ? 'Nothing to remove: every image is in use, pinned, brought by the images dir or kept for rollback.'
            : `${plan.remove.length} of ${plan.imagesBefore} images will be removed from ${node.name}, every reference of each, freeing ${formatBytes(plan.freedBytes)}:`}
        </p>
        {plan.remove.length ? <Removals items={plan.remove} testId="prune-preview" /> : null}
        <Kept plan={plan} />
        <p className="note">
          <InfoIcon />
          <span>
            Prune never unpins. To drop an obsolete version that is pinned, release its pin first (Images tab, or <code>holdfast unpin</code>), then prune.
          </span>
        </p>
        {plan.remove.length ? (
          <div className="confirm-type">
            <label htmlFor={confirmId}>
              An air-gapped site cannot pull these images again. Type <strong>{node.name}</strong> to remove them:
            </label>
            <input
              id={confirmId}
              type="text"
              autoComplete="off"
              spellCheck={false}
              value={typed}
              disabled={busy}
              onChange={(e) => setTyped(e.target.value)}
              data-testid="prune-confirm"
            />
          </div>
        ) : null}
        <ApplyError phase={phase} title="Not removed" />
      </>
    );
  }

  return (
    <Modal title="Prune unused images" onClose={close} testId="prune-dialog" className="modal-wide">
      <div className="modal-body">
        <p className="dialog-subject">
          {phase.kind === 'done' ? 'Done on' : 'Preview for'} <strong>{node.name}</strong>.{phase.kind !== 'done' ? ' Nothing changes until you remove.' : ''}
        </p>
        {body}
      </div>
      <PreviewApplyActions
        finished={finished}
        busy={busy}
        canApply={!!plan && plan.remove.length > 0 && typed === node.name}
        onApply={() => plan && void apply(plan)}
        onCancel={close}
        onClose={onClose}
        label={plan ? `Remove ${plan.remove.length} ${plan.remove.length === 1 ? 'image' : 'images'}` : 'Remove'}
        busyLabel="Removing…"
        icon={<TrashIcon />}
        danger
        testId="apply-prune"
      />
    </Modal>
  );
}
