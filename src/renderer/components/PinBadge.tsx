import type { PinState } from '../../shared/domain/pins';
import { pinStateWords } from '../../shared/wording';
import { ClockIcon, ShieldIcon, SlashIcon } from './icons';

/**
 * Pin state as colour + icon + text (never colour alone). "mixed" (the image's references do not
 * all carry the same pin) goes on a line under the pill, so the pill never outgrows its column.
 * `who` names the node's distro in the distro's pin ("RKE2 pin"): required, so no view says
 * "k3s pin" on an RKE2 node by default (shared/wording pinStateWords).
 */
export function PinBadge({ pin, mixed, who }: { pin: PinState; mixed?: boolean; who: string }) {
  const Icon = pin === 'durable' ? ShieldIcon : pin === 'distro' ? ClockIcon : SlashIcon;
  const text = pinStateWords(pin, who);
  const title = mixed ? `${text.description} Its references do not all carry the same pin.` : text.description;
  const pill = (
    <span className={`pin pin-${pin}`} title={title} data-testid="pin-badge" data-pin={pin}>
      <Icon />
      {text.label}
    </span>
  );
  if (!mixed) return pill;
  return (
    <span className="pin-stack">
      {pill}
      <span className="pin-mixed" data-testid="pin-mixed" title={title}>
        mixed pins
      </span>
    </span>
  );
}
