import type { PinState } from '../../shared/domain';
import { PIN_TEXT } from '../model';
import { ClockIcon, ShieldIcon, SlashIcon } from './icons';

/** Pin state as colour + icon + text (never colour alone). */
export function PinBadge({ pin, mixed }: { pin: PinState; mixed?: boolean }) {
  const Icon = pin === 'durable' ? ShieldIcon : pin === 'k3s' ? ClockIcon : SlashIcon;
  const text = PIN_TEXT[pin];
  const title = mixed ? `${text.description} Its references do not all carry the same pin.` : text.description;
  return (
    <span className={`pin pin-${pin}`} title={title} data-testid="pin-badge" data-pin={pin}>
      <Icon />
      {text.label}
      {mixed ? <span className="pin-mixed">mixed</span> : null}
    </span>
  );
}
