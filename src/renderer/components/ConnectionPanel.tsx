import { useState } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { ErrorNote, nodeMessage } from './ErrorCallout';
import { AlertIcon, KeyIcon } from './icons';

function Fingerprint({ label, value, testId }: { label: string; value: string | undefined; testId: string }) {
  return (
    <div className="fp">
      <span className="fp-label">{label}</span>
      <code className="fp-value" data-testid={testId}>
        {value ?? 'not reported'}
      </code>
    </div>
  );
}

/** Shown instead of the images when the node is not connected. */
export function ConnectionPanel({ node, error, onCancel }: { node: NodeDef; error: ErrorInfo; onCancel(): void }) {
  const connect = useApp((s) => s.connect);
  const trustAndConnect = useApp((s) => s.trustAndConnect);
  const [busy, setBusy] = useState(false);
  const [trustError, setTrustError] = useState<ErrorInfo | null>(null);
  const where = `${node.host}${node.port !== 22 ? `:${node.port}` : ''}`;

  if (error.code === 'HOST_KEY_UNKNOWN') {
    return (
      <section className="panel panel-warning" aria-labelledby="hk-title" data-testid="host-key-unknown">
        <div className="panel-icon">
          <KeyIcon />
        </div>
        <div className="panel-body">
          <h2 id="hk-title">Unknown host key</h2>
          <p>
            <strong>{where}</strong> presented a host key that is not in your known_hosts file yet. Before you trust it,
            compare the fingerprint with the one the node itself reports (on its console:{' '}
            <code>ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub</code>).
          </p>
          <Fingerprint label="SHA256 fingerprint" value={error.fingerprint} testId="fingerprint" />
          <ErrorNote error={trustError} />
          <div className="panel-actions">
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy || !error.fingerprint}
              onClick={async () => {
                if (!error.fingerprint) return;
                setBusy(true);
                setTrustError(await trustAndConnect(node.name, error.fingerprint));
                setBusy(false);
              }}
            >
              {busy ? 'Trusting…' : 'Trust this host'}
            </button>
            <button type="button" className="btn" onClick={onCancel} disabled={busy}>
              Cancel
            </button>
          </div>
        </div>
      </section>
    );
  }

  if (error.code === 'HOST_KEY_CHANGED') {
    return (
      <section className="panel panel-danger" role="alert" aria-labelledby="hkc-title" data-testid="host-key-changed">
        <div className="panel-icon">
          <AlertIcon />
        </div>
        <div className="panel-body">
          <h2 id="hkc-title">Host key changed — connection blocked</h2>
          {/* Each thing once: the two fingerprints in their rows (the error's message says them
              too), what it can mean and what to do in the hint; the message only when there is
              no hint (a key that changed during a session). */}
          <p>
            The key <strong>{where}</strong> presented differs from the one on record. Holdfast will not connect.
          </p>
          <Fingerprint label="On record" value={error.expectedFingerprint} testId="expected-fingerprint" />
          <Fingerprint label="Presented now" value={error.fingerprint} testId="fingerprint" />
          <p className="hint">{nodeMessage(error.hint ?? error.message)}</p>
          <div className="panel-actions">
            <button type="button" className="btn" onClick={() => void connect(node.name)}>
              Retry
            </button>
          </div>
        </div>
      </section>
    );
  }

  return (
    <section className="panel panel-danger" role="alert" aria-labelledby="ce-title" data-testid="connection-error">
      <div className="panel-icon">
        <AlertIcon />
      </div>
      <div className="panel-body">
        <h2 id="ce-title">Could not connect to {node.name}</h2>
        <p className="error-message">{nodeMessage(error.message)}</p>
        {error.hint ? <p className="hint">{error.hint}</p> : null}
        <p className="error-code">
          Error code <code>{error.code}</code>
        </p>
        <div className="panel-actions">
          <button type="button" className="btn btn-primary" onClick={() => void connect(node.name)}>
            Retry
          </button>
        </div>
      </div>
    </section>
  );
}
