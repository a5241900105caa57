import type { PinState } from '../../shared/domain';
import { PIN_TEXT } from '../model/text';
import { ClockIcon, ShieldIcon, SlashIcon } from './icons';

/**
 * Pin state as colour + icon + text (never colour alone). "mixed" (the image's references do not
 * all carry the same pin) goes on a line under the pill, so the pill never outgrows its column.
 */
export function PinBadge({ pin, mixed }: { pin: PinState; mixed?: boolean }) {
  const Icon = pin === 'durable' ? ShieldIcon : pin === 'k3s' ? ClockIcon : SlashIcon;
  const text = PIN_TEXT[pin];
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
