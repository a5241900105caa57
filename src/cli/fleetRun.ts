// One fleet run of the service (fleet.start), followed to its report in process: its fleet.node
// events count progress on stderr (a terminal only), fleet.done brings the report, and Ctrl-C is
// fleet.cancel, which still reports every node (those that had not answered as cancelled).
// `inspect` and `metrics` both run it.
import type { ArgsOf, LiveEvent } from '../shared/contract';
import { fleetInWords, type FleetReport } from '../shared/fleet';
import { onCtrlC } from './jobs';
import { remedyCommand } from './remedyText';
import type { CliService } from './service';

export interface FleetRun {
  report: FleetReport;
  /** The nodes the run covered, in its order. */
  nodes: string[];
}

export async function runFleet(cli: Pick<CliService, 'call' | 'subscribe'>, args: ArgsOf<'fleet.start'>, opts: { progress?: boolean } = {}): Promise<FleetRun> {
  const tty = opts.progress ?? Boolean(process.stderr.isTTY);
  let runId: string | undefined;
  let total = 0;
  let done = 0;
  let down = 0;
  let cancelled = false;
  const early: LiveEvent[] = [];
  let finish!: (report: FleetReport) => void;
  const finished = new Promise<FleetReport>((resolve) => (finish = resolve));
  const seen = (e: LiveEvent) => {
    if (e.type === 'fleet.node' && e.payload.runId === runId) {
      done++;
      if (!e.payload.result.reachable) down++;
      if (tty) process.stderr.write(`\r\x1b[2Kinspected ${done}/${total}${down ? ` (${down} unreachable)` : ''}`);
    } else if (e.type === 'fleet.done' && e.payload.runId === runId) finish(e.payload.report);
  };
  // Ctrl-C stops the run; its report (the nodes that had not answered: cancelled) still comes.
  const offSig = onCtrlC(() => {
    cancelled = true;
    if (runId !== undefined) void cli.call('fleet.cancel', { runId }).catch(() => undefined);
  });
  let unsubscribe = () => {};
  try {
    unsubscribe = await cli.subscribe((e) => {
      if (e.type !== 'fleet.node' && e.type !== 'fleet.done') return;
      if (runId === undefined) early.push(e);
      else seen(e);
    });
    const run = await cli.call('fleet.start', args);
    runId = run.runId;
    total = run.nodes.length;
    if (cancelled) void cli.call('fleet.cancel', { runId }).catch(() => undefined);
    for (const e of early) seen(e);
    // Every archive's reason in words: a remedy in one is its command (cli/remedyText).
    return { report: fleetInWords(await finished, remedyCommand), nodes: run.nodes };
  } finally {
    offSig();
    unsubscribe();
    if (tty) process.stderr.write('\r\x1b[2K');
  }
}
