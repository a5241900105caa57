// holdfast node ls — the configured nodes, read from nodes.json without loading the service.
import type { Command } from 'commander';
import { commandLine } from '../../commandLine';
import type { Cli } from '../../context';
import type { ColumnFit } from '../../fit';
import { helpAfter } from '../../help';
import { JSON_HELP, printedAsJson } from '../../output';

/** How `node ls` gives way on a narrow terminal: paths are elided, the socket (mostly k3s's default) hidden first. */
const NODE_COLUMNS: readonly ColumnFit[] = [
  {}, // NAME: what every command is given, never shortened
  { kind: 'text', min: 8, hide: 3 },
  { kind: 'ref', min: 15 },
  { hide: 2 },
  { kind: 'ref', min: 20, want: 40, hide: 1, extra: true },
  { kind: 'ref', min: 20, want: 40 },
];

interface LsOptions {
  group?: string;
}

export function registerNodeLs(node: Command, cli: Cli): void {
  node
    .command('ls')
    .description('list configured nodes')
    .option('--json', JSON_HELP)
    .option('--group <group>', 'only the nodes of this group')
    .addHelpText('after', helpAfter(['holdfast node ls', 'holdfast node ls --group lab1', "holdfast node ls --json | jq -r '.[].name'"]))
    .action((o: LsOptions) => listNodes(cli, o));
}

async function listNodes(cli: Cli, o: LsOptions): Promise<void> {
  // nodes.list reads nodes.json and nothing else: read here, without loading the service
  // (and the core that reaches nodes under it), so the command run in loops starts fast.
  const all = await cli.store().list();
  const nodes = o.group ? all.filter((n) => n.group === o.group) : all;
  if (printedAsJson(cli, nodes)) return;
  if (nodes.length === 0) {
    return cli.io.out(o.group && all.length ? `no node in group "${o.group}"` : 'no nodes yet: add one with `holdfast node add NAME --host HOST`');
  }
  cli.io.out(
    cli.screen().table(
      ['NAME', 'GROUP', 'ADDRESS', 'USER', 'SOCKET', 'IMAGES DIR'],
      nodes.map((n) => [n.name, n.group ?? '-', `${n.host}:${n.port}`, n.user, n.socket, n.imagesDir]),
      NODE_COLUMNS,
    ),
  );
  // One machine configured twice (the same host key on record for both): said, with the way out.
  const [{ recordedHostKeys }, { sameMachines, sameMachineText }] = await Promise.all([import('../../../core/ssh/machineKeys'), import('../../../shared/sameMachine')]);
  for (const g of sameMachines(await recordedHostKeys(nodes))) {
    cli.io.out(cli.screen().text(`warning: ${sameMachineText(g)}: inspect counts it once; to keep one entry: ${commandLine(['node', 'rm', g.nodes.at(-1)!])}`));
  }
}
