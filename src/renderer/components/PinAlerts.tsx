// Live alerts for pins lost while the app watches (node.changed events of topic pins.lost):
// which pin went, on which node, when Holdfast had made it durable; open the node for the
// causes and the remedy. Shown over every view until dismissed.
import { useApp } from '../context';
import { lostPinLine } from '../model/lostPins';
import { statusOf } from '../store';
import { distroDisplayName } from '../../shared/distro';
import { AlertIcon, CrossIcon } from './icons';

const SHOWN = 3;

export function PinAlerts() {
  const alerts = useApp((s) => s.pinAlerts);
  const dismiss = useApp((s) => s.dismissPinAlert);
  const select = useApp((s) => s.select);
  // Each alert's node's distro as the text names it (one string: a stable selection).
  const whos = useApp((s) => s.pinAlerts.map((a) => distroDisplayName(statusOf(s, a.node).info?.distro ?? 'unknown')).join('\n')).split('\n');
  if (!alerts.length) return null;
  return (
    <div className="pin-alerts" role="alert" aria-live="assertive" data-testid="pin-alerts">
      {alerts.slice(-3).map((a, i, shown) => (
        <div key={a.id} className="pin-alert" data-testid="pin-alert" data-node={a.node}>
          <AlertIcon className="banner-icon" />
          <div className="pin-alert-text">
            <strong>
              {a.lost.length === 1 ? 'A durable pin' : `${a.lost.length} durable pins`} just disappeared on {a.node}
            </strong>
            <ul>
              {a.lost.slice(0, SHOWN).map((l) => (
                <li key={`${l.ref}\0${l.kind}`}>{lostPinLine(l, whos[alerts.length - shown.length + i])}</li>
              ))}
              {a.lost.length > SHOWN ? <li className="muted">and {a.lost.length - SHOWN} more</li> : null}
            </ul>
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                select(a.node);
                dismiss(a.id);
              }}
            >
              Open {a.node}
            </button>
          </div>
          <button type="button" className="btn btn-icon" aria-label="Dismiss" onClick={() => dismiss(a.id)}>
            <CrossIcon />
          </button>
        </div>
      ))}
    </div>
  );
}
