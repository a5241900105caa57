import { FATE_TEXT } from '../model/text';
import type { RefFateKind } from '../model/images';
import { AlertIcon, ArrowRightIcon, ShieldIcon, SlashIcon } from './icons';

/**
 * What the next k3s start does to the pin, as icon + text (never colour alone). The reason
 * sentence is the tooltip; the row's details panel shows it in full.
 */
export function FateBadge({ fate, reason }: { fate: RefFateKind; reason?: string }) {
  const Icon = fate === 'lose' ? AlertIcon : fate === 'kept' ? ShieldIcon : fate === 'gain' ? ArrowRightIcon : SlashIcon;
  const text = FATE_TEXT[fate];
  return (
    <span className={`fate fate-${fate}`} title={reason || text.description} data-testid="fate" data-fate={fate}>
      <Icon />
      {text.label}
    </span>
  );
}
