// Pin state of one image reference, from its labels alone (pure; see docs/k3s-facts.md, "Losing a
// pin, and the durable pin"). The one rule for the core (image lists, live watch, prune, lost
// pins) and the app (pin dialogs, log).
import { DISTRO_PIN_LABELS, LABEL_CRI_PINNED, PINNED } from './domain/labels';
import type { PinState } from './domain/pins';

export function pinState(labels: Readonly<Record<string, string>>): PinState {
  // A distro label means k3s/RKE2 manages the pin and strips it at its next start, whatever
  // the CRI label says.
  if (DISTRO_PIN_LABELS.some((k) => labels[k] !== undefined)) return 'distro';
  if (labels[LABEL_CRI_PINNED] === PINNED) return 'durable';
  return 'none';
}
