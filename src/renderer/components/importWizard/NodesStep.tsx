// Step 3 of the import wizard: the target nodes (with their connection status), how the images
// reach them (through the images dir, or straight into containerd) and the options (durable pins,
// remove the archive once safely pinned), what will happen, then start the imports. Each node
// says what it already holds of the archives' images; only nodes that lack one start ticked.
import { useEffect, useId, useMemo, useRef } from 'react';
import { holdingsText, holdsEverything } from '../../../shared/archiveHoldings';
import { consistentImportOptions } from '../../../shared/importOptions';
import { useApp } from '../../context';
import { importHoldings, wizardNodes } from '../../store';
import { importStepsText } from '../../model/jobs';
import { AlertIcon, CheckIcon, UploadIcon } from '../icons';
import { StatusDot, statusText } from '../Sidebar';
import { StartErrors } from './StartErrors';

export function NodesStep({ onBack }: { onBack(): void }) {
  const nodes = useApp((s) => s.nodes);
  const wizard = useApp((s) => s.wizard);
  const statuses = useApp((s) => s.statuses);
  const images = useApp((s) => s.images);
  const fleetRun = useApp((s) => s.fleetRun);
  const setWizard = useApp((s) => s.setWizard);
  const startImports = useApp((s) => s.startImports);
  const loadImages = useApp((s) => s.loadImages);
  const allRef = useRef<HTMLInputElement>(null);
  // What each node holds (its images as last read), and the ticks: the user's, else every
  // reachable node that lacks something (store/wizard.ts wizardNodes), following the
  // inventories as they arrive.
  const held = useMemo(() => importHoldings({ nodes, images, fleetRun, wizard }), [nodes, images, fleetRun, wizard]);
  const picked = useMemo(() => wizardNodes({ nodes, statuses, images, fleetRun, wizard }), [nodes, statuses, images, fleetRun, wizard]);
  const chosen = new Set(picked.filter((n) => nodes.some((d) => d.name === n)));
  const all = nodes.length > 0 && chosen.size === nodes.length;
  const some = chosen.size > 0 && !all;
  const ready = wizard.archives.filter((a) => a.state === 'ok').length;
  const removeReasonId = useId();
  const deliveryName = useId();
  // What will be sent: the shared rule decides (a direct delivery always pins, removes nothing).
  const options = consistentImportOptions(wizard);
  // Nodes whose connection failed start unticked (store/wizard.ts eligibleNodes): say so.
  const leftOut = nodes.filter((n) => statuses[n.name]?.state === 'error' && !chosen.has(n.name)).map((n) => n.name);
  // Nodes that hold every image start unticked too: say so.
  const holdAll = wizard.nodesChosen
    ? []
    : nodes.filter((n) => statuses[n.name]?.state !== 'error' && !chosen.has(n.name) && holdsEverything(held[n.name] ?? { known: false })).map((n) => n.name);

  // Read the images of connected nodes never read, so each can say what it holds.
  useEffect(() => {
    for (const n of nodes) if (statuses[n.name]?.state === 'connected' && !images[n.name]) void loadImages(n.name);
  }, [nodes, statuses, images, loadImages]);

  useEffect(() => {
    if (allRef.current) allRef.current.indeterminate = some;
  }, [some]);

  const toggle = (name: string, on: boolean) => setWizard({ nodes: on ? [...chosen, name] : [...chosen].filter((n) => n !== name) });

  return (
    <section className="wizard-step" aria-labelledby="step-title">
      <h2 id="step-title" className="step-title" tabIndex={-1}>
        Choose the nodes
      </h2>
      <fieldset className="node-pick">
        <legend className="visually-hidden">Nodes to import to</legend>
        <label className="check check-all">
          <input ref={allRef} type="checkbox" checked={all} onChange={(e) => setWizard({ nodes: e.target.checked ? nodes.map((n) => n.name) : [] })} />
          <span>Select all ({nodes.length})</span>
        </label>
        <ul className="node-checks">
          {nodes.map((n) => {
            const status = statuses[n.name] ?? { name: n.name, state: 'unknown' as const };
            const h = held[n.name] ?? { known: false as const };
            return (
              <li key={n.name}>
                <label className="check node-check" data-testid={`pick-node-${n.name}`}>
                  <input type="checkbox" checked={chosen.has(n.name)} onChange={(e) => toggle(n.name, e.target.checked)} />
                  <span className="node-check-text">
                    <strong>{n.name}</strong>
                    <span className="mono small muted">
                      {n.user}@{n.host}
                      {n.port !== 22 ? `:${n.port}` : ''}
                    </span>
                    {ready ? (
                      <span className="small muted node-holds" data-testid="node-holds" data-lacking={h.known ? h.lacking.length : undefined}>
                        {holdingsText(h)}
                      </span>
                    ) : null}
                  </span>
                  <span className={`node-check-status state-${status.state}`}>
                    <StatusDot state={status.state} /> {statusText(status)}
                  </span>
                </label>
              </li>
            );
          })}
        </ul>
        {nodes.length === 0 ? <p className="muted">No nodes configured yet: add one first.</p> : null}
        {leftOut.length ? (
          <p className="muted small" data-testid="nodes-left-out">
            Not ticked: {leftOut.join(', ')} ({leftOut.length === 1 ? 'its connection' : 'their connections'} failed). Tick{' '}
            {leftOut.length === 1 ? 'it' : 'them'} to try anyway.
          </p>
        ) : null}
        {holdAll.length ? (
          <p className="muted small" data-testid="nodes-hold-all">
            Not ticked: {holdAll.join(', ')} ({holdAll.length === 1 ? 'it holds' : 'they hold'} every image already). Tick{' '}
            {holdAll.length === 1 ? 'it' : 'them'} to import anyway.
          </p>
        ) : null}
      </fieldset>
      {[...chosen].some((n) => statuses[n]?.state === 'error') ? (
        <div className="note note-warning">
          <AlertIcon />
          <span>Some chosen nodes are not connected now. Holdfast connects again when the import starts; if that fails, that node's part fails and the others go on.</span>
        </div>
      ) : null}

      <fieldset className="options" data-testid="delivery">
        <legend>How the images reach each node</legend>
        <label className={`check option${options.direct ? '' : ' option-chosen'}`}>
          <input type="radio" name={deliveryName} checked={!options.direct} onChange={() => setWizard({ direct: false })} />
          <span>
            <strong>Through the images dir (k3s imports it)</strong>
            <span className="help">The whole archive is uploaded to the node's images dir and k3s's watcher imports it.</span>
          </span>
        </label>
        <label className={`check option${options.direct ? ' option-chosen' : ''}`}>
          <input type="radio" name={deliveryName} checked={options.direct === true} onChange={() => setWizard({ direct: true })} />
          <span>
            <strong>Straight into containerd</strong>
            <span className="help">No file on the node: only the layers a node lacks are sent, and its images are pinned durably.</span>
          </span>
        </label>
      </fieldset>

      <fieldset className="options">
        <legend>Options</legend>
        {options.direct ? (
          <div className="option option-implied" data-testid="pin-implied">
            <CheckIcon className="st-icon st-ok" />
            <span>
              <strong>Pins made durable</strong>
              <span className="help">
                Always, with a direct delivery: each image keeps only <code>io.cri-containerd.pinned</code>, which k3s never strips
                and kubelet never garbage-collects. No archive lands on the node, so there is none to remove.
              </span>
            </span>
          </div>
        ) : (
          <>
            <label className="check option">
              <input type="checkbox" checked={wizard.pin} onChange={(e) => setWizard({ pin: e.target.checked, removeArchive: e.target.checked })} />
              <span>
                <strong>Make pins durable</strong>
                <span className="help">
                  After k3s imports the archive, its images keep only <code>io.cri-containerd.pinned</code>: k3s never strips that
                  pin at a restart, and kubelet never garbage-collects the images.
                </span>
              </span>
            </label>
            <label className={`check option${wizard.pin ? '' : ' option-disabled'}`}>
              <input
                type="checkbox"
                checked={wizard.pin && wizard.removeArchive}
                disabled={!wizard.pin}
                aria-describedby={removeReasonId}
                onChange={(e) => setWizard({ removeArchive: e.target.checked })}
              />
              <span>
                <strong>Remove the archive after it is safely pinned</strong>
                <span className="help" id={removeReasonId}>
                  {wizard.pin
                    ? 'Frees the disk and stops the next k3s start from re-importing it (which would turn durable pins back into k3s pins). Only removed once every image is complete and durably pinned.'
                    : 'Needs durable pins: without them, removing the archive means the images lose their pin at the next k3s start.'}
                </span>
              </span>
            </label>
          </>
        )}
      </fieldset>
      <p className="muted small import-plan" data-testid="import-plan">
        {importStepsText(options)}
      </p>
      <StartErrors />

      <div className="wizard-actions">
        <button type="button" className="btn" onClick={onBack}>
          Back
        </button>
        <div className="spacer" />
        <button type="button" className="btn btn-primary" disabled={chosen.size === 0 || ready === 0 || wizard.starting} onClick={() => void startImports()}>
          <UploadIcon />
          {wizard.starting
            ? 'Starting…'
            : `Import ${ready} ${ready === 1 ? 'archive' : 'archives'} to ${chosen.size} ${chosen.size === 1 ? 'node' : 'nodes'}`}
        </button>
      </div>
    </section>
  );
}
