// What `holdfast pin` and `holdfast unpin` print of a pin plan, previewed (--dry-run) or applied;
// describeChange's label lines are `holdfast log`'s too.
import type { LabelChange, PinPlan } from '../shared/domain/pins';
import { terminalSafe as safe } from './format';
import type { Screen } from './screen';

/** Where a plan prints: the command's output streams and its screen (src/cli/context.ts Cli). */
export interface PlanOutput {
  io: { out(s: string): void; err(s: string): void };
  screen(): Screen;
}

export function printPlan(cli: PlanOutput, plan: PinPlan, applied: boolean): void {
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

/** "k: before → after" lines for the labels a change touches. */
export function describeChange(c: LabelChange, indent = '    '): string {
  const keys = [...new Set([...Object.keys(c.before), ...Object.keys(c.after)])].filter((k) => c.before[k] !== c.after[k]).sort();
  const v = (s: string | undefined) => (s === undefined ? '(absent)' : safe(s));
  return keys.map((k) => `${indent}${safe(k)}: ${v(c.before[k])} → ${v(c.after[k])}`).join('\n');
}
