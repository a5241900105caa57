import { fateText } from '../model/text';
import type { RefFateKind } from '../model/images';
import { AlertIcon, ArrowRightIcon, ShieldIcon, SlashIcon } from './icons';

/**
 * What the next start of the node's distro (`who`: "k3s", "RKE2") does to the pin, as icon +
 * text (never colour alone). The reason sentence is the tooltip; the row's details panel shows it
 * in full.
 */
export function FateBadge({ fate, reason, who }: { fate: RefFateKind; reason?: string; who: string }) {
  const Icon = fate === 'lose' ? AlertIcon : fate === 'kept' ? ShieldIcon : fate === 'gain' ? ArrowRightIcon : SlashIcon;
  const text = fateText(who)[fate];
  return (
    <span className={`fate fate-${fate}`} title={reason || text.description} data-testid="fate" data-fate={fate}>
      <Icon />
      {text.label}
    </span>
  );
}
