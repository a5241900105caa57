// `--local` on the commands that read a node: Holdfast runs on the node itself (as root) and
// reads this machine's containerd socket and images dir directly, no SSH and no node list
// (core/node/localSession.ts). --socket, --images-dir and --namespace replace what the distro
// profile and the probe would give.
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError } from '../core/errors';
import type { Cli } from './context';

export interface LocalFlags {
  local?: boolean;
  name?: string;
  socket?: string;
  imagesDir?: string;
  namespace?: string;
}

/** The flags, on a command that reads a node. */
export function withLocalOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'this machine, as root: its containerd socket and images dir read directly, no SSH')
    .option('--name <name>', 'with --local: this node\'s name in the audit log (default: the hostname)')
    .option('--socket <path>', 'with --local: containerd\'s socket (default /run/k3s/containerd/containerd.sock)')
    .option('--images-dir <dir>', 'with --local: the images dir (default: where k3s/RKE2 config puts it)')
    .option('--namespace <ns>', 'with --local: containerd namespace (default k8s.io)');
}

/**
 * With --local: puts the command's service on this machine and returns its node's name (its
 * hostname); null without. `names`: the nodes the command was also given (refused with --local).
 */
export async function localNodeOf(cli: Cli, o: LocalFlags, names: readonly string[] = []): Promise<string | null> {
  if (!o.local) {
    const stray = o.name !== undefined ? '--name' : o.socket !== undefined ? '--socket' : o.imagesDir !== undefined ? '--images-dir' : o.namespace !== undefined ? '--namespace' : null;
    if (stray) throw new HoldfastError('INVALID_INPUT', `${stray} goes with --local`, { hint: 'A configured node keeps its own settings: change them with `holdfast node edit`.' });
    return null;
  }
  if (names.length) throw new HoldfastError('INVALID_INPUT', '--local reads this machine: name no nodes with it');
  const def = await cli.useLocal({
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.socket !== undefined ? { socket: path.resolve(o.socket) } : {}),
    ...(o.imagesDir !== undefined ? { imagesDir: path.resolve(o.imagesDir) } : {}),
    ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
  });
  return def.name;
}

/** The node a one-node command reads: the one named, or this machine with --local; neither is refused. */
export async function namedOrLocalNode(cli: Cli, o: LocalFlags, given: string | undefined): Promise<string> {
  const name = (await localNodeOf(cli, o, given ? [given] : [])) ?? given;
  if (!name) throw new HoldfastError('INVALID_INPUT', 'name the node (or --local, on the node itself)', { hint: 'holdfast node ls lists the nodes Holdfast knows.' });
  return name;
}
