// What `holdfast pin` and `holdfast unpin` print of a pin plan, previewed (--dry-run) or applied.
import type { PinPlan } from '../shared/domain/pins';
import { describeChange, type Cli } from './context';
import { terminalSafe as safe } from './format';

export function printPlan(cli: Cli, plan: PinPlan, applied: boolean): void {
  // On a terminal, fitted to it: references elided in the middle, long lines wrapped.
  const screen = cli.screen();
  const verb = plan.action === 'pin' ? 'made durable' : 'released';
  if (plan.changes.length === 0) cli.io.out('nothing to change');
  for (const c of plan.changes) {
    const head = `${applied ? verb : 'would be ' + verb}: `;
    cli.io.out(screen.text(`${head}${screen.ref(safe(c.ref), head.length)}\n${describeChange(c)}`));
  }
  for (const u of plan.unchanged) cli.io.out(screen.text(`unchanged: ${screen.ref(safe(u.ref), 40)} (${safe(u.reason)})`));
  for (const w of plan.warnings ?? []) cli.io.err(screen.text(`warning: ${plan.node}: ${safe(w)}`));
}
