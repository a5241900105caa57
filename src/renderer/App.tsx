import { useEffect, useState } from 'react';
import { useApp } from './context';
import { ConfirmDialog } from './components/ConfirmDialog';
import { CredentialsPrompt } from './components/CredentialsDialog';
import { FleetMatrix } from './components/FleetMatrix';
import { FleetOverview } from './components/FleetOverview';
import { PlusIcon } from './components/icons';
import { ImportWizard } from './components/importWizard/ImportWizard';
import { JobsPanel } from './components/JobsPanel';
import { NodeDetail } from './components/NodeDetail';
import { NodeForm } from './components/NodeForm';
import { PinAlerts } from './components/PinAlerts';
import { Sidebar } from './components/Sidebar';

type DialogState = { kind: 'add' } | { kind: 'edit'; name: string } | { kind: 'remove'; name: string } | null;

export function App() {
  const init = useApp((s) => s.init);
  const nodes = useApp((s) => s.nodes);
  const nodesState = useApp((s) => s.nodesState);
  const selected = useApp((s) => s.selected);
  const addNode = useApp((s) => s.addNode);
  const updateNode = useApp((s) => s.updateNode);
  const removeNode = useApp((s) => s.removeNode);
  const view = useApp((s) => s.view);
  const jobsOpen = useApp((s) => s.jobsOpen);
  const startJobPolling = useApp((s) => s.startJobPolling);
  const startLive = useApp((s) => s.startLive);
  const [dialog, setDialog] = useState<DialogState>(null);

  useEffect(() => {
    void init();
  }, [init]);
  // Live events (node changes, connection drops, job progress) push updates; the job poll is
  // only a slow safety net once they flow.
  useEffect(() => startLive(), [startLive]);
  useEffect(() => startJobPolling(), [startJobPolling]);

  const node = nodes.find((n) => n.name === selected);
  const dialogNode = dialog && dialog.kind !== 'add' ? nodes.find((n) => n.name === dialog.name) : undefined;
  const close = () => setDialog(null);

  return (
    <div className="app">
      <Sidebar onAdd={() => setDialog({ kind: 'add' })} />
      {view === 'import' ? (
        <ImportWizard />
      ) : view === 'matrix' ? (
        <FleetMatrix />
      ) : view === 'fleet' ? (
        <FleetOverview onAdd={() => setDialog({ kind: 'add' })} />
      ) : node ? (
        <NodeDetail
          key={node.name}
          node={node}
          onEdit={() => setDialog({ kind: 'edit', name: node.name })}
          onRemove={() => setDialog({ kind: 'remove', name: node.name })}
        />
      ) : (
        <main className="detail detail-empty">
          {nodesState === 'ready' ? (
            <div className="empty">
              <p className="empty-title">No node selected</p>
              <p className="muted">
                {nodes.length === 0
                  ? 'Add a node by its SSH address to see its containerd images and their pin state.'
                  : 'Choose a node in the list.'}
              </p>
              {nodes.length === 0 ? (
                <button type="button" className="btn btn-primary" onClick={() => setDialog({ kind: 'add' })}>
                  <PlusIcon /> Add node
                </button>
              ) : null}
            </div>
          ) : null}
        </main>
      )}

      {jobsOpen ? <JobsPanel /> : null}
      {dialog?.kind === 'add' ? <NodeForm nodes={nodes} onSubmit={addNode} onClose={close} /> : null}
      {dialog?.kind === 'edit' && dialogNode ? (
        <NodeForm nodes={nodes} initial={dialogNode} onSubmit={(input) => updateNode(dialogNode.name, input)} onClose={close} />
      ) : null}
      {dialog?.kind === 'remove' && dialogNode ? (
        <ConfirmDialog
          title={`Remove ${dialogNode.name}?`}
          confirmLabel="Remove node"
          danger
          onConfirm={() => removeNode(dialogNode.name)}
          onClose={close}
        >
          <p>
            Holdfast forgets this node's connection settings. Nothing on the node changes: its images and pins stay as
            they are.
          </p>
        </ConfirmDialog>
      ) : null}
      <PinAlerts />
      {/* Last, so a secret asked while another dialog is open comes on top of it. */}
      <CredentialsPrompt />
    </div>
  );
}
