// holdfast node add | ls | edit | rm | import-ssh-config | add-bulk — the inventory of nodes.
// One file per subcommand under commands/node/; this one only wires them, in the order help lists them.
import type { Command } from 'commander';
import type { Cli } from '../context';
import { helpAfter } from '../help';
import { registerNodeAdd } from './node/add';
import { registerNodeImportCommands } from './node/bulk';
import { registerNodeEdit } from './node/edit';
import { registerNodeLs } from './node/ls';
import { registerNodeRm } from './node/rm';

export function registerNodeCommands(program: Command, cli: Cli): void {
  const node = program
    .command('node')
    .description('manage the nodes Holdfast knows about')
    .addHelpText(
      'after',
      helpAfter([
        'holdfast node add lab1-n1 --host 127.0.0.1 --port 2201 \\',
        '  --identity /tmp/hf-lab/id_ed25519 --known-hosts /tmp/hf-lab/known_hosts',
        'holdfast node ls --group lab1',
        'holdfast node edit lab1-n1 --group lab1',
        "holdfast node import-ssh-config 'lab1-*' --dry-run",
        'holdfast node rm lab1-n3',
        'holdfast node add --help',
      ]),
    );
  registerNodeAdd(node, cli);
  registerNodeLs(node, cli);
  registerNodeEdit(node, cli);
  registerNodeImportCommands(node, cli);
  registerNodeRm(node, cli);
}
