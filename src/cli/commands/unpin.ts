// holdfast unpin — release durable pins, previewed with --dry-run.
import type { Command } from 'commander';
import { connectsFirstNode, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { helpAfter } from '../help';
import type { PinTarget } from '../../shared/domain/pins';
import { printPlan } from '../pinPlan';

export function registerUnpinCommand(program: Command, cli: Cli): void {
  program
    .command('unpin')
    .summary('release durable pins (kubelet may then GC them)')
    .description('Release durable pins Holdfast (or anyone) set: kubelet may then garbage-collect the image when the disk fills.')
    .argument('<node>', 'the node to unpin on')
    .argument('<refs...>', 'image references to release')
    .hook('preAction', connectsFirstNode(cli))
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', JSON_HELP)
    .addHelpText('after', helpAfter(['holdfast unpin lab1-n1 docker.io/library/nginx:1.25 --dry-run', 'holdfast unpin lab1-n1 docker.io/library/nginx:1.25']))
    .action(async (name: string, refs: string[], o) => {
      const target: PinTarget = { refs };
      const plan = await cli.call(o.dryRun ? 'pins.plan' : 'pins.apply', { node: name, action: 'unpin', target });
      if (printedAsJson(cli, plan)) return;
      printPlan(cli, plan, !o.dryRun);
    });
}
