// holdfast node rm — forget a node (the node itself is not changed).
import type { Command } from 'commander';
import type { Cli } from '../../context';
import { helpAfter } from '../../help';

export function registerNodeRm(node: Command, cli: Cli): void {
  node
    .command('rm')
    .description('forget a node (the node itself is not changed)')
    .argument('<name>', 'the node to forget')
    .addHelpText('after', helpAfter(['holdfast node rm lab1-n3']))
    .action(async (name: string) => {
      const { removed } = await cli.call('nodes.remove', { name });
      cli.io.out(`removed ${removed}`);
    });
}
