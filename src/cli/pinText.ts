// A pin state as the text outputs print it (the images PIN column, explain's "Pin now"): the
// distro's own pin by the distro's name, "RKE2" on an RKE2 node. --json keeps the state's data
// name, k3s, whatever the distro (scripts match on it; docs/cli.md).
import type { PinState } from '../shared/domain/pins';

/** `who`: the node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName). */
export const pinStateText = (pin: PinState, who = 'k3s'): string => (pin === 'distro' ? who : pin);
